"""Where the ranking flips with the number of epochs, computed exactly from the equations.

Every estimate equation is linear in N_ep: T(N) = a + b*N (Eq. 5.3/5.4: a = T_init + T_it1 +
(N_it-1)*T_it + T_val1 - (N_it*T_it + T_val + T_ep), b = N_it*T_it + T_val + T_ep; Eq. 5.1 alike).
Cost is price x T, piecewise linear once a billing minimum applies. Two candidates' lines cross
at most once, at N* = (a_j - a_i) / (b_i - b_j): past it the one with the smaller slope wins.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from collections.abc import Mapping, Sequence

from ..estimate.runtime import NoEstimate, estimate_runtime
from .ranking import CrossingNote, RankedRow, Ranking, RankOptions
from ..pricing import billed_seconds
from ..state import ProbeState


@dataclass(frozen=True)
class Line:
    """T(N) = a + b*N for one candidate; cost(N) = price * billed(T(N)) / 3600."""

    key: str
    label: str
    a: float
    b: float
    price: float | None = None
    billing: str = "exact"

    def runtime(self, n: float) -> float:
        return self.a + self.b * n

    def cost(self, n: float) -> float | None:
        if self.price is None:
            return None
        return self.price * billed_seconds(self.runtime(n), self.billing) / 3600


def line_for(state: ProbeState, key: str, label: str, price: float | None = None,
             billing: str = "exact", **kwargs: Any) -> Line:
    """Fit the candidate's line exactly from two evaluations of its equation."""
    t1 = estimate_runtime(state, 1, **kwargs).runtime_s
    t2 = estimate_runtime(state, 2, **kwargs).runtime_s
    b = t2 - t1
    return Line(key, label, t1 - b, b, price, billing)


@dataclass(frozen=True)
class Crossover:
    epochs: float  # where the two lines cross
    winner: str  # key of the candidate ahead for N > epochs
    loser: str
    metric: str  # "runtime" or "cost"

    def sentence(self, labels: dict[str, str]) -> str:
        n = max(1, math.ceil(self.epochs - 1e-9))
        what = "is faster than" if self.metric == "runtime" else "is cheaper than"
        unit = "epoch" if n == 1 else "epochs"
        return (f"{labels.get(self.winner, self.winner)} {what} {labels.get(self.loser, self.loser)}"
                f" from {n} {unit} on")


def runtime_crossovers(lines: list[Line], max_epochs: float = 10_000) -> list[Crossover]:
    out = []
    for i, p in enumerate(lines):
        for q in lines[i + 1:]:
            if p.b == q.b:
                continue
            n = (q.a - p.a) / (p.b - q.b)
            if 1 < n <= max_epochs:  # a crossing below one epoch flips nothing a run can see
                winner, loser = (p, q) if p.b < q.b else (q, p)
                out.append(Crossover(n, winner.key, loser.key, "runtime"))
    return sorted(out, key=lambda c: c.epochs)


def cost_crossovers(lines: list[Line], max_epochs: float = 10_000) -> list[Crossover]:
    """Cost lines are price*(a + b*N)/3600 once past any billing minimum; where a minimum bends
    a line, the crossing is found on the exact piecewise function by bisection."""
    out = []
    priced = [ln for ln in lines if ln.price is not None]
    for i, p in enumerate(priced):
        for q in priced[i + 1:]:
            pa, pb = p.price * p.a / 3600, p.price * p.b / 3600  # type: ignore[operator]
            qa, qb = q.price * q.a / 3600, q.price * q.b / 3600  # type: ignore[operator]
            if pb == qb:
                continue
            n = (qa - pa) / (pb - qb)
            if not 0 < n <= max_epochs:
                continue
            n = _refine(p, q, n)
            if n <= 1:
                continue
            winner, loser = (p, q) if pb < qb else (q, p)
            out.append(Crossover(n, winner.key, loser.key, "cost"))
    return sorted(out, key=lambda c: c.epochs)


def _refine(p: Line, q: Line, guess: float) -> float:
    def diff(n: float) -> float:
        return (p.cost(n) or 0.0) - (q.cost(n) or 0.0)

    lo, hi = max(1e-6, guess / 2), guess * 2 + 1
    if diff(lo) * diff(hi) > 0:
        return guess  # billing minimum does not move this crossing
    for _ in range(60):
        mid = (lo + hi) / 2
        if diff(lo) * diff(mid) <= 0:
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2


def crossovers_for(key: str, crossings: list[Crossover], labels: dict[str, str]) -> list[CrossingNote]:
    """The crossings that involve one candidate (rank --json carries them)."""
    out = []
    for c in crossings:
        if key not in (c.winner, c.loser):
            continue
        other = c.loser if c.winner == key else c.winner
        out.append(CrossingNote(c.metric, round(c.epochs, 3), labels.get(other, other),
                                c.winner == key, c.sentence(labels)))
    return out


def lines_for(rows: Sequence[RankedRow], states: Mapping[str, ProbeState],
              options: RankOptions) -> list[Line]:
    """Each ranked row's line (runtime and cost against N_ep), for crossovers and charts."""
    lines = []
    for r in rows:
        state = states.get(r.key)
        if state is None:
            continue
        try:
            lines.append(line_for(state, r.key, r.name, r.price_per_hour, r.billing,
                                  use_validation=options.use_validation,
                                  equation=options.equation, statistic=options.statistic))
        except NoEstimate:
            continue
    return lines


MAX_CROSSOVER_ROWS = 50  # pairs grow as n^2; who overtakes whom matters among the leaders


def add_crossovers(ranking: Ranking, states: Mapping[str, ProbeState]) -> None:
    """Name, on each row, where it trades places with another as N_ep grows (per workload);
    among the first MAX_CROSSOVER_ROWS rows of each ranking."""
    for rows in ranking.groups.values():
        lines = lines_for(rows[:MAX_CROSSOVER_ROWS], states, ranking.options)
        labels = {ln.key: ln.label for ln in lines}
        crossings = runtime_crossovers(lines) + cost_crossovers(lines)
        for r in rows:
            r.crossovers = crossovers_for(r.key, crossings, labels)
