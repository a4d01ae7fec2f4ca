"""The largest batch size that fits on a host, in the fewest probes (pure: the next batch size
to probe from the probes so far; core/run/find_batch.py runs them).

Forecast first, then confirm: probe a start batch size and 4x it, draw the memory line
through them (memory.py) and probe the largest batch size whose forecast keeps the headroom
under the limit the probes ran under (a GPU's memory, a host limit). A probe that does not fit -
or fits without the headroom - bounds the search from above: the line is drawn again with it and
the next probe is its forecast inside the bounds, else the middle (bisection). Without a line
(one batch size fitted, or peaks too close to tell a slope) the next is 4x the last that fitted;
without any fit, the half (down to 1, where it
says plainly that nothing fits). The search ends when the bounds are within ``tolerance`` of
each other, at the cap, or after ``max_probes``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .forecast import HEADROOM, MemoryFit, MemoryPoint, fit_memory

DEFAULT_START = 32
DEFAULT_CAP = 8192
TOLERANCE = 0.05  # the answer is within 5 % of the largest that fits
GROW = 4  # without a line yet: the next batch size is this many times the last that fitted
SIGNAL = 0.03  # peaks closer than 3 % apart: the batch's share is lost in the baseline
AIM = 0.01  # aim this share of the limit under the headroom: a forecast at the edge fails half the time
REACH = 8  # a forecast goes at most this many times past the largest batch size probed


@dataclass(frozen=True, slots=True)
class Tried:
    """One probe of the search: its batch size, whether it fit with the headroom, its peak."""

    batch_size: int
    fits: bool  # ran, and its peak kept the headroom under the limit
    ran: bool  # ran to the end of the probe (False: out of memory)
    peak_mb: float | None
    limit_mb: float | None
    point: MemoryPoint | None = None


@dataclass
class Search:
    start: int = DEFAULT_START
    cap: int = DEFAULT_CAP
    headroom: float = HEADROOM
    tolerance: float = TOLERANCE
    max_probes: int = 10
    tried: list[Tried] = field(default_factory=list)
    failure: str = ""  # a probe failed for another reason than memory: the search stops

    def add(self, point: MemoryPoint | None, batch_size: int) -> Tried:
        """A probe's outcome (None: its log said nothing of memory - it failed)."""
        ran = point is not None and not point.ran_out
        peak = point.peak(point.basis) if point is not None else None
        limit = point.limit_mb if point is not None else None
        usable = limit * (1 - self.headroom) if limit else None
        fits = ran and (peak is None or usable is None or peak <= usable)
        t = Tried(batch_size, fits, ran, peak, limit, point)
        self.tried.append(t)
        return t

    @property
    def lo(self) -> Tried | None:
        ok = [t for t in self.tried if t.fits]
        return max(ok, key=lambda t: t.batch_size) if ok else None

    @property
    def hi(self) -> int | None:
        """The smallest batch size that did not fit (with the headroom) above the largest that
        did."""
        lo = self.lo.batch_size if self.lo else 0
        bad = [t.batch_size for t in self.tried if not t.fits and t.batch_size > lo]
        return min(bad) if bad else None

    @property
    def limit_mb(self) -> float | None:
        limits = [t.limit_mb for t in self.tried if t.limit_mb]
        return min(limits) if limits else None

    def line(self) -> MemoryFit | None:
        """The line through the largest batch size that ran and the largest at most half of it
        (a secant where memory grows faster than the batch; two points far enough apart that
        noise does not make the slope)."""
        ran = sorted((t for t in self.tried if t.ran and t.point is not None),
                     key=lambda t: t.batch_size)
        if len(ran) < 2:
            return None
        top = ran[-1]
        partner = next((t for t in reversed(ran) if t.batch_size <= top.batch_size // 2), ran[0])
        if partner is top:
            return None
        points = [t.point for t in (partner, top) if t.point is not None]
        return fit_memory(points, points[0].basis)

    def next(self) -> int | None:
        """The next batch size to probe; None when the search is over (``done`` says why)."""
        return self._next()[0]

    def done(self) -> str:
        return self._next()[1]

    def _next(self) -> tuple[int | None, str]:
        if self.failure:
            return None, self.failure
        if not self.tried:
            return min(self.start, self.cap), "start"
        if len(self.tried) >= self.max_probes:
            return None, f"stopped after {len(self.tried)} probes (the most it may run)"
        lo, hi = self.lo, self.hi
        if lo is None:
            smallest = min(t.batch_size for t in self.tried)
            if smallest <= 1:
                return None, "even batch size 1 does not fit"
            return smallest // 2, "halved: nothing fitted yet"
        if lo.batch_size >= self.cap:
            return None, f"reached the cap, b{self.cap}"
        if hi is not None and hi - lo.batch_size <= max(1, math.ceil(self.tolerance * lo.batch_size)):
            return None, f"b{lo.batch_size} fits and b{hi} does not"
        target = self._forecast()
        if target is not None and hi is not None:
            if target >= hi:
                target = None  # the line promised more than a probe found: bisect from here
            else:  # well inside the bounds: a forecast a hair under a failure fails again
                target = min(target, hi - max(1, (hi - lo.batch_size) // 4))
        if target is None:  # no line yet (or no limit): grow, else bisect
            target = lo.batch_size * GROW if hi is None else (lo.batch_size + hi) // 2
            how = "grown" if hi is None else "bisected"
        else:
            how = "forecast"
        target = min(target, self.cap)
        if target <= lo.batch_size:
            if hi is None:
                return None, f"b{lo.batch_size}: the forecast puts the largest that fits here"
            target = (lo.batch_size + hi) // 2
            how = "bisected"
            if target <= lo.batch_size:
                return None, f"b{lo.batch_size} fits and b{hi} does not"
        if any(t.batch_size == target for t in self.tried):
            return None, f"b{lo.batch_size}: the forecast points at a batch size already probed"
        if how == "forecast" and target - lo.batch_size <= math.ceil(self.tolerance * lo.batch_size):
            return None, f"b{lo.batch_size}: within {self.tolerance:.0%} of the forecast's largest"
        return target, how

    def _forecast(self) -> int | None:
        """The largest batch size the line keeps under the limit less the headroom - and less
        the line's own miss at the probes (aiming at the edge, a probe fails half the time)."""
        line, limit = self.line(), self.limit_mb
        if line is None or limit is None:
            return None
        peaks = line.peaks_mb
        if line.per_sample_mb <= 0 or max(peaks) - min(peaks) < SIGNAL * min(peaks):
            return None  # memory barely grew between the probes: no slope to go by yet
        usable = limit * (1 - self.headroom - AIM)
        target = max(0, math.floor((usable - line.intercept_mb) / line.per_sample_mb))
        return min(target, max(line.batch_sizes) * REACH)

    def answer(self) -> Answer:
        lo, hi, line, limit = self.lo, self.hi, self.line(), self.limit_mb
        double = lo.batch_size * 2 if lo is not None else None
        double_mb = line.at(double) if line is not None and double is not None else None
        return Answer(
            batch_size=lo.batch_size if lo else None, probes=len(self.tried),
            peak_mb=lo.peak_mb if lo else None, limit_mb=limit, headroom=self.headroom,
            first_no_fit=hi, double=double, double_mb=double_mb, why=self.done(),
            rests_on=line.rests_on() if line is not None else "")


@dataclass(frozen=True, slots=True)
class Answer:
    batch_size: int | None
    probes: int
    peak_mb: float | None
    limit_mb: float | None
    headroom: float
    first_no_fit: int | None
    double: int | None
    double_mb: float | None
    why: str
    rests_on: str

    @property
    def margin(self) -> float | None:
        """The share of the limit left free at the answer's peak."""
        if self.peak_mb is None or not self.limit_mb:
            return None
        return 1 - self.peak_mb / self.limit_mb

    def lines(self) -> list[str]:
        if self.batch_size is None:
            return [f"no batch size fits ({self.why}) after {self.probes} probe(s)"]
        limit = f"{self.limit_mb:.0f} MB" if self.limit_mb else "an unknown limit"
        margin = f", margin {self.margin:.0%}" if self.margin is not None else ""
        out = [f"largest batch size that fits: b{self.batch_size} - peak "
               f"{self.peak_mb or 0:.0f} MB of {limit}{margin} (headroom asked: "
               f"{self.headroom:.0%}); {self.probes} probe(s); {self.why}"]
        if self.double is not None:
            if self.first_no_fit is not None and self.first_no_fit <= self.double:
                out.append(f"  b{self.first_no_fit} was probed and does not fit (with the headroom)"
                           + (f", so neither does b{self.double}"
                              if self.first_no_fit < self.double else ""))
            elif self.double_mb is not None and self.limit_mb:
                verdict = "does not fit" if self.double_mb > self.limit_mb * (1 - self.headroom) \
                    else "would fit (the cap or the probe count stopped the search)"
                out.append(f"  b{self.double}: forecast {self.double_mb:.0f} MB - {verdict}")
        if self.rests_on:
            out.append(f"  forecast: {self.rests_on}")
        return out
