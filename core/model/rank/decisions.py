"""What a ranking may claim: Pareto optimality, and how sure it is that the leader is ahead."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..estimate.bounds import load_pair_constants
from ..rows import RankedRow


def is_pareto(times: Sequence[float], costs: Sequence[float | None]) -> list[bool]:
    """True where no other row is at least as good on both and better on one. No cost: False.

    O(n log n): sorted by time, a row is dominated when an earlier time has a cost no higher,
    or the same time has a lower cost (10 000 rows rank in milliseconds, not seconds)."""
    valid = [i for i, (t, c) in enumerate(zip(times, costs))
             if c is not None and not math.isnan(c) and not math.isnan(t)]
    out = [False] * len(times)
    order = sorted(valid, key=lambda i: (times[i], costs[i]))
    best_before = math.inf  # lowest cost among strictly shorter times
    k = 0
    while k < len(order):
        t = times[order[k]]
        group = []
        while k < len(order) and times[order[k]] == t:
            group.append(order[k])
            k += 1
        lowest = costs[group[0]]  # sorted by cost within the same time
        assert lowest is not None
        for i in group:
            c = costs[i]
            assert c is not None
            out[i] = not (best_before <= c or lowest < c)
        best_before = min(best_before, lowest)
    return out


# ---- which is faster, which is cheaper: decided from the difference ---------------------------
#
# Each row's bounds are honest on their own, but two rows of one ranking share most of what is
# unknown - the same program (start-up, its epoch-boundary mechanism, post-training work), often
# the same host kind - so the uncertainty of their *ratio* is far smaller than the two widths
# added. In log terms the leader A and another row B have
#
#     log(T_B / T_A) = log(est_B / est_A) + (e_B - e_A),   e_X = log(T_X / est_X),
#
# and e_X has the scale its bounds give it (s_X = log(high/est) / Z on the side that hurts A's
# claim: A slower than said, B faster). The spread of the difference is
#
#     s_d = kappa * sqrt(s_A^2 + s_B^2 - 2 rho s_A s_B)
#
# where rho - how strongly the two errors move together - is the correlation of the standardised
# errors measured on pairs of real runs of one program (on one host kind, and across host kinds),
# and kappa is set on those pairs so that the difference's 90 % interval covers 90 % of them
# (split conformal). P(A ahead of B) = Phi(log(est_B/est_A) / s_d). A row is undecided against
# the leader while that is below the claim threshold (calibration.json: the lowest P, never under
# 0.80, at which the claims on the recorded pairs were wrong at most 1 time in 20;
# benchmarks/accuracy.py reports how often on programs never calibrated on).

BOUND_Z = 1.6449  # one side of a 90 % two-sided interval, in standard deviations


@dataclass(frozen=True)
class PairConstants:
    """Measured on pairs of recorded runs (calibrate_pairs.py; shipped in calibration.json)."""

    rho_same_host: float = 0.0  # correlation of two probes' errors, same instance kind
    rho_other_host: float = 0.0  # ... different instance kinds
    kappa: float = 1.0  # scale on the spread of the difference (conformal, 90 %)
    threshold: float = 0.95  # below this P(ahead), a row is undecided (shipped: calibration.json)

    @classmethod
    def load(cls) -> PairConstants:
        return _pair_constants()


@lru_cache(maxsize=1)
def _pair_constants() -> PairConstants:
    values = load_pair_constants()
    return PairConstants(**{k: v for k, v in values.items()
                            if k in PairConstants.__dataclass_fields__})


def log_scales(est: float, low: float, high: float) -> tuple[float, float]:
    """(below, above): how far the truth may lie under / over the estimate, in log units per
    standard deviation, from the row's own bounds."""
    if est <= 0:
        return math.inf, math.inf
    below = math.log(est / low) / BOUND_Z if low > 0 else math.inf
    above = math.log(high / est) / BOUND_Z if high > 0 else math.inf
    return below, above


def spread_of_difference(s_a: float, s_b: float, rho: float, kappa: float) -> float:
    var = s_a * s_a + s_b * s_b - 2 * rho * s_a * s_b
    return kappa * math.sqrt(max(var, 0.0))


def p_ahead(a: tuple[float, float, float], b: tuple[float, float, float], same_host: bool,
            pc: PairConstants | None = None) -> float:
    """P(A's real value is below B's), from each one's (estimate, low, high)."""
    pc = pc or PairConstants.load()
    est_a, low_a, high_a = a
    est_b, low_b, high_b = b
    if est_a <= 0 or est_b <= 0:
        return 0.5
    gap = math.log(est_b / est_a)
    # the side of each error that makes the gap smaller than it looks
    s_a = log_scales(est_a, low_a, high_a)[1 if gap >= 0 else 0]
    s_b = log_scales(est_b, low_b, high_b)[0 if gap >= 0 else 1]
    rho = pc.rho_same_host if same_host else pc.rho_other_host
    s_d = spread_of_difference(s_a, s_b, rho, pc.kappa)
    if math.isinf(s_d) or math.isnan(s_d):
        return 0.5
    if s_d <= 0:
        return 1.0 if gap > 0 else 0.0 if gap < 0 else 0.5
    return 0.5 * math.erfc(-gap / s_d / math.sqrt(2))


def fmt_p(p: float) -> str:
    """A probability as a user reads it: never a flat 100 % or 0 %."""
    if p >= 0.995:
        return ">99 %"
    if p <= 0.005:
        return "<1 %"
    return f"{p * 100:.0f} %"


