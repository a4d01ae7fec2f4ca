"""Steady-state step-time statistics with confidence intervals. Stdlib only.

Shared by the probe agent (adaptive stopping on the host) and core.model (estimates on the
client), so both sides agree on what "steady state" and "within 2 %" mean.

Why a trimmed mean by default: the estimate multiplies the steady step time by thousands of
steps, so what matters is the *mean* cost of a step over an epoch, and occasional slow steps
(GC, a prefetch hiccup) do belong in that mean. A plain mean over a 20-step probe is at the mercy
of one such step, and the median systematically drops them. The 10 %-trimmed mean keeps most of
their weight while one outlier cannot move it far; benchmarks/RESULTS.md has the comparison.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence

Z95 = 1.959963984540054
STATISTICS = ("trimmed", "mean", "median", "second")
DEFAULT_STATISTIC = "trimmed"
TRIM = 0.1
LARGE = 5000  # above this many steps, use numpy's O(n) selection when it is there


def t_quantile_975(dof: float) -> float:
    """Two-sided 95 % Student-t critical value (Cornish-Fisher expansion; <0.3 % off at dof >= 3)."""
    if dof <= 0:
        return math.inf
    if dof < 3:
        return {1: 12.706, 2: 4.303}.get(int(dof), 4.303)
    z = Z95
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    return z + g1 / dof + g2 / dof**2 + g3 / dof**3


class StepSeries:
    """Steady-state step times, appended in O(1); statistics computed on demand and cached."""

    __slots__ = ("values", "n", "_sum", "_sumsq", "_sorted", "_cache")

    def __init__(self) -> None:
        self.values = array("d")
        self.n = 0
        self._sum = 0.0
        self._sumsq = 0.0
        self._sorted: list[float] | None = None
        self._cache: dict[str, tuple[float, float, float]] = {}

    def add(self, dt: float) -> None:
        self.values.append(dt)
        self.n += 1
        self._sum += dt
        self._sumsq += dt * dt
        if self._cache:
            self._cache.clear()
        self._sorted = None

    def take_off(self, seconds: float) -> None:
        """Every step ``seconds`` shorter (never below a tenth of itself): time that was
        measured inside the steps but is not the program's (the agent's own hook)."""
        self.values = array("d", (max(v - seconds, 0.1 * v) for v in self.values))
        self._sum = math.fsum(self.values)
        self._sumsq = math.fsum(v * v for v in self.values)
        self._cache.clear()
        self._sorted = None

    def _sorted_values(self) -> list[float]:
        if self._sorted is None:
            self._sorted = sorted(self.values)
        return self._sorted

    def mean(self) -> float:
        return self._sum / self.n if self.n else math.nan

    def total(self) -> float:
        return self._sum

    def interval(self, statistic: str = DEFAULT_STATISTIC) -> tuple[float, float, float]:
        """(estimate, low, high) of the steady step time, 95 % confidence."""
        cached = self._cache.get(statistic)
        if cached is not None:
            return cached
        result = _interval(self, statistic)
        self._cache[statistic] = result
        return result

    def block_interval(self, k: int) -> tuple[float, float, float] | None:
        """``block_interval`` over these steps, cached as the other statistics are (the live
        panel asks for the step time at every refresh)."""
        key = f"block{k}"
        cached = self._cache.get(key)
        if cached is None:
            cached = block_interval(self.values, k) or (math.nan, math.nan, math.nan)
            self._cache[key] = cached
        return None if math.isnan(cached[0]) else cached

    def wander(self, stretches: int = 4) -> float | None:
        """How far the step time drifts while the probe watches: the s.d. of the means of
        ``stretches`` consecutive stretches of steps, less what the steps' own scatter explains,
        relative to the mean. A host that shares its cores drifts (5-25 % here); one that has
        them to itself barely (1-3 %). None with fewer than 8 steps a stretch."""
        n = self.n // stretches
        if n < 8 or stretches < 2:
            return None
        cached = self._cache.get(f"wander{stretches}")
        if cached is not None:
            return cached[0]
        vals = self.values
        means = [sum(vals[i * n:(i + 1) * n]) / n for i in range(stretches)]
        m = sum(means) / stretches
        spread = sum((x - m) ** 2 for x in means) / (stretches - 1)
        total = self.n
        mean_all = self._sum / total
        scatter = max(0.0, (self._sumsq - total * mean_all * mean_all) / (total - 1))
        slow = max(0.0, spread - scatter / n)
        result = math.sqrt(slow) / m if m > 0 else 0.0
        self._cache[f"wander{stretches}"] = (result, result, result)
        return result

    def relative_half_width(self, statistic: str = DEFAULT_STATISTIC) -> float:
        est, low, high = self.interval(statistic)
        if not est or math.isnan(est) or math.isinf(high):
            return math.inf
        return (high - low) / 2 / est


def _interval(series: StepSeries, statistic: str) -> tuple[float, float, float]:
    n = series.n
    if n == 0:
        return (math.nan, math.nan, math.nan)
    if statistic == "second":
        v = series.values[0]
        return (v, v, v) if n == 1 else (v, min(series.values), max(series.values))
    if n == 1:
        v = series.values[0]
        return (v, 0.0, math.inf)
    if statistic == "mean":
        mean = series.mean()
        var = max(0.0, (series._sumsq - n * mean * mean) / (n - 1))
        half = t_quantile_975(n - 1) * math.sqrt(var / n)
        return (mean, max(0.0, mean - half), mean + half)
    if statistic == "trimmed" and n > LARGE:
        fast = trimmed_interval_large(series.values, TRIM)
        if fast is not None:
            return fast
    xs = series._sorted_values()
    if statistic == "median":
        return median_interval(xs)
    if statistic == "trimmed":
        return trimmed_interval(xs, TRIM)
    raise ValueError(f"unknown statistic {statistic!r}; one of {', '.join(STATISTICS)}")


def block_interval(values: Sequence[float], k: int) -> tuple[float, float, float] | None:
    """The trimmed mean step time over blocks of ``k`` consecutive steps, each block's mean one
    value: work the program does every ``k`` steps (a plot every 5) falls once in every block,
    so trimming drops a block that held an outlier, never the periodic work itself - a trimmed
    mean over the steps dropped half of it where it came every 5th step (10 % trimmed off the
    top, 20 % of the steps slow). None with fewer than three blocks."""
    n = len(values) // k if k > 1 else 0
    if n < 3:
        return None
    means = sorted(math.fsum(values[i * k:(i + 1) * k]) / k for i in range(n))
    return trimmed_interval(means, TRIM)


def median(xs: Sequence[float]) -> float:
    n = len(xs)
    mid = n // 2
    return xs[mid] if n % 2 else (xs[mid - 1] + xs[mid]) / 2


def median_interval(xs: Sequence[float]) -> tuple[float, float, float]:
    """Median of sorted xs with a distribution-free 95 % interval from order statistics."""
    n = len(xs)
    half = Z95 * math.sqrt(n) / 2
    lo = max(0, int(math.floor(n / 2 - half)))
    hi = min(n - 1, int(math.ceil(n / 2 + half)) - 1)
    if n < 6:  # too few points for an order-statistic interval
        return (median(xs), xs[0], xs[-1])
    return (median(xs), xs[lo], xs[hi])


def trimmed_interval_large(values: "array[float]", prop: float) -> tuple[float, float, float] | None:
    """The same trimmed mean and interval in O(n) with numpy (present wherever a DL framework
    is); None without numpy. Sorting a million Python floats costs ~0.4 s; this ~20 ms."""
    try:
        import numpy as np
    except ImportError:
        return None
    xs = np.frombuffer(values, dtype=np.float64)
    n = xs.size
    g = int(math.floor(prop * n))
    if n - 2 * g < 2:
        return None
    part = np.partition(xs, (g, n - g - 1)) if g else np.sort(xs)
    lo_v, hi_v = float(part[g]), float(part[n - g - 1])
    kept = part[g:n - g] if g else part
    est = float(kept.mean())
    wins = np.clip(xs, lo_v, hi_v)
    wvar = float(wins.var(ddof=1))
    se = math.sqrt(wvar) / ((1 - 2 * g / n) * math.sqrt(n))
    half = t_quantile_975(n - 2 * g - 1) * se
    return (est, max(0.0, est - half), est + half)


def trimmed_interval(xs: Sequence[float], prop: float) -> tuple[float, float, float]:
    """Trimmed mean of sorted xs with the Tukey-McLaughlin (winsorised variance) interval."""
    n = len(xs)
    g = int(math.floor(prop * n))
    kept = xs[g : n - g]
    h = len(kept)
    est = sum(kept) / h
    if h < 2:
        return (est, xs[0], xs[-1])
    lo_v, hi_v = xs[g], xs[n - g - 1]
    wins = [lo_v] * g + list(kept) + [hi_v] * g
    wmean = sum(wins) / n
    wvar = sum((w - wmean) ** 2 for w in wins) / (n - 1)
    se = math.sqrt(wvar) / ((1 - 2 * g / n) * math.sqrt(n))
    half = t_quantile_975(h - 1) * se
    return (est, max(0.0, est - half), est + half)
