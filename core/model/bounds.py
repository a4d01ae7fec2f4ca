"""Honest bounds: [low, high] must contain the real total at least 9 times in 10.

The point estimate extrapolates a few dozen steps to a whole run; what it cannot know shows up
as four kinds of error, each turned into seconds of uncertainty on the total:

- the steady step time: its 95 % interval from the probe, times the steps still to come;
- the epoch boundaries: their cost varies from epoch to epoch (Keras' input-pipeline teardown:
  0.05-9.6 s on 2 cores here), so one observed boundary says little - its spread is at least a
  fraction of its cost learned from recorded runs; a stall the probe did not meet is allowed
  for on the high side, as large as the recorded runs *of the same mechanism* needed;
- validation passes and the end-of-training teardown, likewise;
- start-up (T_init: imports, data loading): measured once, it varies from run to run with the
  page cache and the disk - a fraction of it learned from recorded runs;
- everything else (run-to-run noise, the machine's other load): a floor, relative to the total.

They are added in quadrature, and the interval is total ± q·sigma with q chosen on recorded runs
(split conformal: on the calibration runs, the smallest q that covers 90 % of them; reported on
programs the calibration never saw - benchmarks/accuracy.py).

**Per mechanism.** What happens at an epoch boundary depends on what drives the epochs, not on
the model: Keras ``fit`` (and TensorFlow loops over ``tf.data``) re-create an input iterator each
epoch and tearing the old one down can wait seconds on tf.data autotuning; a PyTorch
``DataLoader`` just starts another pass over its sampler. So each mechanism has its own constants,
measured on recorded runs of that mechanism (``mechanism()`` says which one a probe saw), and a
PyTorch probe whose boundaries were all cheap is not given Keras' stalls. A probe whose mechanism
has no recorded runs (a framework-free ``StepTimer`` loop, an unknown framework) gets the most
cautious set. The constants and where they were measured live in ``calibration.json``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .state import ProbeState


# What drives the epochs, as the probe saw it (the log's `start.framework` and `log` codes)
TF = "tf"  # Keras fit() and TensorFlow loops: a tf.data iterator per epoch, torn down after it
TORCH = "torch"  # PyTorch DataLoader passes (plain loops, Lightning, Hugging Face Trainer)
CAUTIOUS = TF  # no recorded runs of its own (StepTimer, other frameworks): the widest set
MECHANISMS = (TF, TORCH)


@dataclass(frozen=True)
class Calibration:
    q: float = 2.0  # multiplier on sigma (conformal, from the calibration runs)
    floor: float = 0.03  # relative noise floor on the total
    boundary_rel: float = 0.6  # spread of one boundary's cost, relative to its mean
    boundary_abs_s: float = 0.5  # ... and at least this many seconds per boundary
    unseen_boundary_s: float = 4.0  # the largest boundary stall recorded (seconds; reported)
    stall_ratio: float = 1.0  # a boundary may stall up to this x one epoch's time (high side)
    # ... and at most this long, for a mechanism whose recorded boundaries never stalled (1.5 x
    # the largest mean boundary cost of a recorded run); None: no cap - Keras' tf.data teardown
    # stalls grew with the job (35 s at 216 000 samples, against <= 10 s on small data sets)
    stall_cap_s: float | None = None
    boundary_min_s: float = 0.05  # the cheapest boundary recorded: the low side's
    val_rel: float = 0.3  # spread of a validation pass, relative
    post_rel: float = 0.2  # spread of the measured post-training work, relative
    init_rel: float = 0.1  # spread of start-up (T_init) from one run to the next, relative
    source: str = "defaults"

    mechanism: str = CAUTIOUS

    def stall_allowance(self, epoch_s: float) -> float:
        """How long one boundary still to come may stall, for an epoch of ``epoch_s``."""
        reach = self.stall_ratio * epoch_s
        return reach if self.stall_cap_s is None else min(reach, self.stall_cap_s)

    @classmethod
    def load(cls, mechanism: str = "") -> Calibration:
        """The constants for ``mechanism`` (``mechanism(state)``); unknown: the cautious set."""
        sets = _load_all()
        return sets.get(mechanism) or sets.get(CAUTIOUS) or Calibration()

    @classmethod
    def for_state(cls, state: ProbeState) -> Calibration:
        return cls.load(mechanism(state))


def mechanism(state: ProbeState) -> str:
    """Which recorded mechanism's constants fit this probe."""
    framework = (state.start.framework if state.start is not None else "").lower()
    if "torch-loop" in state.codes or framework.startswith(("torch", "lightning", "transformers")):
        return TORCH
    if framework.startswith(("keras", "tensorflow")) or "custom-loop" in state.codes:
        return TF
    return CAUTIOUS


