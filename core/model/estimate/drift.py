"""The trend of a probe's step time: is it still speeding up (or slowing down) when the probe ends?

A job's step time moves at its start - GPU clocks and the allocator settling, cuDNN autotuning,
torch.compile re-specialising, OS caches warming, another process starting beside it - and a
probe that averages its first steps carries that into thousands of steps it multiplies them by.

The series has outliers (a GC pause, a prefetch stall, periodic work that slipped into a step),
so nothing here fits raw steps: the series is cut into blocks, each block stands for its median,
and the trend is the Theil-Sen slope of the blocks' log medians (the median of the pairwise
slopes: a few wild blocks cannot move it). The change is the last third's median block over the
first third's; it counts only where it is larger than the blocks' own scatter allows (twice the
standard error of the difference, from the blocks' median absolute residual) and larger than
``MIN_CHANGE``. The settled window is the latest stretch from which on no trend counts: the steps
a run's step time is taken from (``settled_window``).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from ...agent.steady import TRIM, trimmed_interval

MIN_STEPS = 30  # fewer steady steps than this: too few to tell a trend from noise
MAX_BLOCKS = 30  # blocks of the series (each its median); at least 3 steps a block
MAX_POINTS = 3000  # a longer series is read at a stride: its blocks' medians stay cheap on a live board
MIN_CHANGE = 0.02  # a trend under 2 % over the window is not worth saying or acting on
Z = 2.0  # how many standard errors a change must exceed to count


@dataclass(frozen=True)
class Drift:
    """The step time's trend over a window of a probe's steady steps."""

    direction: str  # "speeding up" | "slowing down" | "flat"
    change: float  # the last third's step time over the first third's, less 1 (-0.08: 8 % faster)
    per_100_steps: float  # the fitted trend per 100 steps, relative (-0.01: 1 % faster each 100)
    noise: float  # the standard error of ``change`` (relative)
    steps: int  # steady steps looked at

    @property
    def significant(self) -> bool:
        return self.direction != "flat"

    def describe(self) -> str:
        if not self.significant:
            return "steady"
        return f"{self.direction} ({100 * self.per_100_steps:+.1f} %/100 steps)"


@dataclass(frozen=True)
class Window:
    """The steady steps an estimate's step time was taken from (indices into the steady series,
    i inclusive, j exclusive), the trend over the whole series and what is left of it there."""

    first: int
    last: int
    mean_s: float  # the window's mean step time
    drift: Drift | None  # over the whole series (None: too few steps to tell)
    still: Drift | None  # over the window itself: the probe ended while the steps still moved

    @property
    def ended_moving(self) -> str:
        """'' or the direction the steps were still moving in when the probe ended."""
        return self.still.direction if self.still is not None and self.still.significant else ""


def _blocks(values: Sequence[float]) -> list[tuple[float, float]]:
    """(centre index, log of the median) of consecutive blocks of the series."""
    stride = max(1, len(values) // MAX_POINTS)
    if stride > 1:
        values = values[::stride]
    n = len(values)
    count = max(3, min(MAX_BLOCKS, n // 3))
    size = n / count
    out = []
    for b in range(count):
        lo, hi = int(round(b * size)), int(round((b + 1) * size))
        block = [v for v in values[lo:hi] if v > 0]
        if block:
            out.append((stride * (lo + hi - 1) / 2, math.log(statistics.median(block))))
    return out


def _theil_sen(points: list[tuple[float, float]]) -> tuple[float, float]:
    """(slope, intercept) of the Theil-Sen line through the points."""
    slopes = [(y2 - y1) / (x2 - x1) for i, (x1, y1) in enumerate(points)
              for x2, y2 in points[i + 1:] if x2 != x1]
    slope = statistics.median(slopes) if slopes else 0.0
    intercept = statistics.median(y - slope * x for x, y in points)
    return slope, intercept


def detect(values: Sequence[float], min_steps: int = MIN_STEPS) -> Drift | None:
    """The trend of a step series (module docstring); None with fewer than ``min_steps``."""
    n = len(values)
    if n < min_steps:
        return None
    pts = _blocks(values)
    if len(pts) < 3:
        return None
    slope, intercept = _theil_sen(pts)
    third = max(1, len(pts) // 3)
    first = statistics.median(y for _, y in pts[:third])
    last = statistics.median(y for _, y in pts[-third:])
    residuals = [y - (intercept + slope * x) for x, y in pts]
    sigma = 1.4826 * statistics.median(abs(r) for r in residuals)  # robust s.d. of one block
    # a median of k blocks has ~1.25 sigma/sqrt(k); two of them differ by sqrt(2) of that
    noise = math.sqrt(2) * 1.2533 * sigma / math.sqrt(third)
    change = math.exp(last - first) - 1
    moved = abs(last - first) > max(Z * noise, math.log1p(MIN_CHANGE))
    direction = "flat" if not moved else ("speeding up" if last < first else "slowing down")
    return Drift(direction, change, math.expm1(100 * slope), noise, n)


def settled_window(values: Sequence[float], min_steps: int = MIN_STEPS) -> Window:
    """The stretch of the series to take the step time from: from the earliest of a few
    starting points (0, 1/4, 1/2 of the series) after which no trend counts; if the steps move
    to the end, the last half (nearest what comes after), marked as still moving."""
    n = len(values)
    overall = detect(values, min_steps)
    if overall is None or not overall.significant:
        return Window(0, n, window_step_time(values), overall, None)
    for start in (n // 4, n // 2):
        rest = values[start:]
        still = detect(rest, max(min_steps // 2, 15))
        if still is not None and not still.significant:
            return Window(start, n, window_step_time(rest), overall, still)
    start = n // 2
    return Window(start, n, window_step_time(values[start:]), overall,
                  detect(values[start:], max(min_steps // 2, 15)) or overall)


def window_step_time(values: Sequence[float]) -> float:
    """The window's step time as the estimate takes a steady step time: the 10 %-trimmed mean
    (steady.py), so that the window and the whole series differ only in their steps."""
    if not len(values):
        return math.nan
    return trimmed_interval(sorted(values), TRIM)[0]


def epochs_trend(values: Sequence[float], epochs: Sequence[int]) -> Drift | None:
    """The trend over steady steps that span whole epochs (``epochs``: each one's steady steps,
    from the first), each epoch against the next at the same places in it: a pattern every
    epoch repeats - a DataLoader worker's first batches fast, then slower, 7 ms then 12 ms a step
    in pytorch/examples' mnist on an H200 - is no trend, though a series read straight through
    sees one at each epoch's start. None with fewer than two epochs of 6 steps."""
    if len(epochs) < 2 or min(epochs) < 6 or sum(epochs) > len(values):
        return None
    parts = min(10, min(epochs) // 3)
    rows, at = [], 0
    for n in epochs:
        epoch = values[at:at + n]
        at += n
        rows.append([math.log(statistics.median(epoch[round(b * n / parts):
                                                       round((b + 1) * n / parts)]) or 1e-12)
                     for b in range(parts)])
    diffs = [y - x for a, b in zip(rows, rows[1:]) for x, y in zip(a, b)]
    d = statistics.median(diffs)
    sigma = 1.4826 * statistics.median(abs(x - d) for x in diffs)
    k = len(epochs) - 1  # epoch-to-epoch steps over the window
    noise = 1.2533 * sigma / math.sqrt(len(diffs)) * k
    moved = abs(d * k) > max(Z * noise, math.log1p(MIN_CHANGE))
    direction = "flat" if not moved else ("speeding up" if d < 0 else "slowing down")
    return Drift(direction, math.expm1(d * k), math.expm1(100 * d * len(epochs) / sum(epochs)),
                 noise, sum(epochs))


def probe_trend(values: Sequence[float],
                epochs: Sequence[int] = ()) -> tuple[Drift | None, str]:
    """The trend over a probe's steady steps, and the direction they were still moving in when
    it ended ('' when they had settled or no trend counts): the last half's own trend - or, over
    whole epochs (``epochs``: epochs_trend), the last two epochs' against each other."""
    overall = epochs_trend(values, epochs)
    if overall is not None:
        tail = epochs_trend(values[sum(epochs[:-2]):], epochs[-2:]) if len(epochs) > 2 else overall
        return overall, tail.direction if tail is not None and tail.significant else ""
    overall = detect(values)
    if overall is None or not overall.significant:
        return overall, ""
    tail = detect(values[len(values) // 2:], max(MIN_STEPS // 2, 15))
    return overall, tail.direction if tail is not None and tail.significant else ""


def whole_epochs(steps_by_epoch: dict[int, int], steps_per_epoch: int, periodic: bool) -> list[int]:
    """The steady steps of each epoch a probe saw whole, from its first (each epoch's first step
    is T_it1 or a boundary, not a steady step); none where periodic work took steps out of the
    steady series (its epochs no longer line up) or fewer than two were seen whole."""
    if not steps_per_epoch or periodic:
        return []
    sizes = []
    for e in sorted(steps_by_epoch):
        if steps_by_epoch[e] < steps_per_epoch:
            break
        sizes.append(steps_by_epoch[e] - 1)
    return sizes if len(sizes) >= 2 else []
