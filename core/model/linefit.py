"""A straight line through measured (size, time) points, where neither term may be negative."""

from __future__ import annotations


def line_fit(points: list[tuple[float, float]]) -> tuple[float, float]:
    """(a, b) of time = a + b * size by least squares with a >= 0 and b >= 0: a fixed cost and a
    per-unit cost. Where the free line's intercept would be negative, the line through the
    origin (the per-unit cost alone); where its slope would be, the mean time (the fixed cost
    alone) - never the free slope with its intercept cut to zero, a line above every point
    (validation passes of 5 and 10 batches, 0.28 s and 0.68 s: 0.082 s a batch, where each
    pass's own was 0.055 and 0.068 s)."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    b = sum((x - mx) * (y - my) for x, y in points) / sxx if sxx > 0 else 0.0
    if b <= 0:
        return max(0.0, my), 0.0
    if my - b * mx >= 0:
        return my - b * mx, b
    sq = sum(x * x for x, _ in points)
    return 0.0, max(0.0, sum(x * y for x, y in points) / sq) if sq > 0 else 0.0
