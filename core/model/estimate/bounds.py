"""Honest bounds: [low, high] must contain the real total at least 9 times in 10.

The point estimate extrapolates a few dozen steps to a whole run; what it cannot know is turned
into seconds of uncertainty (one standard deviation each), by source:

- ``steps``: the steady step time's own interval from the probe, times the steps still to come;
- ``drift``: the step time of the whole run differs from the probe's - later epochs run a little
  faster or slower, and another process at another moment shares the machine differently; the
  more the step time wandered while the probe watched (``StepSeries.wander``: a host that shares
  its cores), the more (measured on recorded probes against their full runs);
- ``boundaries``: the epoch boundaries still to come and the teardown when training ends -
  for tf.data pipelines a stall each may or may not pay, whose length the autotuner's clock
  predicts (stalls.py); for a PyTorch ``DataLoader`` a small cost that varies a little;
- ``validation``, ``post`` (the program's work after training), ``init`` (start-up: imports and
  data loading take longer or shorter from one run to the next), each a measured relative spread;
- ``floor``: everything else, relative to the total.

They are added in quadrature and the interval is total +- q*sigma, with q chosen on recorded runs
(split conformal: the smallest q that puts 90 % of the calibration runs inside; reported on
programs the calibration never saw - benchmarks/accuracy.py). The boundaries' sum is bounded -
none stalls, or every one does at its longest - and the interval never reaches past those.

**Per mechanism.** What happens at an epoch boundary depends on what drives the epochs, not on
the model: Keras ``fit`` (and TensorFlow loops over ``tf.data``) re-create an input iterator each
epoch and tearing the old one down waits for the autotuner's next wake-up; a PyTorch
``DataLoader`` just starts another pass over its sampler. So each mechanism has its own constants,
measured on recorded runs of that mechanism (``mechanism()`` says which one a probe saw), and a
PyTorch probe is not given Keras' stalls. A probe whose mechanism has no recorded runs (a
framework-free ``StepTimer`` loop, an unknown framework) gets the Keras set, the most cautious.
The constants and where they were measured live in ``calibration.json``.

**Per device.** What moves a GPU job's total is not what moves a CPU job's: the step time is
the GPU's, not a share of cores another process competes for, and start-up is CUDA's context,
compilation and caches a fresh host has cold. So a probe that ran on a GPU (its `start`'s
`devices`, else memory sampled on one) gets its mechanism's GPU set (``calibration_key``:
``torch-gpu``), measured on recorded GPU runs: the drift, the start-up and post-training spreads
and q; what the GPU runs cannot tell (boundaries, stalls, an epoch's lifetime) is the CPU set's.
A mechanism with no recorded GPU runs gets its CPU set (``pick``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

# calibration.json lies in the model package, one above this one
MODEL_PACKAGE = __name__.rsplit(".", 2)[0]

if TYPE_CHECKING:
    from ..state import ProbeState


# What drives the epochs, as the probe saw it (the log's `start.framework` and `log` codes)
TF = "tf"  # Keras fit() and TensorFlow loops: a tf.data iterator per epoch, torn down after it
TORCH = "torch"  # PyTorch DataLoader passes (plain loops, Lightning, Hugging Face Trainer)
OTHER = "other"  # no recorded runs of its own (StepTimer, other frameworks, Keras of TF 1.x)
MECHANISMS = (TF, TORCH)  # the ones with recorded runs: each has constants of its own
GPU = "gpu"  # the device whose runs have constants of their own: calibration_key's suffix


@dataclass(frozen=True)
class Calibration:
    q: float = 2.0  # multiplier on sigma (conformal, from the calibration runs)
    floor: float = 0.01  # relative noise floor on the total
    # the whole run's mean step time against the probe's (s.d., relative): a level shift between
    # two processes, more the more the probe saw the step time wander (a shared host), and more
    # the shorter the run (load that comes and goes averages out over a long one):
    # sqrt(base^2 + (per_wander * wander)^2 + per_sqrt_s^2 / training seconds)
    drift_base: float = 0.02
    drift_per_wander: float = 1.0
    drift_per_sqrt_s: float = 0.4
    wander_typical: float = 0.04  # a probe too short to tell how its step time wanders
    stalls: bool = True  # whether boundaries may wait on the tf.data autotuner (stalls.py)
    stall_point: bool = True  # ... expected in the estimate (else allowed for on the high side)
    stall_prior_one: tuple[float, float] = (9.0, 1.0)  # Beta odds of a stall: one core usable
    stall_prior_many: tuple[float, float] = (1.0, 1.0)  # ... more cores, or not said
    # the teardown when training ends stalls at these times a boundary's odds (the recorded
    # runs' share of teardowns stalled over their share of boundaries): one core, more
    stall_end_ratio_one: float = 1.0
    stall_end_ratio_many: float = 1.0
    # an epoch's lifetime from one epoch to the next within a run (s.d., relative), likewise
    lifetime_base: float = 0.03
    lifetime_per_wander: float = 1.0
    free_boundary_s: float = 0.05  # a boundary's cost besides a stall (typical)
    boundary_abs_s: float = 0.1  # ... and its spread (s.d.) from one boundary to the next
    boundary_carry: float = 0.2  # share of what the probe's boundaries cost besides a stall
    #                              that later ones cost too (the first carries one-off work)
    boundary_run_s: float = 0.1  # what a run's later boundaries cost besides that (s.d.)
    val_rel: float = 0.15  # spread of a validation pass (s.d., relative)
    post_rel: float = 0.2  # spread of the measured post-training work (s.d., relative)
    post_typical_s: float = 1.5  # post-training work of a log that did not reach its end
    post_spread_s: float = 0.5  # ... and how much it varied between programs (s.d.)
    init_rel: float = 0.1  # spread of start-up (T_init) from one run to the next (s.d., relative)
    source: str = "defaults"

    mechanism: str = OTHER

    def noise(self, state: ProbeState, train_s: float) -> tuple[float, float]:
        """(drift of the run's level, spread of one epoch's lifetime around it) for this probe,
        from how its step time wandered, for a run of ``train_s`` seconds of steps."""
        w = state.steady.wander()
        w = self.wander_typical if w is None else w
        drift = math.sqrt(self.drift_base ** 2 + (self.drift_per_wander * w) ** 2
                          + self.drift_per_sqrt_s ** 2 / max(train_s, 1.0))
        return drift, math.hypot(self.lifetime_base, self.lifetime_per_wander * w)

    @classmethod
    def load(cls, mechanism: str = "") -> Calibration:
        """The constants for ``mechanism`` (``calibration_key(state)``: the mechanism, on a GPU
        its GPU set where there is one - ``pick``). One without recorded runs of its own gets
        Keras' with caution: a tf.data stall is allowed for on the high side, not
        expected, and the boundaries it saw are taken to come again as they were."""
        return pick(_load_all(), mechanism)

    def cautious(self) -> Calibration:
        """These constants for a mechanism with no recorded runs of its own."""
        return replace(self, mechanism=OTHER, stall_point=False, boundary_carry=1.0,
                       free_boundary_s=0.0)

    @classmethod
    def for_state(cls, state: ProbeState) -> Calibration:
        """This probe's constants: its mechanism's; a TensorFlow loop of the program's own that
        iterated no tf.data dataset (the agent's ``no-tf-data``: tensorflow/docs' Core API
        guides) has no iterator teardown to stall - none forecast, none allowed for."""
        cal = cls.load(calibration_key(state))
        return replace(cal, stalls=False) if NO_TF_DATA in state.codes else cal


NO_TF_DATA = "no-tf-data"  # the agent's code: a custom loop that iterated no tf.data dataset


def pick(sets: Mapping[str, Calibration], key: str) -> Calibration:
    """The set for ``key`` (``calibration_key``): its own; a device's without recorded runs of
    its own, its mechanism's (CPU) set; a mechanism without any, Keras' with caution."""
    if key in sets:
        return sets[key]
    base = key.removesuffix(f"-{GPU}")
    if base in sets:
        return sets[base]
    return (sets.get(TF) or Calibration()).cautious()


def on_gpu(state: ProbeState) -> bool:
    """Whether the job ran on a GPU: the devices its `start` named, else memory sampled on one
    (a log of an agent that names no devices)."""
    devices = state.start.devices if state.start is not None else ()
    if devices:
        return any(d.kind == GPU for d in devices)
    return state.peak_gpu_mem_mb > 0


def calibration_key(state: ProbeState) -> str:
    """Which set of constants applies: the mechanism (``mechanism``), and ``-gpu`` on a GPU."""
    m = mechanism(state)
    return f"{m}-{GPU}" if on_gpu(state) else m


def own_loop(state: ProbeState) -> bool:
    """The steps are a TensorFlow loop of the program's own (GradientTape), not fit()'s."""
    return bool(state.codes & {"custom-loop", "gradient-step"})


def mechanism(state: ProbeState) -> str:
    """Which recorded mechanism's constants fit this probe."""
    framework = (state.start.framework if state.start is not None else "").lower()
    if "torch-loop" in state.codes or framework.startswith(("torch", "lightning", "transformers")):
        return TORCH
    # Keras 3 and TensorFlow 2 feed every epoch through a tf.data iterator (the stalls);
    # "keras (TF 1.x era)" and unversioned names are not known to; nor Keras on another
    # backend (the agent names it: "keras 3.15.1 (torch backend)"): no tf.data, no recorded runs
    if re.search(r"\b(torch|jax|openvino) backend", framework):
        return OTHER
    version = re.match(r"(keras|tensorflow)\s+(\d+)", framework)
    if (version and int(version.group(2)) >= 2) or own_loop(state):
        return TF
    return OTHER


