"""Per-probe state: fold schema-v3 events (v1 and v2 logs too) one at a time into what the estimator
needs. Folding is O(1) per event (appends and running sums); order statistics for the steady-state
step time are computed on demand and cached until the next step arrives."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..agent.steady import DEFAULT_STATISTIC, StepSeries
from .events import (SCHEMA_VERSION, Block, Done, End, Epoch, Event, EventReader, Init, Log, Memory,
                     Phase, Plan, Sample, Start, Step, Val)
from . import work
from .phase_state import Periodic, PhaseTiming, merge, merge_plan

MIN_EVERY = 10  # periodic work every fewer steps than this stays in the steady step time


@dataclass(slots=True)
class ValTiming:
    epoch: int
    dt: float
    steps: int
    at_step: int = 0  # training steps seen before it
    at_block: int = 0  # training blocks seen before it (a log timed in blocks)


@dataclass(slots=True)
class BlockTiming:
    """A block of training timed as a whole (a log with no per-step events: MLPerf)."""

    index: int
    dt: float
    progress: float | None  # how far training had got at its end, in ``unit``
    unit: str


@dataclass
class ProbeState:
    """Everything a probe's log has told us so far."""

    start: Start | None = None
    t_init: float | None = None
    t_it1: float | None = None
    steady: StepSeries = field(default_factory=StepSeries)
    # dt of the first step of each later epoch: steady step + the epoch-boundary cost; of which
    # fit()'s `done` (a loop's fit() returning); and the program's own work between two fit()
    boundary_steps: list[float] = field(default_factory=list)  # calls (`outside`: no cost)
    boundary_epochs: list[int] = field(default_factory=list)  # ... the epoch each begins
    boundary_gaps: list[float] = field(default_factory=list)
    boundary_outside: list[float] = field(default_factory=list)
    steps: int = 0
    steps_by_epoch: dict[int, int] = field(default_factory=dict)
    time_by_epoch: dict[int, float] = field(default_factory=dict)
    vals: list[ValTiming] = field(default_factory=list)
    epochs_done: list[int] = field(default_factory=list)
    metrics: list[tuple[int, dict[str, float | None]]] = field(default_factory=list)
    last_sample: Sample | None = None
    samples: int = 0
    peak_swap_mb: float = 0.0
    # the highest host RSS and GPU memory (one GPU's) any sample showed: memory for logs
    # without a `memory` event (schema v1/v2), and a floor under one that has it
    peak_rss_mb: float = 0.0
    peak_gpu_mem_mb: float = 0.0
    logs: list[tuple[str, str, str]] = field(default_factory=list)  # (level, msg, code)
    codes: set[str] = field(default_factory=set)  # log codes: fit-loop, early-stop, ...
    plan: Plan | None = None  # the job's length as the program said it (fields merged, latest wins)
    memory: Memory | None = None  # peak memory (fields merged: the highest peak of each)
    done: Done | None = None  # training over; end.dt is then the program's post-training work
    hook_s: float = 0.0  # the agent's own time inside each steady step (done.hook_ms): off them
    agent_init_s: float = 0.0  # the agent's own start-up inside T_init (init.agent_s): off it
    done_dts: list[float] = field(default_factory=list)
    end: End | None = None
    last_t: float = 0.0
    elapsed: float = 0.0  # sum of timed dt: wall time covered by the log
    last_step_dt: float | None = None
    disorder: int = 0  # steps whose time or epoch went backwards (out of order, repeated)
    # steps where the program's periodic work (plan.every) may have landed: (index, dt); kept
    # out of the steady series, judged against it (periodic())
    periodic_steps: list[tuple[int, float]] = field(default_factory=list)
    blocks: list[BlockTiming] = field(default_factory=list)  # training timed only in blocks
    # later phases of training (loops after the first): the events after a `phase` are theirs
    phases: list[PhaseTiming] = field(default_factory=list)
    first_phase_stopped: bool = False  # the probe ended the first phase's loop (a `phase` log)
    _every: int = 0
    _val_every: int = 0  # the plan's K at any K: validation passes every K steps are its own
    _epoch: int | None = None
    _last_step_t: float = -1.0
    _done_pending: float = 0.0  # dt of `done` events since the last step

    def fold(self, ev: Event) -> None:
        """Take one event into account."""
        if type(ev) is Step:
            self.fold_step(ev.t, ev.dt, ev.epoch, ev.outside)
            return
        if self.phases and self._fold_phase(ev):
            self.last_t = ev.t
            return
        if isinstance(ev, Sample):
            self.samples += 1
            self.last_sample = ev
            self.peak_swap_mb = max(self.peak_swap_mb, ev.swap_mb or 0.0)
            self.peak_rss_mb = max(self.peak_rss_mb, ev.rss_mb or 0.0)
            if ev.gpu_mem_mb and max(ev.gpu_mem_mb) > self.peak_gpu_mem_mb:
                self.peak_gpu_mem_mb = max(ev.gpu_mem_mb)
        elif isinstance(ev, Val):
            self.vals.append(ValTiming(ev.epoch, ev.dt, ev.steps, self.steps, len(self.blocks)))
            self.time_by_epoch[ev.epoch] = self.time_by_epoch.get(ev.epoch, 0.0) + ev.dt
            self.elapsed += ev.dt
        elif isinstance(ev, Epoch):
            self.epochs_done.append(ev.epoch)
            self.metrics.append((ev.epoch, ev.metrics))
        elif isinstance(ev, Block):
            self.blocks.append(BlockTiming(ev.index, ev.dt, ev.progress, ev.unit))
            self.elapsed += ev.dt
        elif isinstance(ev, Init):
            self.t_init = ev.dt
            self.agent_init_s = min(ev.agent_s, ev.dt)
            self.elapsed += ev.dt
        elif isinstance(ev, Start):
            self.start = ev
        elif isinstance(ev, End):
            self.end = ev
            self.elapsed += ev.dt
            if ev.agent_s and self.t_init is None:  # no step: the agent's start-up said here
                self.agent_init_s = min(ev.agent_s, ev.t)
        elif isinstance(ev, Done):
            self._fold_done(ev)
        elif isinstance(ev, Plan):
            self.plan = merge_plan(self.plan, ev, self.steps_per_epoch)
            every = self._val_every = self.plan.every or 0  # work every few steps is part of
            self._every = every if every >= MIN_EVERY else 0  # a steady step (not validation)
        elif isinstance(ev, Memory):
            self.memory = merge(self.memory, ev, max_of=(
                "device_peak_mb", "device_reserved_mb", "host_peak_mb", "host_vm_peak_mb"))
        elif isinstance(ev, Log):
            if len(self.logs) < 200 or ev.code:
                self.logs.append((ev.level, ev.msg, ev.code))
            if ev.code:
                self.codes.add(ev.code)
            if ev.code == "phase" and not self.phases:
                self.first_phase_stopped = True
        elif isinstance(ev, Phase):  # the last loop's teardown (fit()'s `done`) starts it
            self.phases.append(PhaseTiming(ev.index, ev.loop, ev.steps_per_epoch,
                                           teardown_s=self._done_pending))
            self._done_pending = 0.0
        self.last_t = ev.t

    def _fold_done(self, ev: Done) -> None:
        self.done = ev
        self.elapsed += ev.dt
        self.done_dts.append(ev.dt)
        self._done_pending += ev.dt  # fit() returned: if training goes on, part of a boundary
        if ev.hook_ms and not self.hook_s:  # the agent's own time in each step: not the program's
            self.hook_s = ev.hook_ms / 1000
            for series in (self.steady, *(p.steady for p in self.phases)):
                series.take_off(self.hook_s)

    def _fold_phase(self, ev: Event) -> bool:
        """An event of a later phase, folded into it (True); False: the run's own too."""
        folded = self.phases[-1].fold(ev)
        if isinstance(ev, Val):
            self.elapsed += ev.dt
        return folded

    def fold_step(self, t: float, dt: float, e: int, outside: float = 0.0) -> None:
        """A step event, from its values (the hot path: no record needed)."""
        self.last_t = t
        if self.phases:  # a later phase's step
            self._done_pending = 0.0
            self.phases[-1].add_step(dt, e)
            self.elapsed += dt
            self.last_step_dt = dt
            self._last_step_t = t
            return
        if t < self._last_step_t or (self._epoch is not None and e < self._epoch):
            self.disorder += 1  # a step out of order or repeated: said, not fatal
        self._last_step_t = t
        pending, self._done_pending = self._done_pending, 0.0
        if e == self._epoch:  # a steady step inside the current epoch
            index = self.steps
            self.steps += 1
            self.elapsed += dt
            self.last_step_dt = dt
            self.steps_by_epoch[e] += 1
            self.time_by_epoch[e] += dt
            if self._every and index % self._every < 2:
                self.periodic_steps.append((index, dt))  # the program's work every K steps?
            else:
                self.steady.add(dt)
            return
        self.steps += 1
        self.elapsed += dt
        self.last_step_dt = dt
        self.steps_by_epoch[e] = self.steps_by_epoch.get(e, 0) + 1
        self.time_by_epoch[e] = self.time_by_epoch.get(e, 0.0) + dt
        if self.t_it1 is None:
            self.t_it1 = dt
        elif self._epoch is not None:
            # fit() called in a loop: the previous call's teardown belongs to this boundary
            self.boundary_steps.append(dt + pending)
            self.boundary_epochs.append(e)
            self.boundary_gaps.append(pending)
            self.boundary_outside.append(min(outside, dt))
        else:
            self.steady.add(dt)
        self._epoch = e

    # ---- derived values -------------------------------------------------------------------

    def warnings(self) -> list[str]:
        """What a reader should be told about this log besides malformed lines."""
        out = []
        if self.start is not None and self.start.v > SCHEMA_VERSION:
            out.append(f"written by a newer probecast (schema v{self.start.v}); read as "
                       f"v{SCHEMA_VERSION}: newer fields are ignored")
        return out + ([f"{self.disorder} step(s) out of order or repeated"] if self.disorder else [])

    def left_files(self) -> list[str]:
        """The agent's warnings of what the stopped program left in its folder (leftovers.py),
        and that the length it read counts one of two alternating loops (lead.py)."""
        return [msg for _, msg, code in self.logs if code in ("left-files", "alternating-optimizers")]

    @property
    def probe_id(self) -> str:
        return self.start.probe if self.start else ""

    @property
    def steps_per_epoch(self) -> int:
        """N_it: the start's, or the plan's correction of it (learned at the second step)."""
        if self.plan is not None and self.plan.steps_per_epoch:
            return self.plan.steps_per_epoch
        return self.start.steps_per_epoch if self.start else 0

    @property
    def val_steps(self) -> int:
        return self.start.val_steps if self.start else 0

    @property
    def truncated(self) -> bool:
        return self.end is None

    @property
    def post_time(self) -> float | None:
        """Seconds from the end of training to the program's exit (its post-training work,
        teardown, interpreter shutdown), when the log saw the program exit by itself."""
        if self.done is None or self.end is None or self.end.exit_code is None:
            return None
        return self.end.dt

    @property
    def fit_end_time(self) -> float | None:
        """The teardown at the end of training (fit() returning; Keras waits on its input
        pipeline there as at an epoch boundary): the dt of the last `done` - only one after the
        last step ends training (earlier ones: fit() in a loop)."""
        if self.done is None or self.done.t < self._last_step_t:
            return None
        return self._done_pending

    @property
    def status(self) -> str:
        return self.end.status if self.end else "running"

    def step_time(self, statistic: str = DEFAULT_STATISTIC) -> tuple[float, float, float]:
        """Steady-state step time (estimate, low, high), 95 % interval. Work the program does
        every few steps (its plan's ``every`` under MIN_EVERY: a plot every 5th step) stays in
        the step time, trimmed over blocks of that many steps, so that trimming keeps it."""
        every = self.plan.every if self.plan is not None else None
        if statistic == "trimmed" and every and 1 < every < MIN_EVERY:
            blocks = self.steady.block_interval(every)
            if blocks is not None:
                return blocks
        return self.steady.interval(statistic)

    def validation_times(self) -> tuple[float | None, float | None, bool]:
        """(T_val1, T_val, partial) for a full validation pass (``work.validation_times``)."""
        return work.validation_times(self.vals, self.val_steps)

    def full_epochs(self) -> list[tuple[int, float]]:
        """(epoch, wall time) of epochs seen whole: all N_it steps and an `epoch` event."""
        n_it = self.steps_per_epoch
        return [(e, self.time_by_epoch.get(e, 0.0)) for e in self.epochs_done
                if n_it and self.steps_by_epoch.get(e, 0) >= n_it]

    @property
    def vals_are_periodic(self) -> bool:
        """Validation runs every K steps, not at each pass's end (``work.vals_are_periodic``)."""
        return work.vals_are_periodic(self._val_every, self.steps_per_epoch, self.vals)

    def periodic(self, t_it: float) -> Periodic | None:
        """The program's periodic work every K steps, as the probe saw it (``work.periodic``)."""
        by_k = self.vals_are_periodic
        k = self._every or (self._val_every if by_k else 0)
        source = self.plan.every_source if self.plan is not None else ""
        return work.periodic(k, self.periodic_steps, self.vals if by_k else [], self.steps,
                             source, t_it)

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
        if s.gpu_util and (util := sum(s.gpu_util) / len(s.gpu_util)) < 40 and self.steps > 5:
            return f"GPU {util:.0f}% busy: likely input-bound (data loading / CPU)"
        if s.gpu_mem_mb and s.gpu_mem_total_mb and self.steps > 5:
            used = sum(s.gpu_mem_mb) / max(1.0, sum(s.gpu_mem_total_mb))
            if used < 0.5:
                # the batch size that fills GPU memory was the cheapest per epoch (Kroutikov, 2016)
                return f"GPU memory {used:.0%} used: a larger batch size may be faster per epoch"
        return ""


def fold_lines(lines: Iterable[str], state: ProbeState, reader: EventReader) -> None:
    """Parse and fold a stream of log lines (steps, most of a log, take the short path)."""
    fold_step, feed, fold = state.fold_step, reader.feed_line, state.fold
    for line in lines:
        ev = feed(line)
        if ev is None:
            continue
        if type(ev) is Step:
            fold_step(ev.t, ev.dt, ev.epoch, ev.outside)
        else:
            fold(ev)


def fold_all(events: list[Event] | tuple[Event, ...]) -> ProbeState:
    state = ProbeState()
    for ev in events:
        state.fold(ev)
    return state

