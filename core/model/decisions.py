"""What a ranking may claim: Pareto optimality, and where the bounds do not settle the order."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .rows import RankedRow


def is_pareto(times: Sequence[float], costs: Sequence[float | None]) -> list[bool]:
    """True where no other row is at least as good on both and better on one. No cost: False."""
    out = []
    pts = list(zip(times, costs))
    for i, (t, c) in enumerate(pts):
        if c is None or math.isnan(c) or math.isnan(t):
            out.append(False)
            continue
        dominated = False
        for j, (t2, c2) in enumerate(pts):
            if j == i or c2 is None or math.isnan(c2):
                continue
            if t2 <= t and c2 <= c and (t2 < t or c2 < c):
                dominated = True
                break
        out.append(not dominated)
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