def describe_mechanism(state: ProbeState) -> str:
    """The words for the detail view: what drives the epochs and which constants apply."""
    m = mechanism(state)
    framework = state.start.framework if state.start is not None else ""
    if m == TORCH:
        return (f"{framework or 'PyTorch'}: DataLoader epochs - boundary allowances measured "
                "on recorded PyTorch runs")
    if framework.lower().startswith(("keras", "tensorflow")):
        loop = "custom loop" if "custom-loop" in state.codes else "fit()"
        return (f"{framework} {loop}: a tf.data iterator per epoch, whose teardown can stall - "
                "allowances measured on recorded Keras runs")
    return (f"{framework or 'no framework named'}: no recorded runs of this mechanism - the most "
            "cautious allowances (Keras') apply")


@lru_cache(maxsize=1)
def _load_all() -> dict[str, Calibration]:
    """calibration.json: {"mechanisms": {name: {constant: value}}, ...}; a file of one flat set
    (older) applies to every mechanism."""
    try:
        text = resources.files(__package__).joinpath("calibration.json").read_text()
        data = json.loads(text)
    except (OSError, ValueError):
        return {}
    sets = data.get("mechanisms") if isinstance(data, dict) else None
    if not isinstance(sets, dict):
        sets = {m: data for m in MECHANISMS}
    out = {}
    for name, values in sets.items():
        if isinstance(values, dict):
            fields = {k: v for k, v in values.items() if k in Calibration.__dataclass_fields__
                      and k != "mechanism"}
            out[name] = Calibration(**fields, mechanism=name)
    return out


def load_pair_constants() -> dict[str, float]:
    """The constants of decisions between two probes (decisions.py), as measured."""
    try:
        data = json.loads(resources.files(__package__).joinpath("calibration.json").read_text())
    except (OSError, ValueError):
        return {}
    pairs = data.get("pairs") if isinstance(data, dict) else None
    return {k: float(v) for k, v in pairs.items() if isinstance(v, (int, float))} \
        if isinstance(pairs, dict) else {}


@dataclass(frozen=True)
class Uncertainty:
    """Seconds of uncertainty on the total, by source (what the detail view shows)."""

    steps: float
    boundaries: float
    validation: float
    fit_end: float
    post: float
    floor: float
    init: float = 0.0  # start-up
    unseen_high: float = 0.0  # costs the probe could not see: allowed for on the high side only
    unseen_low: float = 0.0  # costs it saw that may not come again: allowed for on the low side

    @property
    def sigma(self) -> float:
        return math.sqrt(self.steps ** 2 + self.boundaries ** 2 + self.validation ** 2
                         + self.fit_end ** 2 + self.post ** 2 + self.floor ** 2 + self.init ** 2)

    def as_dict(self) -> dict[str, float]:
        return {"steps": self.steps, "boundaries": self.boundaries,
                "validation": self.validation, "fit_end": self.fit_end, "post": self.post,
                "init": self.init, "floor": self.floor, "sigma": self.sigma, "unseen_high": self.unseen_high,
                "unseen_low": self.unseen_low}


def interval(total: float, u: Uncertainty, cal: Calibration | None = None) -> tuple[float, float]:
    """[low, high] around the point estimate: total ± q·sigma, never below what was measured."""
    cal = cal or Calibration.load()
    half = cal.q * u.sigma
    return max(0.0, total - half - u.unseen_low), total + half + u.unseen_high