def describe_mechanism(state: ProbeState) -> str:
    """The words for the detail view: what drives the epochs and which constants apply."""
    words = _describe_epochs(state)
    if not on_gpu(state) or mechanism(state) == OTHER:  # OTHER's words say it has no runs
        return words
    if calibration_key(state) in _load_all():
        return words + "; on a GPU: drift, start-up and post-training spreads measured on " \
                       "recorded GPU runs"
    return words + "; on a GPU, with CPU constants (no recorded GPU runs of this mechanism)"


def _describe_epochs(state: ProbeState) -> str:
    m = mechanism(state)
    framework = state.start.framework if state.start is not None else ""
    if m == TORCH:
        return (f"{framework or 'PyTorch'}: DataLoader epochs - boundary allowances measured "
                "on recorded PyTorch runs")
    if m == TF:
        loop = "custom loop" if own_loop(state) else "fit()"
        return (f"{framework} {loop}: a tf.data iterator per epoch, whose teardown waits for "
                "the autotuner's next wake-up - odds measured on recorded Keras runs")
    return (f"{framework or 'no framework named'}: no recorded runs of this mechanism - the "
            "boundaries it saw are taken to come again, and a Keras-like stall at each is "
            "allowed for on the high side")


@lru_cache(maxsize=1)
def _load_all() -> dict[str, Calibration]:
    """calibration.json: {"mechanisms": {name: {constant: value}}, ...}; a file of one flat set
    (older) applies to every mechanism."""
    try:
        text = resources.files(MODEL_PACKAGE).joinpath("calibration.json").read_text()
        data = json.loads(text)
    except (OSError, ValueError):
        return {}
    sets = data.get("mechanisms") if isinstance(data, dict) else None
    if not isinstance(sets, dict):
        sets = {m: data for m in MECHANISMS}
    out = {}
    for name, values in sets.items():
        if isinstance(values, dict):
            fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v
                                      for k, v in values.items()
                                      if k in Calibration.__dataclass_fields__
                                      and k != "mechanism"}
            out[name] = Calibration(**fields, mechanism=name)
    return out


