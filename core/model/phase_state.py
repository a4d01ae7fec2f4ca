"""A later phase of a program that trains in phases (loops one after another; schema: the
`phase` event), folded apart from the first phase, which ProbeState holds as in a one-loop log;
and the program's periodic work as a probe saw it."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TypeVar

from ..agent.steady import StepSeries
from .events import Epoch, Event, Log, Memory, Plan, Val

_M = TypeVar("_M", Plan, Memory)


@dataclass(frozen=True)
class Periodic:
    """Work the program does every ``every`` steps besides training (an evaluation, a
    checkpoint): how much each time it was seen, on top of a step."""

    every: int
    extra_s: tuple[float, ...]  # each occurrence the probe saw
    reached: bool  # the probe ran past step ``every``: absent occurrences cost ~nothing
    source: str

    @property
    def mean_s(self) -> float | None:
        if self.extra_s:
            return sum(self.extra_s) / len(self.extra_s)
        return 0.0 if self.reached else None

    def per_s(self, n: int) -> float | None:
        """Each of ``n`` occurrences on average: the first as the first seen, the others as
        the later ones seen - a first evaluation may warm up (a new batch shape, a test
        function traced: Lightning validating every 120 steps took 1.42 s, then 1.03 s) - or
        all as the one seen."""
        if len(self.extra_s) < 2 or n < 1:
            return self.mean_s
        later = self.extra_s[1:]
        return (self.extra_s[0] + (n - 1) * sum(later) / len(later)) / n


@dataclass
class PhaseTiming:
    """A later phase of training (a loop after the first one: a fine-tune after a pretrain,
    fit() again): its own steps, epochs, validation and length, folded apart from the first
    phase's (which the ProbeState itself holds, as in a one-loop log)."""

    index: int  # from 2
    loop: str  # where its loop is written
    steps_per_epoch: int
    teardown_s: float = 0.0  # the last loop's teardown where a `done` timed it (fit())
    start_s: float | None = None  # its first step's dt (+ that teardown): the last loop's end,
    # this phase's setup and first step
    steady: StepSeries = field(default_factory=StepSeries)
    boundary_steps: list[float] = field(default_factory=list)  # first step of each later epoch
    steps: int = 0
    vals: list[float] = field(default_factory=list)  # each validation pass's dt
    epochs_done: int = 0
    plan: Plan | None = None
    stopped: bool = False  # the probe ended its loop (else it ran to its end)
    seconds: float = 0.0  # its wall time in the log (every timed event in it)
    _epoch: int | None = None

    def fold(self, ev: Event) -> bool:
        """One of its events (after its `phase` event): True when it is only this phase's
        (validation, plans, epochs); False for the run's own (samples, memory, done, end;
        the log that says the probe ended this loop is both)."""
        if isinstance(ev, Val):
            self.vals.append(ev.dt)
            self.seconds += ev.dt
        elif isinstance(ev, Plan):
            self.plan = merge_plan(self.plan, ev, self.plan_steps_per_epoch)
        elif isinstance(ev, Epoch):
            self.epochs_done += 1
        elif isinstance(ev, Log) and ev.code == "phase":
            self.stopped = True
            return False
        else:
            return False
        return True

    def add_step(self, dt: float, epoch: int) -> None:
        self.steps += 1
        self.seconds += dt
        if self.start_s is None:
            self.start_s = dt + self.teardown_s
            self.seconds += self.teardown_s
        elif epoch != self._epoch:
            self.boundary_steps.append(dt)
        else:
            self.steady.add(dt)
        self._epoch = epoch

    @property
    def planned_steps(self) -> int | None:
        """Its training steps as the program says them (a plan's steps, or epochs x N_it)."""
        plan, n_it = self.plan, self.plan_steps_per_epoch
        if plan is not None and plan.steps:
            return plan.steps
        if plan is not None and plan.epochs and n_it:
            return plan.epochs * n_it
        return None

    @property
    def plan_steps_per_epoch(self) -> int:
        if self.plan is not None and self.plan.steps_per_epoch:
            return self.plan.steps_per_epoch
        return self.steps_per_epoch


def merge(old: _M | None, new: _M, max_of: tuple[str, ...]) -> _M:
    """A later plan or memory event over an earlier one: its set fields win (the highest, for
    ``max_of``), the earlier one's stay where it says nothing."""
    if old is None:
        return new
    out = copy.copy(new)
    for name in new.__struct_fields__:
        mine, theirs = getattr(new, name), getattr(old, name)
        if mine is None or mine == "":
            setattr(out, name, theirs)
        elif name in max_of and theirs is not None:
            setattr(out, name, max(mine, theirs))
    return out


def merge_plan(old: Plan | None, new: Plan, steps_per_epoch: int) -> Plan:
    """A later plan over an earlier one (``merge``). One that only corrects the steps in an
    epoch (``steps_per_epoch``: learned after the first steps, the agent's first reading of a
    loader that fetches ahead halved it) also corrects the total where the earlier plan's was
    its epochs times the old count (``steps_per_epoch``: the count before this plan)."""
    out = merge(old, new, max_of=())
    if (old is not None and new.steps is None and new.steps_per_epoch and old.epochs
            and old.steps and steps_per_epoch and old.steps == old.epochs * steps_per_epoch):
        out.steps = old.epochs * new.steps_per_epoch
    return out
