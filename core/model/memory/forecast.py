"""Memory against batch size: what each probe reached, a line through the probes of one program,
and which batch sizes fit on every instance of the catalog (pure; no I/O).

A training step holds the model, its gradients and optimizer state (fixed) and the batch's
activations (proportional to the batch size), so a program's peak memory is close to a line,
``peak = a + b·batch``. Two probes at two batch sizes give the line; more give it by least
squares with its residual. It is said what it rests on (which peaks, which probes) and how far
it reaches past what was probed: a forecast at 8x the largest probed batch is a guess, at 2x
much less so. A batch size fits where the forecast stays under the memory less a headroom
(10 % by default: allocators fragment, and Lightning's batch-size finder users ask for one).

Peaks are of three kinds (``basis``): ``device`` - GPU memory as the framework's allocator
reserved it (PyTorch), or its peak (TensorFlow), or NVML's use; ``host`` - resident memory of the
training processes (what RAM and a cgroup limit count); ``address-space`` - the largest process's
virtual size (what ``RLIMIT_AS`` counts, ``prlimit --as`` in the tests).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..pricing import Catalog
from ..rows import HEADROOM as HEADROOM  # re-exported: the memory stage names it
from ..rows import RowMemory
from ..state import ProbeState

DEVICE, HOST, ADDRESS_SPACE = "device", "host", "address-space"
WHAT = {DEVICE: "GPU memory", HOST: "host RSS", ADDRESS_SPACE: "virtual memory"}
FAR = 4.0  # a forecast past 4x the largest probed batch size: said to be a long reach


def does_not_fit(state: ProbeState) -> bool:
    """The probe ended (or its training ended) out of memory."""
    return any(ev is not None and ev.status == "does-not-fit" for ev in (state.end, state.done))


def fit_reason(state: ProbeState) -> str:
    for ev in (state.end, state.done):
        if ev is not None and ev.status == "does-not-fit" and ev.reason:
            return ev.reason
    return "does not fit"


@dataclass(frozen=True, slots=True)
class MemoryPoint:
    """One probe's memory at its batch size: its peaks, the limits it ran under, and whether
    it ran out of memory. Old logs (no `memory` event) give their sampled peaks: host RSS, GPU memory used."""

    batch_size: int
    ran_out: bool  # the probe ran out of memory (its log ends does-not-fit)
    device: str = "cpu"
    device_mb: float | None = None  # reserved (PyTorch) else peak
    device_total_mb: float | None = None
    host_mb: float | None = None  # peak RSS
    vm_mb: float | None = None  # the largest process's peak virtual size
    host_limit_mb: float | None = None
    host_limit_kind: str = ""
    sampled: bool = False  # from `sample` events (1 Hz): a peak between samples is missed

    def peak(self, basis: str) -> float | None:
        return {DEVICE: self.device_mb, HOST: self.host_mb, ADDRESS_SPACE: self.vm_mb}[basis]

    @property
    def basis(self) -> str:
        """What the memory that limits this probe is: the device, else what its host limit
        counts."""
        if self.device_mb is not None and self.device != "cpu":
            return DEVICE
        return ADDRESS_SPACE if self.host_limit_kind == "address-space" else HOST

    @property
    def limit_mb(self) -> float | None:
        return self.device_total_mb if self.basis == DEVICE else self.host_limit_mb


def memory_point(state: ProbeState) -> MemoryPoint | None:
    """The probe's memory, or None when its log says nothing of it."""
    if state.start is None or not state.start.batch_size:
        return None
    ran_out = does_not_fit(state)
    m = state.memory
    if m is not None:
        device = m.device_reserved_mb if m.device_reserved_mb is not None else m.device_peak_mb
        host = max(m.host_peak_mb or 0.0, state.peak_rss_mb) or None
        return MemoryPoint(state.start.batch_size, ran_out, m.device or "cpu", device,
                           m.device_total_mb, host, m.host_vm_peak_mb, m.host_limit_mb,
                           m.host_limit_kind)
    s = state.last_sample
    gpu_total = max(s.gpu_mem_total_mb) if s is not None and s.gpu_mem_total_mb else None
    if state.peak_gpu_mem_mb:
        return MemoryPoint(state.start.batch_size, ran_out, "gpu", state.peak_gpu_mem_mb, gpu_total,
                           state.peak_rss_mb or None, sampled=True)
    if state.peak_rss_mb:
        return MemoryPoint(state.start.batch_size, ran_out, "cpu", host_mb=state.peak_rss_mb,
                           sampled=True)
    return None


