"""When a probe has seen enough: fixed step count, time budget, or a tight confidence interval."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from .steady import DEFAULT_STATISTIC, StepSeries

DEFAULT_MAX_STEPS = 30  # a probe's length when nothing else says when to stop (probe_length)
# ... and the steady steps it goes on for past that, where the steps are short: 30 steps of a
# millisecond are 30 ms of evidence, most of it the first calls' warm-up (pytorch/tutorials'
# char-RNN generation, 1.2 ms steps: probed 30 / 300 / 3 000 steps, +11 / +5 / +3 %)
DEFAULT_MIN_STEADY_S = 1.0
STEADY_STEP_CAP = 100  # ... but never past this many times the step limit


def probe_length(max_steps: int | None, target_ci: float | None, max_seconds: float | None,
                 full: bool = False) -> int | None:
    """The one rule for a probe's step limit, here and for probecast (the agent ships alone, so
    the rule lives with it): the given limit, else DEFAULT_MAX_STEPS unless another stop - a CI
    target, a time limit, the whole training - is given."""
    if max_steps is None and target_ci is None and max_seconds is None and not full:
        return DEFAULT_MAX_STEPS
    return max_steps


def steady_floor(max_steps: int | None, target_ci: float | None, max_seconds: float | None,
                 full: bool = False, given: float | None = None) -> float:
    """Seconds of steady steps a step limit waits for (``StopPolicy.min_steady_s``): the given
    value, else DEFAULT_MIN_STEADY_S where the default length applies (no limit, CI target or time
    given), else none - a user's own step count is kept exactly."""
    if given is not None:
        return given
    if max_steps is None and target_ci is None and max_seconds is None and not full:
        return DEFAULT_MIN_STEADY_S
    return 0.0


@dataclass
class StopPolicy:
    """Counts steady steps (every step except the very first) and says when to stop.

    ``full`` never stops early. Otherwise the first of: ``max_steps`` steps in all (and, with
    ``min_steady_s``, steady steps adding up to that many seconds, up to STEADY_STEP_CAP times the
    limit), ``max_seconds`` since training began, or - with ``target_ci`` - the 95 % interval of
    the steady step time within ``target_ci`` (relative half-width) once ``min_steps`` steps were
    seen.
    """

    max_steps: int | None = DEFAULT_MAX_STEPS
    max_seconds: float | None = None
    target_ci: float | None = None
    min_steps: int = 10
    min_steady_s: float = 0.0
    full: bool = False
    # Seconds the probe may go on, once it has seen enough, to reach the next epoch and time one
    # real epoch boundary (Keras pays seconds there; a probe inside one epoch cannot see it).
    boundary_budget: float = 0.0
    boundaries_wanted: int = 2  # each boundary seen narrows the bounds on the ones not seen
    job_share: float = 0.05  # ... and the budget may grow to this share of the predicted job
    statistic: str = DEFAULT_STATISTIC
    series: StepSeries = field(default_factory=StepSeries)
    steps: int = 0
    began: float | None = None
    reason: str = ""

    def begin(self) -> None:
        if self.began is None:
            self.began = time.monotonic()

    def boundary_affordable(self, steps_left_in_epoch: int,
                            budget: float | None = None) -> float | None:
        """Seconds to the next epoch at the steady step time, if within the budget, else None."""
        budget = self.boundary_budget if budget is None else budget
        if budget <= 0 or steps_left_in_epoch < 0 or self.series.n == 0:
            return None
        cost = steps_left_in_epoch * self.series.mean()
        return cost if cost <= budget else None

    def observe(self, dt: float, steady: bool) -> None:
        self.steps += 1
        if steady:
            self.series.add(dt)

    def _steady_enough(self) -> bool:
        """Past the step limit: whether the steady steps add up to ``min_steady_s`` (or the cap
        is reached)."""
        assert self.max_steps is not None
        return (self.min_steady_s <= 0 or self.series.total() >= self.min_steady_s
                or self.steps >= STEADY_STEP_CAP * self.max_steps)

    def should_stop(self) -> bool:
        if self.full:
            return False
        if self.max_steps is not None and self.steps >= self.max_steps and self._steady_enough():
            self.reason = f"max-steps {self.max_steps}"
            if self.steps > self.max_steps:  # short steps: went on for the floor, or the cap
                total = self.series.total()
                self.reason += (f"; went on to {self.steps} steps, {total:.2g} s of steady steps"
                                + ("" if total >= self.min_steady_s else
                                   f" (the most it goes on for {self.min_steady_s:g} s)"))
            return True
        if (
            self.max_seconds is not None
            and self.began is not None
            and time.monotonic() - self.began >= self.max_seconds
        ):
            self.reason = f"max-seconds {self.max_seconds:g}"
            return True
        if self.target_ci is not None and self.steps >= self.min_steps:
            width = self.series.relative_half_width(self.statistic)
            if math.isfinite(width) and width <= self.target_ci:
                self.reason = f"ci {width:.2%} <= {self.target_ci:.2%} after {self.steps} steps"
                return True
        return False
