"""The constants of decisions between two runs (decisions.py's ``PairConstants``), measured on
every two recorded runs of one program (calibrate_runs.py): how their errors move together
(rho), the scale that makes P(ahead) calibrated (kappa), and the claim threshold."""

from __future__ import annotations

import itertools
import math
import statistics
from dataclasses import dataclass, replace

from .bounds import conformal
from .runs import Result
from ..rank.decisions import BOUND_Z, PairConstants, log_scales, p_ahead

PRICE_PER_CORE_HOUR = 0.05  # made-up but proportional: a 2-core host costs twice a 1-core one
RHO_RANGE = (-0.5, 0.95)  # a measured correlation is kept inside this (few pairs: not +-1)
# a claim at worse than 4-to-1 odds is not a decision, whatever the recorded pairs would allow
THRESHOLD_FLOOR = 0.8
CLAIMS_WRONG = 0.05  # the claims made on the recorded pairs are wrong at most 1 time in 20


@dataclass
class Decision:
    """Which of two runs of one program is ahead, by time or by cost, as P(ahead) says it."""

    program: str
    view: str  # time | cost
    lead: Result  # the one estimated ahead
    other: Result
    p: float
    truth_ratio: float  # other's real value / lead's (> 1: the lead really is ahead)
    threshold: float = 0.95  # the pair constants' threshold: at or above it, decided

    @property
    def decided(self) -> bool:
        return self.p >= self.threshold

    @property
    def differs(self) -> bool:
        return max(self.truth_ratio, 1 / self.truth_ratio) >= 1.1

    @property
    def wrong(self) -> bool:
        return self.truth_ratio < 1.0


def price(r: Result) -> float:
    """A run's price per hour: per core it can use."""
    return PRICE_PER_CORE_HOUR * r.pair.cores


def values(r: Result, view: str) -> tuple[float, float, float]:
    """(estimate, low, high) in seconds (``time``) or in money (``cost``)."""
    k = price(r) / 3600 if view == "cost" else 1.0
    return r.est * k, r.low * k, r.high * k


def decisions(results: list[Result], pc: PairConstants) -> list[Decision]:
    """Every two runs a user would compare - one program in one corpus (a corpus's runs of a
    program share its data set; the long jobs run the same scripts on far more data) - by time
    and by cost, with P(ahead) from the two estimates jointly."""
    out = []
    by_program: dict[tuple[str, str], list[Result]] = {}
    for r in results:
        by_program.setdefault((r.pair.corpus, r.pair.program), []).append(r)
    for (_, program), rs in by_program.items():
        for a, b in itertools.combinations(rs, 2):
            for view in ("time", "cost"):
                lead, other = (a, b) if values(a, view)[0] <= values(b, view)[0] else (b, a)
                p = p_ahead(values(lead, view), values(other, view),
                            same_host=lead.pair.cores == other.pair.cores, pc=pc)
                k_l = price(lead) if view == "cost" else 1.0
                k_o = price(other) if view == "cost" else 1.0
                out.append(Decision(program, view, lead, other, p,
                                    other.pair.truth * k_o / (lead.pair.truth * k_l),
                                    pc.threshold))
    return out


def _sides(lead: Result, other: Result) -> tuple[float, float]:
    """The scales p_ahead uses: the lead's upper side, the other's lower side."""
    return (log_scales(lead.est, lead.low, lead.high)[1],
            log_scales(other.est, other.low, other.high)[0])


def standardised_error(r: Result) -> float:
    """log(truth / estimate) in units of the bound's side the truth lies on."""
    below, above = log_scales(r.est, r.low, r.high)
    scale = above if r.log_err > 0 else below
    return r.log_err / scale if scale > 0 else 0.0


def correlation(xy: list[tuple[float, float]]) -> float:
    """Pearson's r of the pairs, kept inside RHO_RANGE; 0 on fewer than 6 or no spread."""
    if len(xy) < 6:
        return 0.0
    xs, ys = [a for a, _ in xy], [b for _, b in xy]
    try:
        rho = statistics.correlation(xs, ys)
    except statistics.StatisticsError:
        return 0.0
    return min(max(rho, RHO_RANGE[0]), RHO_RANGE[1])


def fit_rho(made: list[Decision]) -> tuple[float, float]:
    """The correlation of two runs' standardised errors, same host kind / other host kinds
    (each pair counted both ways round)."""
    same: list[tuple[float, float]] = []
    other: list[tuple[float, float]] = []
    for d in made:
        za, zb = standardised_error(d.lead), standardised_error(d.other)
        (same if d.lead.pair.cores == d.other.pair.cores else other).extend([(za, zb), (zb, za)])
    return correlation(same), correlation(other)


def fit_kappa(made: list[Decision], rho_same: float, rho_other: float) -> float:
    """The scale on the difference's spread at which its 90 % interval holds the real ratio of
    90 % of these pairs (split conformal on each pair's error in units of its spread)."""
    zs = []
    for d in made:
        s_a, s_b = _sides(d.lead, d.other)
        rho = rho_same if d.lead.pair.cores == d.other.pair.cores else rho_other
        s_d = math.sqrt(max(s_a * s_a + s_b * s_b - 2 * rho * s_a * s_b, 1e-12))
        est_ratio = d.other.est / d.lead.est
        zs.append(abs(math.log(d.truth_ratio / est_ratio)) / s_d)
    return conformal(zs) / BOUND_Z if zs else 1.0


def fit_pairs(results: list[Result]) -> PairConstants:
    """rho: the correlation of two runs' standardised errors (one program, same / other host
    kind), measured; kappa: the scale on the difference's spread at which its 90 % interval
    holds the real ratio of 90 % of these pairs (split conformal, as the bounds' q) - so that
    P(ahead) means what it says, not merely that few claims were wrong on easy pairs; the claim
    threshold on the pairs as P then gives them."""
    made = [d for d in decisions(results, PairConstants(kappa=1.0)) if d.view == "time"]
    rho_same, rho_other = fit_rho(made)
    kappa = fit_kappa(made, rho_same, rho_other)
    pc = PairConstants(rho_same_host=round(rho_same, 3), rho_other_host=round(rho_other, 3),
                       kappa=round(kappa, 3))
    return replace(pc, threshold=claim_threshold(decisions(results, pc)))


def claim_threshold(made: list[Decision], target: float = CLAIMS_WRONG) -> float:
    """The lowest P at or above which a claim is made such that, on these pairs, claims are
    wrong at most ``target`` of the time - by time and by cost together, counted as split
    conformal does, (wrong + 1) / (claims + 1) - and never below THRESHOLD_FLOOR. P itself is
    calibrated (kappa): a claim at 85 % is wrong about 15 % of the time; the claims made are
    right 95 % of the time because most stand far above the threshold."""
    for step in range(round(THRESHOLD_FLOOR * 100), 100):
        t = step / 100
        claims = [d.wrong for d in made if d.p >= t]
        if (sum(claims) + 1) / (len(claims) + 1) <= target:
            return t
    return 0.99