@dataclass(frozen=True, slots=True)
class MemoryFit:
    """peak = intercept + per_sample·batch, through the peaks of probes that fit."""

    basis: str
    intercept_mb: float
    per_sample_mb: float
    batch_sizes: tuple[int, ...]
    peaks_mb: tuple[float, ...]
    residual_mb: float  # the largest miss of the line at a probed batch size
    sampled: bool = False

    def at(self, batch_size: float) -> float:
        return self.intercept_mb + self.per_sample_mb * batch_size

    def reach(self, batch_size: float) -> float:
        """How far past the largest probed batch size a forecast at ``batch_size`` goes."""
        return batch_size / max(self.batch_sizes)

    def largest(self, capacity_mb: float, headroom: float = HEADROOM) -> int | None:
        """The largest batch size whose forecast stays under the capacity less the headroom;
        0 when none does; None when the peak does not grow with the batch (no bound)."""
        usable = capacity_mb * (1 - headroom)
        if self.per_sample_mb <= 0:
            return None if self.intercept_mb <= usable else 0
        return max(0, math.floor((usable - self.intercept_mb) / self.per_sample_mb))

    def fits(self, batch_size: int, capacity_mb: float, headroom: float = HEADROOM) -> bool:
        return self.at(batch_size) <= capacity_mb * (1 - headroom)

    def rests_on(self) -> str:
        """What the forecast is made of, in words."""
        probes = ", ".join(f"b{b} {p:.0f} MB" for b, p in zip(self.batch_sizes, self.peaks_mb))
        how = "a line through" if len(self.batch_sizes) == 2 else "least squares over"
        spread = f", misses a probe by up to {self.residual_mb:.0f} MB" if self.residual_mb >= 1 else ""
        sampled = " (sampled once a second: short peaks missed)" if self.sampled else ""
        return (f"peak {WHAT[self.basis]}{sampled}: {how} {probes} -> {self.intercept_mb:.0f} MB "
                f"+ {self.per_sample_mb:.3g} MB per sample{spread}")

    def describe_reach(self, batch_size: float) -> str:
        r = self.reach(batch_size)
        if r <= 1:
            return "inside the probed range"
        return f"{r:.1f}x the largest probed batch size" + (" (a long reach)" if r > FAR else "")


def fit_memory(points: Iterable[MemoryPoint], basis: str) -> MemoryFit | None:
    """The line through the peaks (of ``basis``) of probes that fit; None with fewer than two
    batch sizes. Several probes at one batch size: the highest peak counts."""
    best: dict[int, float] = {}
    sampled = False
    for p in points:
        peak = p.peak(basis)
        if p.ran_out or peak is None or (basis == DEVICE and p.basis != DEVICE):
            continue
        best[p.batch_size] = max(best.get(p.batch_size, 0.0), peak)
        sampled = sampled or p.sampled
    if len(best) < 2:
        return None
    xs = sorted(best)
    ys = [best[x] for x in xs]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    b = max(0.0, sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx)
    a = my - b * mx
    residual = max(abs(a + b * x - y) for x, y in zip(xs, ys))
    return MemoryFit(basis, a, b, tuple(xs), tuple(ys), residual, sampled)


@dataclass(frozen=True, slots=True)
class InstanceFit:
    """The chosen batch sizes on one catalog instance: which fit, and the largest that does."""

    instance: str
    memory: str  # what binds: "GPU 24 GB", "RAM 16 GB"
    capacity_mb: float
    largest: int | None  # with the headroom; None: not bounded by what was measured
    fits: dict[int, bool] = field(default_factory=dict)
    proxy: bool = False  # GPU memory forecast from host memory (no GPU was probed)


@dataclass(frozen=True, slots=True)
class ProgramMemory:
    """One program's memory forecast: the lines (per basis) and every instance's verdict."""

    lines: dict[str, MemoryFit]  # per basis
    instances: list[InstanceFit]
    headroom: float = HEADROOM
    no_fit: tuple[int, ...] = ()  # batch sizes probed that did not fit

    @property
    def main(self) -> MemoryFit | None:
        return self.lines.get(DEVICE) or self.lines.get(HOST) or self.lines.get(ADDRESS_SPACE)

    def on(self, instance: str) -> InstanceFit | None:
        return next((i for i in self.instances if i.instance == instance), None)

    def rests_on(self) -> str:
        main = self.main
        return main.rests_on() if main is not None else ""


