"""Per-probe state: fold schema-v1 events one at a time into what the estimator needs.

Folding is O(1) per event (appends and running sums); order statistics for the steady-state step
time are computed on demand and cached until the next step arrives.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .agent.steady import DEFAULT_STATISTIC, StepSeries
from .events import End, Epoch, Event, Init, Log, Sample, Start, Step, Val


@dataclass(slots=True)
class ValTiming:
    epoch: int
    dt: float
    steps: int


@dataclass
class ProbeState:
    """Everything a probe's log has told us so far."""

    start: Start | None = None
    t_init: float | None = None
    t_it1: float | None = None
    steady: StepSeries = field(default_factory=StepSeries)
    # dt of the first step of each later epoch: steady step + the epoch-boundary cost.
    boundary_steps: list[float] = field(default_factory=list)
    steps: int = 0
    steps_by_epoch: dict[int, int] = field(default_factory=dict)
    time_by_epoch: dict[int, float] = field(default_factory=dict)
    vals: list[ValTiming] = field(default_factory=list)
    epochs_done: list[int] = field(default_factory=list)
    metrics: list[tuple[int, dict[str, float]]] = field(default_factory=list)
    last_val_metrics: dict[str, float] = field(default_factory=dict)
    last_sample: Sample | None = None
    samples: int = 0
    peak_swap_mb: float = 0.0
    logs: list[tuple[str, str]] = field(default_factory=list)
    end: End | None = None
    last_t: float = 0.0
    elapsed: float = 0.0  # sum of timed dt: wall time covered by the log
    last_step_dt: float | None = None
    _epoch: int | None = None

    def fold(self, ev: Event) -> None:
        """Take one event into account."""
        if isinstance(ev, Step):
            self._fold_step(ev)
        elif isinstance(ev, Sample):
            self.samples += 1
            self.last_sample = ev
            if ev.swap_mb is not None and ev.swap_mb > self.peak_swap_mb:
                self.peak_swap_mb = ev.swap_mb
        elif isinstance(ev, Val):
            self.vals.append(ValTiming(ev.epoch, ev.dt, ev.steps))
            self.time_by_epoch[ev.epoch] = self.time_by_epoch.get(ev.epoch, 0.0) + ev.dt
            self.elapsed += ev.dt
            if ev.metrics:
                self.last_val_metrics = ev.metrics
        elif isinstance(ev, Epoch):
            self.epochs_done.append(ev.epoch)
            self.metrics.append((ev.epoch, ev.metrics))
        elif isinstance(ev, Init):
            self.t_init = ev.dt
            self.elapsed += ev.dt
        elif isinstance(ev, Start):
            self.start = ev
        elif isinstance(ev, End):
            self.end = ev
            self.elapsed += ev.dt
        elif isinstance(ev, Log):
            if len(self.logs) < 200:
                self.logs.append((ev.level, ev.msg))
        self.last_t = ev.t

    def _fold_step(self, ev: Step) -> None:
        dt = ev.dt
        self.steps += 1
        self.elapsed += dt
        self.last_step_dt = dt
        e = ev.epoch
        self.steps_by_epoch[e] = self.steps_by_epoch.get(e, 0) + 1
        self.time_by_epoch[e] = self.time_by_epoch.get(e, 0.0) + dt
        if self.t_it1 is None:
            self.t_it1 = dt
        elif e != self._epoch:
            self.boundary_steps.append(dt)
        else:
            self.steady.add(dt)
        self._epoch = e

    # ---- derived values -------------------------------------------------------------------

    @property
    def probe_id(self) -> str:
        return self.start.probe if self.start else ""

    @property
    def steps_per_epoch(self) -> int:
        return self.start.steps_per_epoch if self.start else 0

    @property
    def val_steps(self) -> int:
        return self.start.val_steps if self.start else 0

    @property
    def truncated(self) -> bool:
        return self.end is None

    @property
    def status(self) -> str:
        return self.end.status if self.end else "running"

    def step_time(self, statistic: str = DEFAULT_STATISTIC) -> tuple[float, float, float]:
        """Steady-state step time (estimate, low, high), 95 % interval."""
        return self.steady.interval(statistic)

    def validation_times(self) -> tuple[float | None, float | None, bool]:
        """(T_val1, T_val, partial) for a full validation pass.

        A partial pass (fewer batches than ``val_steps``) is scaled by ``val_steps/steps``. The
        first pass carries a one-off cost (tracing the test function) that does not grow with
        the number of batches: when a later pass of the same length exists, that cost is taken
        as the difference between the two and added once, instead of being scaled up.
        """
        if not self.vals:
            return None, None, False
        full = self.val_steps

        def scale(v: ValTiming) -> float:
            return full / v.steps if full and v.steps and v.steps < full else 1.0

        first = self.vals[0]
        later = self.vals[1:]
        partial = any(full and v.steps < full for v in self.vals)
        if not later:
            t1 = first.dt * scale(first)
            return t1, t1, partial
        t_val = sum(v.dt * scale(v) for v in later) / len(later)
        same_len = [v.dt for v in later if v.steps == first.steps]
        if scale(first) > 1.0 and same_len:
            one_off = max(0.0, first.dt - sum(same_len) / len(same_len))
            return t_val + one_off, t_val, partial
        return first.dt * scale(first), t_val, partial

    def full_epochs(self) -> list[tuple[int, float]]:
        """(epoch, wall time) of epochs seen whole: all N_it steps and an `epoch` event."""
        n_it = self.steps_per_epoch
        out = []
        for e in self.epochs_done:
            if n_it and self.steps_by_epoch.get(e, 0) >= n_it:
                out.append((e, self.time_by_epoch.get(e, 0.0)))
        return out

    def boundary_overheads(self, t_it: float) -> list[float]:
        """Epoch-boundary cost of each later epoch: its first step minus a steady step."""
        return [max(0.0, b - t_it) for b in self.boundary_steps]

    def hint(self) -> str:
        """A short hardware hint: input-bound, swapping, or nothing to say."""
        s = self.last_sample
        if s is None:
            return ""
        if self.peak_swap_mb > 64 and (s.swap_mb or 0) > 64:
            return f"swapping ({s.swap_mb:.0f} MB): host memory too small for this batch size"
        if s.gpu_util:
            util = sum(s.gpu_util) / len(s.gpu_util)
            if util < 40 and self.steps > 5:
                return f"GPU {util:.0f}% busy: likely input-bound (data loading / CPU)"
        return ""


def fold_all(events: list[Event] | tuple[Event, ...]) -> ProbeState:
    state = ProbeState()
    for ev in events:
        state.fold(ev)
    return state


def finite(x: float | None) -> bool:
    return x is not None and not math.isnan(x) and not math.isinf(x)
