"""What a ranking may claim: Pareto optimality, and where the bounds do not settle the order."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .rows import RankedRow


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


def _interval(r: RankedRow, by: str) -> tuple[float, float] | None:
    if by == "time":
        return r.runtime_low_s, r.runtime_high_s
    if r.cost_low_usd is None or r.cost_high_usd is None:
        return None
    return r.cost_low_usd, r.cost_high_usd


def mark_undecided(ordered: list[RankedRow], by: str) -> None:
    """Rows whose interval overlaps the leader's: which of them is best is not known yet."""
    for r in ordered:
        r.undecided = False
    if len(ordered) < 2 or by == "weighted":
        return
    lead = _interval(ordered[0], by)
    if lead is None:
        return
    for r in ordered[1:]:
        iv = _interval(r, by)
        if iv is not None and iv[0] <= lead[1]:
            r.undecided = ordered[0].undecided = True


def undecided_pairs(rows: Sequence[RankedRow]) -> list[str]:
    """'b256 vs b512 undecided' lines for the leader and each row it cannot be told from."""
    if not rows or not rows[0].undecided:
        return []
    return [f"{rows[0].name} vs {r.name} undecided (bounds overlap)" for r in rows[1:]
            if r.undecided]