def p_of(r: RankedRow, by: str) -> float | None:
    """P(the leader beats this row) in the view: by time or by cost; None for the leader, a row
    without the figure, and the weighted view."""
    return r.p_faster if by == "time" else r.p_cheaper if by == "cost" else None


def p_in_view(r: RankedRow, by: str) -> str:
    """The table's P cell, in 4 characters ('92%', '>99%'; blank where p_of is None)."""
    p = p_of(r, by)
    if p is None:
        return ""
    return ">99%" if p >= 0.995 else f"{p:.0%}"


def _values(r: RankedRow, by: str) -> tuple[float, float, float] | None:
    if by == "time":
        return r.runtime_s, r.runtime_low_s, r.runtime_high_s
    if r.cost_usd is None or r.cost_low_usd is None or r.cost_high_usd is None:
        return None
    return r.cost_usd, r.cost_low_usd, r.cost_high_usd


def p_leader_ahead(lead: RankedRow, r: RankedRow, by: str,
                   pc: PairConstants | None = None) -> float | None:
    """P(the leader is faster / cheaper than r); None where a cost is unknown."""
    a, b = _values(lead, by), _values(r, by)
    if a is None or b is None:
        return None
    return p_ahead(a, b, same_host=bool(lead.instance) and lead.instance == r.instance, pc=pc)


def basis(lead: RankedRow, r: RankedRow, by: str, pc: PairConstants | None = None) -> str:
    """What P(leader ahead) rests on, in words (the detail view)."""
    pc = pc or PairConstants.load()
    a, b = _values(lead, by), _values(r, by)
    if a is None or b is None:
        return ""
    same = bool(lead.instance) and lead.instance == r.instance
    s_a = log_scales(*a)[1]
    s_b = log_scales(*b)[0]
    rho = pc.rho_same_host if same else pc.rho_other_host
    s_d = spread_of_difference(s_a, s_b, rho, pc.kappa)
    ratio = b[0] / a[0] if a[0] > 0 else math.inf
    spread = f"±{math.expm1(s_d):.0%}" if math.isfinite(s_d) else "unknown"
    return (f"{lead.name} estimated x{ratio:.2f} {'faster' if by == 'time' else 'cheaper'}; the "
            f"ratio's spread {spread} (one s.d.: each probe's own bounds, errors moving together "
            f"by rho {rho:.2f} - measured on recorded runs of one program on "
            f"{'the same' if same else 'other'} host kinds)")


def mark_undecided(ordered: list[RankedRow], by: str, pc: PairConstants | None = None) -> None:
    """P(leader ahead) for every other row, by time and by cost; rows the view's probability
    leaves below the threshold are undecided (and so is the leader then)."""
    pc = pc or PairConstants.load()
    for r in ordered:
        r.undecided = False
        r.p_faster = r.p_cheaper = None
        r.decision_basis = ""
    if len(ordered) < 2:
        return
    lead = ordered[0]
    for r in ordered[1:]:
        r.p_faster = p_leader_ahead(lead, r, "time", pc)
        r.p_cheaper = p_leader_ahead(lead, r, "cost", pc)
        if by == "weighted":
            continue
        p = p_of(r, by)
        r.decision_basis = basis(lead, r, by, pc)
        if p is not None and p < pc.threshold:
            r.undecided = lead.undecided = True


def verdict(rows: Sequence[RankedRow], by: str, pc: PairConstants | None = None,
            running: int | None = None) -> str:
    """One line: the winner and how sure, or why there is none yet. ``running``: probes not yet
    ended (a live board knows; else the rows' marks tell)."""
    pc = pc or PairConstants.load()
    if by == "weighted" or not rows:
        return ""
    if running is None:
        running = sum(r.mark == "…" for r in rows)
    still = f" · {running} probe{'s' if running != 1 else ''} still running" if running else ""
    word = "fastest" if by == "time" else "cheapest"
    lead = rows[0]
    if len(rows) == 1:
        return (f"only {lead.name} has an estimate so far{still}" if running
                else f"{lead.name} is the only candidate")
    probs = [(p, r) for r in rows[1:]
             if (p := p_of(r, by)) is not None]
    if not probs:
        return "no prices: cannot rank by cost" if by == "cost" else ""
    p, nearest = min(probs, key=lambda pr: pr[0])
    if p >= pc.threshold:
        line = f"{lead.name} is {word}: {fmt_p(p)} against {nearest.name}"
    else:
        line = f"undecided: {fmt_p(p)} that {lead.name} beats {nearest.name}"
    return line + still


def decision_line(lead: RankedRow, r: RankedRow, by: str) -> str | None:
    """'g5 b256 is faster than g5 b64: 99 %' or 'g5 b128 vs g5 b256: 70 % - undecided'."""
    p = p_of(r, by)
    if p is None:
        return None
    word = "faster" if by == "time" else "cheaper"
    if r.undecided:
        return f"{lead.name} vs {r.name}: {fmt_p(p)} that {lead.name} is {word} - undecided"
    return f"{lead.name} is {word} than {r.name}: {fmt_p(p)}"


def undecided_pairs(rows: Sequence[RankedRow], by: str = "time") -> list[str]:
    """One line for the leader and each row it cannot yet be told from (by probability)."""
    if not rows or not rows[0].undecided:
        return []
    return [line for r in rows[1:] if r.undecided
            for line in [decision_line(rows[0], r, by)] if line is not None]


def decision_lines(rows: Sequence[RankedRow], by: str = "time", limit: int = 10) -> list[str]:
    """The leader against each other row, in words, nearest contenders first."""
    if len(rows) < 2:
        return []
    out = [decision_line(rows[0], r, by) for r in rows[1:limit + 1]]
    return [line for line in out if line is not None]
