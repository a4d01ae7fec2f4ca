"""A job's total time on a candidate nobody probed, from its times on other candidates and the
GPU facts.

The model (measured against simpler ones in benchmarks/predict.py, RESULTS.md §12): a system
of ``n`` GPUs of one model runs the job in

    T = start-up + K / (s_f(gpu)**gamma * n**alpha * v(vendor)),
    s_f = 1 / (f / compute + (1 - f) / bandwidth)

- ``s_f`` is a roofline-style mix: the share ``f`` of the work bound by dense BF16 compute, the
  rest by memory bandwidth (both relative to an H100 SXM, so ``K`` stays near the job's H100 time);
- ``n**alpha`` is the scaling in the GPU count: MLPerf systems of more GPUs train with larger
  batches and need more of them, so ``alpha`` is well under 1 and falls with scale;
- ``gamma`` lets the GPU-to-GPU ratio run steeper or flatter than the datasheets' (prior 1);
- ``v`` is a vendor's software factor (the same peak FLOP/s do less on a younger stack);
- start-up (init, data loading) does not speed up with FLOP/s: where the observations say theirs,
  the fit is of the training alone and the candidate's start-up is theirs (closeness-weighted).

``K``, ``alpha``, ``gamma`` and the vendor factors are a weighted least-squares fit of log T over
the observed systems, each pulled towards a prior (ridge), so one observed system gives an answer
(the rest then come from the priors, learned across MLPerf benchmarks); ``f`` is the grid value
with the smallest penalised misfit. Systems far from the candidate in GPU count and GPU facts
weigh less (``alpha`` is local: 8 GPUs to 16 scale better than 512 to 1024), and a refit weighs
down those the first fit missed by far.

Bounds are log-ratio: the observed systems predicted among themselves as the candidate is (by
GPU model when its GPU is unseen), a closeness-weighted quantile of their errors scaled by a
constant calibrated leave-one-system-out on MLPerf v3.1 (v4.0 checks it) to hold the truth >= 90 %
of the time, with a floor and a widening for what the observations cannot tell (a GPU model or a
vendor never observed, a GPU count outside the observed range).
Pure: no I/O.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

# an H100 SXM's dense BF16 TFLOP/s and memory GB/s: the units of s_f (NVIDIA H100 datasheet)
REF_TFLOPS = 989.0
REF_BANDWIDTH_GBS = 3350.0
F_GRID = tuple(i / 10 for i in range(11))


class GpuFacts(Protocol):
    """What the model reads of a GPU (predict/gpus.py's GpuSpec has it)."""

    @property
    def key(self) -> str: ...
    @property
    def vendor(self) -> str: ...
    @property
    def bf16_tflops(self) -> float: ...
    @property
    def memory_bw_gbs(self) -> float: ...


@dataclass(frozen=True, slots=True)
class Hardware:
    """A candidate's hardware: its GPU model, GPUs per node and nodes."""

    gpu: GpuFacts
    gpus_per_node: int
    nodes: int = 1

    @property
    def count(self) -> int:
        return max(1, self.gpus_per_node * self.nodes)

    @property
    def label(self) -> str:
        per = f"{self.gpu.key}x{self.gpus_per_node}"
        return per if self.nodes == 1 else f"{self.nodes}x{per}"


@dataclass(frozen=True, slots=True)
class Observed:
    """The job's whole runtime on one system: measured (a complete run) or estimated (a probe)."""

    name: str
    hardware: Hardware
    runtime_s: float
    startup_s: float | None = None  # of runtime_s, the start-up before training (init)


@dataclass(frozen=True, slots=True)
class Priors:
    """The model's constants. ``f``, ``alpha`` and ``gamma`` are the medians of each MLPerf v3.1
    benchmark's own unregularised fit (f 0.0-0.9, alpha 0.54-0.92, gamma 0.78-1.80); the
    bounds' ``spread_quantile`` and ``bound_scale`` hold 91 % of v3.1's systems
    leave-one-system-out (v4.0: 93 %), ``unseen_gpu`` 92 % of v3.1's systems predicted from
    other GPU models only (v4.0: 95 %). Weights are those of one pseudo-observation (log units)."""

    f: float = 0.3
    f_weight: float = 0.5
    alpha: float = 0.8
    alpha_weight: float = 2.0
    gamma: float = 1.0
    gamma_weight: float = 2.0
    vendor_weight: float = 1.0
    count_scale: float = 1.0  # the width, in ln(GPU count), over which observations stay near
    facts_scale: float = 1.0  # ... and in ln(TFLOP/s) + ln(bandwidth)
    spread_quantile: float = 0.9  # which quantile of the leave-one-out |log error| sets the width
    huber: float = 0.15  # log misfit beyond which an observation weighs less (robust refit)
    bound_scale: float = 1.1  # half-width = bound_scale * leave-one-out misfit ...
    bound_floor: float = 0.12  # ... never under this (log) ...
    bound_prior: float = 0.35  # ... and this where fewer than three systems were observed
    unseen_vendor: float = 0.35  # added when the candidate's vendor was never observed
    unseen_gpu: float = 0.15  # added when its GPU model was never observed
    per_extrapolated_doubling: float = 0.06  # added per doubling of GPU count outside the observed


PRIORS = Priors()


@dataclass(frozen=True, slots=True)
class Fit:
    """The fitted model: log K, alpha, f and the vendor offsets (log of v)."""

    log_k: float
    alpha: float
    f: float
    vendors: dict[str, float] = field(default_factory=dict)
    gamma: float = 1.0  # the exponent on the GPU-to-GPU speed ratio
    misfit: float = 0.0

    def log_time(self, hw: Hardware) -> float:
        return (self.log_k - self.gamma * math.log(speed(hw.gpu, self.f))
                - self.alpha * math.log(hw.count)
                - self.vendors.get(hw.gpu.vendor, 0.0))


@dataclass(frozen=True, slots=True)
class Prediction:
    """A predicted runtime with its bounds and what it rests on."""

    runtime_s: float
    low_s: float
    high_s: float
    fit: Fit
    observed: tuple[str, ...]
    basis: str
    spread: float | None = None  # the observed systems' leave-one-out median |log error|


def _positive(x: float) -> float:
    return max(x, 1e-3)  # a figure the table lacks (0) must not divide by zero


def speed(gpu: GpuFacts, f: float) -> float:
    """Per-GPU speed relative to an H100 SXM: the roofline mix of compute and bandwidth."""
    compute = _positive(gpu.bf16_tflops) / REF_TFLOPS
    bandwidth = _positive(gpu.memory_bw_gbs) / REF_BANDWIDTH_GBS
    return 1.0 / (f / compute + (1.0 - f) / bandwidth)


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gauss-Jordan on a small symmetric positive-definite system (the ridge keeps it so)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        if abs(m[col][col]) < 1e-12:
            m[col][col] = 1e-12
        for r in range(n):
            if r != col:
                k = m[r][col] / m[col][col]
                m[r] = [x - k * y for x, y in zip(m[r], m[col])]
    return [m[i][n] / m[i][i] for i in range(n)]


def _fit_at(obs: Sequence[Observed], weights: Sequence[float], f: float,
            priors: Priors) -> Fit:
    """Ridge least squares of log T = log K - gamma ln s_f - alpha ln n - v at a given f."""
    vendors = sorted({o.hardware.gpu.vendor for o in obs})
    main = max(vendors, key=lambda v: sum(w for o, w in zip(obs, weights)
                                          if o.hardware.gpu.vendor == v))
    others = [v for v in vendors if v != main]
    size = 3 + len(others)
    ata = [[0.0] * size for _ in range(size)]
    atb = [0.0] * size

    def add(row: list[float], y: float, w: float) -> None:
        for i in range(size):
            atb[i] += w * row[i] * y
            for j in range(size):
                ata[i][j] += w * row[i] * row[j]

    for o, w in zip(obs, weights):
        add(_row(o.hardware, f, others), math.log(o.runtime_s), w)
    add(_unit(1, size), priors.alpha, priors.alpha_weight)
    add(_unit(2, size), 1.0, priors.gamma_weight)
    for i in range(len(others)):
        add(_unit(3 + i, size), 0.0, priors.vendor_weight)
    theta = _solve(ata, atb)
    fit = Fit(theta[0], theta[1], f, {v: theta[3 + i] for i, v in enumerate(others)}, theta[2])
    sse = sum(w * (fit.log_time(o.hardware) - math.log(o.runtime_s)) ** 2
              for o, w in zip(obs, weights))
    return replace(fit, misfit=sse + priors.f_weight * (f - priors.f) ** 2)


def _row(hw: Hardware, f: float, other_vendors: Sequence[str]) -> list[float]:
    return [1.0, -math.log(hw.count), -math.log(speed(hw.gpu, f))] + [
        -1.0 if hw.gpu.vendor == v else 0.0 for v in other_vendors]


def _unit(i: int, size: int) -> list[float]:
    return [1.0 if j == i else 0.0 for j in range(size)]


def closeness(target: Hardware, o: Hardware, priors: Priors = PRIORS) -> float:
    """How much an observed system tells about ``target``: near in GPU count and in GPU facts
    weighs more (the scaling and the GPU-to-GPU ratio are both local)."""
    count = math.log(o.count / target.count) / priors.count_scale
    facts = (abs(math.log(_positive(o.gpu.bf16_tflops) / _positive(target.gpu.bf16_tflops)))
             + abs(math.log(_positive(o.gpu.memory_bw_gbs) / _positive(target.gpu.memory_bw_gbs)))
             ) / priors.facts_scale
    return math.exp(-(count * count + facts * facts) / 2)


def fit(target: Hardware, obs: Sequence[Observed], priors: Priors = PRIORS,
        fixed_f: float | None = None) -> Fit:
    """The best fit for predicting ``target``: observations weighted by closeness, then once
    more with those the first fit missed by far weighing less (one odd software stack must not
    move every other system's prediction)."""
    weights = [closeness(target, o.hardware, priors) for o in obs]
    grid = F_GRID if fixed_f is None else (fixed_f,)
    best = min((_fit_at(obs, weights, f, priors) for f in grid), key=lambda ft: ft.misfit)
    robust = [w * min(1.0, priors.huber / max(1e-9, abs(best.log_time(o.hardware)
                                                        - math.log(o.runtime_s))))
              for o, w in zip(obs, weights)]
    return min((_fit_at(obs, robust, f, priors) for f in grid), key=lambda ft: ft.misfit)


def family(gpu: GpuFacts) -> str:
    """A GPU's model whatever its form and memory ("H100" for SXM, PCIe, 80 or 96 GB)."""
    return str(getattr(gpu, "model", "") or gpu.key)


def _inner_misfit(target: Hardware, obs: Sequence[Observed], f: float,
                  priors: Priors) -> float | None:
    """The observed systems predicted among themselves as the target is (at the outer fit's
    f): each from the others when the target's GPU was observed, else each from the systems of
    other GPUs only - so a GPU nobody ran gets the wider bounds such a guess has earned. The
    ``spread_quantile`` of the |log errors| (None: too few to tell)."""
    unseen = family(target.gpu) not in {family(o.hardware.gpu) for o in obs}
    errors = []
    for o in obs:
        rest = [x for x in obs if x is not o
                and not (unseen and family(x.hardware.gpu) == family(o.hardware.gpu))]
        if rest:
            err = math.log(_centre(o.hardware, rest, priors, f)[0] / o.runtime_s)
            errors.append((abs(err), closeness(target, o.hardware, priors)))
    if len(errors) < 3:
        return None
    return _weighted_quantile(errors, priors.spread_quantile)


def _weighted_quantile(values: Sequence[tuple[float, float]], q: float) -> float:
    """The q-quantile of (value, weight) pairs: errors of systems like the target count more."""
    ordered = sorted(values)
    total = sum(w for _, w in ordered) or 1.0
    seen = 0.0
    for value, w in ordered:
        seen += w
        if seen >= q * total:
            return value
    return ordered[-1][0]


def half_width(target: Hardware, obs: Sequence[Observed], f: float,
               priors: Priors = PRIORS) -> float:
    """The log half-width of the bounds (calibrated: see Priors)."""
    return _widen(target, obs, _base_width(_inner_misfit(target, obs, f, priors), priors), priors)


def _base_width(inner: float | None, priors: Priors) -> float:
    return priors.bound_prior if inner is None else max(priors.bound_floor,
                                                        priors.bound_scale * inner)


def _widen(target: Hardware, obs: Sequence[Observed], width: float, priors: Priors) -> float:
    """What the observations cannot tell widens the bounds."""
    if target.gpu.vendor not in {o.hardware.gpu.vendor for o in obs}:
        width += priors.unseen_vendor
    if family(target.gpu) not in {family(o.hardware.gpu) for o in obs}:
        width += priors.unseen_gpu
    counts = [o.hardware.count for o in obs]
    outside = max(math.log2(min(counts) / target.count), math.log2(target.count / max(counts)), 0)
    return width + priors.per_extrapolated_doubling * outside


def predict(target: Hardware, obs: Sequence[Observed], priors: Priors = PRIORS,
            fixed_f: float | None = None) -> Prediction | None:
    """The job's runtime on ``target`` from its runtimes on the ``obs`` systems (None: none)."""
    usable = [o for o in obs if o.runtime_s > 0]
    if not usable:
        return None
    centre, ft = _centre(target, usable, priors, fixed_f)
    inner = _inner_misfit(target, usable, ft.f, priors)
    w = _widen(target, usable, _base_width(inner, priors), priors)
    return Prediction(centre, centre * math.exp(-w), centre * math.exp(w), ft,
                      tuple(o.name for o in usable), basis(target, usable), inner)


def _centre(target: Hardware, obs: Sequence[Observed], priors: Priors,
            fixed_f: float | None) -> tuple[float, Fit]:
    """The predicted runtime: start-up plus the fitted training time."""
    start, work = _split_startup(target, obs, priors)
    ft = fit(target, work, priors, fixed_f)
    return start + math.exp(ft.log_time(target)), ft


def _split_startup(target: Hardware, obs: Sequence[Observed],
                   priors: Priors) -> tuple[float, list[Observed]]:
    """Start-up does not speed up with FLOP/s: where every observation says its own, the model
    fits the training alone and the target's start-up is the closeness-weighted median of the
    observed ones (0 and the totals where any is missing)."""
    if not all(o.startup_s is not None and 0 <= o.startup_s < o.runtime_s for o in obs):
        return 0.0, list(obs)
    starts = [(o.startup_s or 0.0, closeness(target, o.hardware, priors)) for o in obs]
    work = [replace(o, runtime_s=o.runtime_s - (o.startup_s or 0.0)) for o in obs]
    return _weighted_quantile(starts, 0.5), work


def basis(target: Hardware, obs: Sequence[Observed]) -> str:
    """What a prediction rests on, in words."""
    names = ", ".join(o.hardware.label for o in obs[:4]) + (", ..." if len(obs) > 4 else "")
    gpu = target.gpu
    return (f"predicted from {len(obs)} system{'s' if len(obs) != 1 else ''}' runs: {names}; "
            f"GPU facts: bf16 {gpu.bf16_tflops:g} TFLOP/s, "
            f"{gpu.memory_bw_gbs / 1000:.3g} TB/s")
