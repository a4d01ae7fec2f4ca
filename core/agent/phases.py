"""A program that trains in phases, one loop after another (pretrain then fine-tune, a warm-up
loop, fit() then fit() again, several GradientTape loops): the part of the ProbeSession that
keeps them. The probe ends each phase's loop - not the program - the way its adapter ends a
loop (a loader or dataset run dry, fit()'s own exit), and the program goes on into its next loop,
which the adapter reports as a new phase: a `phase` event, a fresh stop policy, its own length
and epochs. Only under the agent, whose `end` times the exit the last phase leads to; `done` is
written at that exit, when training was over.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from .anchors import LoopAnchor
from .policy import StopPolicy

if TYPE_CHECKING:
    from .emit import Emitter

# Phases the probe times before it stops the program: a program that starts loops without end
# (a sweep written as separate loops) is not probed whole.
MAX_PHASES = 16


class Phases:
    """Mixed into ProbeSession: the phase it is in, the loop that phase runs in, and how the
    probe left it."""

    # the session's own, used here
    emitter: Emitter
    policy: StopPolicy
    under_agent: bool
    trained: bool
    steps_per_epoch: int
    total_steps: int
    epoch: int | None
    boundaries: int
    stop_requested: bool
    waiting_for_boundary: bool
    _periodic_said: bool
    _periodic_to: int | None
    every: int | None
    every_epochs: tuple[int, int] | None
    until: str | None
    earliest_epochs: int | None
    earliest_steps: int | None
    earliest_pass: int | None
    planned_steps: int | None
    planned_epochs: int | None
    _plan_epochs: int | None
    going_on: dict[str, float]

    def init_phases(self) -> None:
        self.phase = 1
        self.anchor: LoopAnchor | None = None  # the loop the current phase runs in
        self.phase_stopped = False  # the probe ended the current phase's loop
        self.any_stopped = False  # ... some phase's
        self.left_at: float | None = None  # when the stopped loop last gave the program nothing
        self.done_phase: int | None = None  # the phase whose `done` was written at its stop
        self._exit_registered = False

    def log(self, level: str, msg: str, code: str = "") -> None:
        raise NotImplementedError  # the session's

    def mark_done(self, status: str, reason: str = "", at: float | None = None) -> None:
        raise NotImplementedError  # the session's

    def _phase_field(self) -> dict[str, int]:
        return {"phase": self.phase} if self.phase > 1 else {}

    @property
    def phases_enabled(self) -> bool:
        """Only under the agent: in-process use (ProbeCallback, StepTimer) ends the program."""
        return self.under_agent

    def end_phase(self, at_exit: bool = True) -> None:
        """The policy stopped this phase: the adapter ends its loop and the program goes on
        (to a later phase, or its post-training work). `done` is written at the exit (by
        ``at_exit``, registered here unless the adapter calls it from its own)."""
        self.phase_stopped = self.any_stopped = True
        self.left_at = time.monotonic()
        self.emitter.log("info", f"probe: phase {self.phase}: {self.policy.reason}; its loop is "
                         "ended, the program goes on", code="phase")
        if at_exit and not self._exit_registered:
            import atexit

            self._exit_registered = True
            atexit.register(self.at_exit)

    def loop_left(self) -> None:
        """The stopped loop gave the program nothing again (an empty pass, a StopIteration):
        training was over at least until now."""
        if self.phase_stopped:
            self.left_at = time.monotonic()

    def more_phases(self) -> bool:
        """A later phase may be probed (else the adapter stops the program as before)."""
        return self.phases_enabled and self.phase < MAX_PHASES

    def new_phase(self, *, steps_per_epoch: int, loop: str, anchor: LoopAnchor | None) -> None:
        """Training goes on in another loop: the events from here on are phase ``phase + 1``,
        with its own policy (a fresh count of steps), length and epochs."""
        previous = "probe-done" if self.phase_stopped else "complete"
        self.phase += 1
        self.anchor = anchor
        self.phase_stopped = False
        self.steps_per_epoch = int(steps_per_epoch or 0)
        self.total_steps = 0
        self.epoch = None
        self.boundaries = 0
        self.stop_requested = self.waiting_for_boundary = self._periodic_said = False
        self.every = self.planned_steps = self.planned_epochs = self._plan_epochs = None
        self.until = self._periodic_to = None
        self.every_epochs = None
        self.earliest_epochs = self.earliest_steps = self.earliest_pass = None
        self.going_on = {}  # what it goes on for is its own (going_on.py)
        policy = self.policy
        self.policy = StopPolicy(max_steps=policy.max_steps, max_seconds=policy.max_seconds,
                                 target_ci=policy.target_ci, min_steps=policy.min_steps,
                                 min_steady_s=policy.min_steady_s,
                                 full=policy.full, boundary_budget=policy.boundary_budget,
                                 boundaries_wanted=policy.boundaries_wanted,
                                 job_share=policy.job_share, statistic=policy.statistic)
        self.policy.begin()
        self.emitter.emit("phase", index=self.phase, loop=loop[:300],
                          steps_per_epoch=self.steps_per_epoch, previous=previous)

    def unwound(self) -> None:
        """The probe unwound the program out of a loop (it had no loader or dataset to run
        dry): if the source trains on after that loop, the log says that later phases went
        unseen (the estimate then covers the phases seen, with wider bounds)."""
        if self.anchor is None:
            return
        from .anchors import trains_after

        where = trains_after(self.anchor)
        if where is not None:
            self.log("warning", f"the program trains on after the loop the probe unwound "
                     f"({where}): the estimate covers phase {self.phase} of at least "
                     f"{self.phase + 1}", code="more-phases")

    def at_exit(self) -> None:
        """The program is exiting after the probe ended some phase's loop: training was over
        when the last loop was left (a stopped one: when it last gave nothing; one that ran to
        its end: its last step), the rest is post-training work, timed by the agent's `end`."""
        if self.trained or self.emitter.ended or not self.any_stopped:
            return
        if self.done_phase == self.phase:  # its `done` is out already (fit()'s teardown)
            self.trained = True
            self.finish_quietly()
            return
        at = self.left_at if self.phase_stopped else self.emitter.last_timed
        self.mark_done("probe-done", self.policy.reason or "the probe stopped", at=at)

    def phase_done(self, reason: str) -> None:
        """fit() left its loop on the probe's stop: a timed `done` now (its dt is the fit's
        teardown, as for a program of one fit()), though a later phase may follow."""
        self.done_phase = self.phase
        self.emitter.timed("done", status="probe-done", reason=reason[:2000])

    def finish_quietly(self) -> None:
        raise NotImplementedError  # the session's