def program_memory(points: Sequence[MemoryPoint], catalog: Catalog,
                   batch_sizes: Iterable[int] = (), headroom: float = HEADROOM) -> ProgramMemory:
    """The forecast for every instance of the catalog with GPU or RAM figures: a GPU instance
    must hold the device forecast in one GPU's memory (the host forecast stands in, marked, where
    no GPU was probed) and the host forecast in its RAM."""
    lines = {b: f for b in (DEVICE, HOST, ADDRESS_SPACE) if (f := fit_memory(points, b)) is not None}
    chosen = sorted(set(batch_sizes) | {p.batch_size for p in points})
    out = []
    for inst in catalog:
        checks: list[tuple[str, float, MemoryFit, bool]] = []
        gpu = lines.get(DEVICE) or lines.get(HOST)
        if inst.gpu_memory_gb and gpu is not None:
            checks.append((f"GPU {inst.gpu_memory_gb:g} GB", inst.gpu_memory_gb * 1024, gpu,
                           gpu.basis != DEVICE))
        if inst.memory_gb and HOST in lines:
            checks.append((f"RAM {inst.memory_gb:g} GB", inst.memory_gb * 1024, lines[HOST], False))
        if not checks:
            continue
        verdicts = {b: all(f.fits(b, cap, headroom) for _, cap, f, _ in checks) for b in chosen}
        bounds = [(f.largest(cap, headroom), name, cap, proxy) for name, cap, f, proxy in checks]
        bounded = [x for x in bounds if x[0] is not None]
        largest, name, cap, proxy = min(bounded, key=lambda x: x[0] or 0) if bounded else \
            (None, bounds[0][1], bounds[0][2], bounds[0][3])
        out.append(InstanceFit(inst.instance, name, cap, largest, verdicts,
                               proxy or any(c[3] for c in checks)))
    no_fit = tuple(sorted({p.batch_size for p in points if p.ran_out}))
    return ProgramMemory(lines, out, headroom, no_fit)


def programs_memory(states: Iterable[ProbeState], catalog: Catalog,
                    batch_sizes: Iterable[int] = (), headroom: float = HEADROOM
                    ) -> dict[str, ProgramMemory]:
    """A forecast per workload (one program) from every probe of it."""
    by_workload: dict[str, list[MemoryPoint]] = {}
    for st in states:
        point = memory_point(st)
        if point is not None and st.start is not None:
            by_workload.setdefault(st.start.workload, []).append(point)
    chosen = list(batch_sizes)
    return {w: program_memory(points, catalog, chosen, headroom)
            for w, points in by_workload.items()}


def row_memory(state: ProbeState, program: ProgramMemory | None,
               shared: dict[object, object] | None = None) -> RowMemory | None:
    """A row's memory. ``shared``: a cache for one ranking pass, so that the rows of a program
    share one instance table instead of each building its own (a replay of 10 000 logs)."""
    point = memory_point(state)
    if point is None:
        return None
    cache: dict[object, object] = shared if shared is not None else {}
    main = program.main if program is not None else None
    largest: dict[str, int | None] = {}
    verdicts: dict[str, bool] = {}
    if program is not None:
        largest = cache.setdefault((id(program), "largest"),  # type: ignore[assignment]
                                   {i.instance: i.largest for i in program.instances})
        verdicts = cache.setdefault((id(program), point.batch_size),  # type: ignore[assignment]
                                    {i.instance: i.fits[point.batch_size]
                                     for i in program.instances if point.batch_size in i.fits})
    return RowMemory(
        batch_size=point.batch_size, ran_out=point.ran_out, device=point.device, basis=point.basis,
        peak_mb=point.peak(point.basis), limit_mb=point.limit_mb, host_peak_mb=point.host_mb,
        reason=fit_reason(state) if point.ran_out else "",
        forecast=str(cache.setdefault((id(program), "rests"), main.rests_on()))
        if main is not None else "",
        reach=main.describe_reach(point.batch_size) if main is not None else "",
        intercept_mb=round(main.intercept_mb, 1) if main is not None else None,
        per_sample_mb=round(main.per_sample_mb, 4) if main is not None else None,
        headroom=program.headroom if program is not None else HEADROOM,
        fits_on=verdicts, largest_on=largest,
        proxy=any(i.proxy for i in program.instances) if program else False)