def load_pair_constants() -> dict[str, float]:
    """The constants of decisions between two probes (decisions.py), as measured."""
    try:
        data = json.loads(resources.files(MODEL_PACKAGE).joinpath("calibration.json").read_text())
    except (OSError, ValueError):
        return {}
    pairs = data.get("pairs") if isinstance(data, dict) else None
    return {k: float(v) for k, v in pairs.items() if isinstance(v, (int, float))} \
        if isinstance(pairs, dict) else {}


@dataclass(frozen=True)
class Uncertainty:
    """Seconds of uncertainty on the total, by source (one s.d. each; what the detail view shows)."""

    steps: float  # the probe's interval of the steady step time: a longer probe narrows it
    boundaries: float  # boundaries still to come and the end of training: more seen narrow it
    validation: float
    post: float
    floor: float
    init: float = 0.0  # start-up
    drift: float = 0.0  # the whole run's step time against the probe's
    unseen_high: float = 0.0  # costs the probe could not see: allowed for on the high side only
    unseen_low: float = 0.0  # costs it saw that may not come again: allowed for on the low side
    reach_low: float = math.inf  # the boundaries can cost at most this much less than expected
    reach_high: float = math.inf  # ... and at most this much more

    @property
    def sigma(self) -> float:
        return math.sqrt(self.steps ** 2 + self.boundaries ** 2 + self.validation ** 2
                         + self.post ** 2 + self.floor ** 2 + self.init ** 2 + self.drift ** 2)

    @property
    def sigma_without_boundaries(self) -> float:
        return math.sqrt(max(0.0, self.sigma ** 2 - self.boundaries ** 2))

    def as_dict(self) -> dict[str, float]:
        return {"steps": self.steps, "drift": self.drift, "boundaries": self.boundaries,
                "validation": self.validation, "post": self.post, "init": self.init,
                "floor": self.floor, "sigma": self.sigma, "unseen_high": self.unseen_high,
                "unseen_low": self.unseen_low,
                **{k: v for k, v in (("reach_low", self.reach_low),
                                     ("reach_high", self.reach_high)) if math.isfinite(v)}}

    @classmethod
    def from_dict(cls, d: dict[str, float]) -> Uncertainty:
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


def interval(total: float, u: Uncertainty, cal: Calibration | None = None) -> tuple[float, float]:
    """[low, high] around the point estimate: total +- q*sigma, but no further than the
    boundaries can reach (none stalling, every one stalling at its longest) with the rest of
    the uncertainty around that."""
    cal = cal or Calibration.load()
    half = cal.q * u.sigma
    rest = cal.q * u.sigma_without_boundaries
    low = total - min(half, u.reach_low + rest) - u.unseen_low
    high = total + min(half, u.reach_high + rest) + u.unseen_high
    return max(0.0, low), high
