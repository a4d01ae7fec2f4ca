"""What a probe goes on for after it has seen enough steps: the program's periodic work (every K
steps, or after every K-th epoch), an epoch boundary (or two), the first epoch's end where an
epoch's length is unknown, the program's own end where nothing says how long the job is - each
within the boundary budget (a loop that trains until a condition, or an early stop that can end
it within them: a few).
The part of the ProbeSession that decides it (``ProbeSession.step`` asks in that order).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .emit import Emitter
    from .policy import StopPolicy

# A loop that trains until a condition: the boundary budgets it may go on for its own end
UNTIL_BUDGETS = 4


class GoingOn:
    """Mixed into ProbeSession (whose attributes these are)."""

    emitter: Emitter
    policy: StopPolicy
    every: int | None
    every_epochs: tuple[int, int] | None
    epoch: int | None
    until: str | None
    earliest_epochs: int | None
    earliest_steps: int | None
    earliest_pass: int | None
    total_steps: int
    steps_per_epoch: int
    boundaries: int
    planned_steps: int | None
    planned_epochs: int | None
    _plan_epochs: int | None
    stop_requested: bool
    waiting_for_boundary: bool
    _periodic_said: bool
    _periodic_to: int | None  # the steps it goes on to for the periodic work (0: none)
    going_on: dict[str, float]  # what it goes on for, until when (monotonic), this phase
    _boundary_by: int
    _waiting_since: float

    def _wait_for_periodic(self) -> bool:
        """The program does periodic work every K steps (an evaluation, a checkpoint) that the
        probe has not reached yet: go on to step 2K + 1 to time two, where half the budget
        affords it - a first evaluation may warm up (Lightning validating every 120 steps:
        1.42 s, then 1.03 s; Keras traces its test function at the first) - else to step K + 1,
        to time one. Decided once, when the probe would stop."""
        k = self.every
        if k and self._periodic_to is None:  # (the second within half the budget: a refinement)
            budget = self._boundary_budget()
            self._periodic_to = next((to for to, share in ((2 * k + 2, 0.5), (k + 2, 1.0))
                                      if self.total_steps < to
                                      and self.policy.boundary_affordable(
                                          to - self.total_steps, share * budget) is not None), 0)
        if not k or self.total_steps >= (self._periodic_to or 0):
            if k and self._periodic_said and "periodic" not in self.policy.reason:
                self.policy.reason += f"; went on to time the periodic work every {k} steps"
            return False
        if not self._periodic_said:
            self._periodic_said = True
            to = self._periodic_to or 0  # (steps seen: to step to - 1, from 0)
            cost = (to - self.total_steps) * self.policy.series.mean()
            self.emitter.log("info", f"probe: {self.policy.reason}; going on to step {to - 1} "
                             f"(~{cost:.0f}s) to time the periodic work every {k} steps")
        return True

    def _wait_for_epoch_work(self) -> bool:
        """The program works after some epochs only (``if epoch % 10 == 0: evaluate()``; the
        plan's every_epochs) and the probe has not reached the first of them (``(epoch + 1) %
        10 == 0``: after the 10th): go on to the next epoch's first step to time it, if the
        boundary budget affords the steps there - else the estimate has no such pass in it."""
        if not self.every_epochs or not self.steps_per_epoch or self.epoch is None:
            return False
        first = self.every_epochs[1]  # the first epoch (from 0) the work follows
        if self.epoch > first:
            return False
        if "epoch-work" not in self.going_on:
            left = (first + 1) * self.steps_per_epoch - self.total_steps
            if self.policy.boundary_affordable(left, self._boundary_budget()) is None:
                return False
        return self._go_on("epoch-work", lambda budget: budget,
                           f"the program works after epoch {first + 1} (every "
                           f"{self.every_epochs[0]}): going on up to {{:.0f}} s to time it",
                           f"; went on for the work after epoch {first + 1}, which did not come")

    def _wait_for_epoch(self) -> bool:
        """The job's epochs are known but not an epoch's length (a dataset of unknown
        cardinality, as Keras' make_csv_dataset gives: Keras itself learns it at the end of the
        first epoch): go on to the first boundary, within the boundary budget, to count it.
        Stopped before, such a probe could only be ranked per 1 000 steps."""
        if self.steps_per_epoch or self.boundaries or not self.planned_epochs \
                or self.planned_steps or self.policy.began is None:
            return False
        return self._go_on("epoch", lambda budget: budget,
                           "an epoch's length is not known: going on up to {:.0f} s to the "
                           "first epoch's end", "; went on for the first epoch's end (its "
                           "length unknown), which did not come")

    def _wait_for_end(self) -> bool:
        """Nothing says how long the job is - no steps, no epochs, in the program or its
        settings (a loop that trains until its loss is small enough): go on a while in case the
        program ends by itself, since a run seen whole is its own answer where a stopped one can
        only be ranked per 1 000 steps. A while: as long again as the probe took so far (at
        least 5 s), within the boundary budget - a short job is seen whole, a long one costs
        the probe at most twice its length. A loop that trains until a condition holds (the
        plan's ``until``: a reward reached, a loss small enough) has a length only its run can
        tell: up to UNTIL_BUDGETS boundary budgets (2 min by default)."""
        if self.planned_steps or self.planned_epochs or self.policy.began is None:
            return False
        if self.until:
            return self._go_on("end", lambda budget: UNTIL_BUDGETS * budget,
                               f"the program trains until {self.until[:120]}: going on up to "
                               "{:.0f} s in case that comes", "; went on for the program's own "
                               "end (it trains until a condition), which did not come")
        return self._go_on("end", lambda budget: min(budget, max(5.0, self.emitter.now())),
                           "the job's length is not in the program: going on up to {:.0f} s "
                           "in case it ends by itself", "; went on for the program's own end "
                           "(its length is not in the program), which did not come")

    def _wait_for_early_end(self) -> bool:
        """An early stop (Keras' or Lightning's EarlyStopping, the Hugging Face Trainer's
        EarlyStoppingCallback, a patience the program's own loop breaks on) can end training
        before its planned length, at a point only the run can tell: where its soonest end (the
        plan's ``earliest_epochs`` - or ``earliest_steps``: a job of one loop of steps, an
        evaluation every K steps) comes within UNTIL_BUDGETS configured boundary budgets at the
        steady step time, go on up to those for the program's own end - a run seen whole is its
        own answer, where the planned
        length's is only an upper bound (keras.io's anomaly detector: 7 of 50 epochs). Not from
        the job's share: that is of the planned length's, which the run may never reach."""
        n_it = self.steps_per_epoch
        # the job ends where its first limit comes (a plan of epochs and steps - the loops
        # around a step - keeps its epochs apart; Lightning's max_steps may come first)
        epochs = self.planned_epochs or self._plan_epochs
        ends = [t for t in (self.planned_steps, (epochs or 0) * n_it) if t]
        if self.earliest_steps:
            soonest, unit, planned = self.earliest_steps, "step", min(ends, default=0)
            steps = (soonest, planned)
        else:
            soonest, unit, planned = self.earliest_epochs or 0, "epoch", epochs or 0
            steps = (soonest * n_it, min(ends, default=0))
        if not (soonest and planned and 0 < steps[0] < steps[1]) \
                or self.policy.began is None or not self.policy.series.n:
            return False
        most = UNTIL_BUDGETS * self.policy.boundary_budget
        if "early" not in self.going_on:
            to_soonest = max(0, steps[0] - self.total_steps) * self.policy.series.mean()
            if to_soonest > most:
                return False
            if self.earliest_pass and not self._seen_whole_within(steps[1], most):
                return False  # a break that shortens each epoch's loop never ends training
                # early: going on is worth it only where the run may be seen to its end
        return self._go_on("early", lambda budget: most,
                           f"an early stop can end training from {unit} {soonest} of {planned}: "
                           "going on up to {:.0f} s in case it does", "; went on for an early "
                           "stop, which did not come")

    def _seen_whole_within(self, planned: int, seconds: float) -> bool:
        """The rest of ``planned`` steps, at the pace so far (boundaries and the program's work
        between loops included), may end within ``seconds``."""
        began = self.policy.began  # (monotonic)
        if began is None or self.total_steps <= 0:
            return False
        pace = max(0.0, time.monotonic() - began) / self.total_steps
        return max(0, planned - self.total_steps) * pace <= seconds

    def _go_on(self, what: str, seconds: Callable[[float], float], said: str,
               gave_up: str) -> bool:
        """Go on until ``seconds(budget)`` past the first time this is asked (this phase's
        ``going_on[what]``), said then; past it, stop, the reason saying ``gave_up`` once."""
        now = time.monotonic()
        until = self.going_on.get(what)
        if until is None:
            budget = self._boundary_budget()
            if budget <= 0:
                return False
            more = seconds(budget)
            until = self.going_on[what] = now + more
            self.emitter.log("info", f"probe: {self.policy.reason}; {said.format(more)}")
        if now < until:
            return True
        if gave_up not in self.policy.reason:
            self.policy.reason += gave_up
        return False

    def _boundary_budget(self) -> float:
        """Seconds the probe may spend reaching epoch boundaries: the configured budget, or 5 %
        of the job predicted so far when that is more (long jobs: a boundary seen beats a
        boundary bounded, and still costs little next to the job)."""
        budget = self.policy.boundary_budget
        if budget <= 0:
            return 0.0
        steps = self.planned_steps or (self.planned_epochs or 0) * self.steps_per_epoch
        if steps and self.policy.series.n:
            job = steps * self.policy.series.mean()
            budget = max(budget, self.policy.job_share * job)
        return budget

    def _steps_left_in_epoch(self, step: int) -> int:
        """Steps from ``step`` (this epoch's, from 0) to the epoch's end: its length's, else,
        where the plan counts a loop of epochs over passes of at most so many steps (a break
        may end one sooner: keras.io's PPO, whose rollout - the work between its epochs - a
        probe stopped in the first epoch never timed), that most; -1 where nothing says."""
        n, epochs = self.steps_per_epoch, self._plan_epochs or 0
        if not n and self.planned_steps and epochs > 1 and self.planned_steps % epochs == 0:
            n = self.planned_steps // epochs
        return n - step - 1 if n else -1

    def _boundary_within(self, steps: int) -> None:
        """The boundary waited for comes after ``steps`` more steps; half an epoch past that, not."""
        self._boundary_by = self.total_steps + steps + max(2, steps // 2)

    def _after_boundary(self) -> None:
        """A boundary was crossed while the probe went on for it: another one if affordable."""
        spent = time.monotonic() - self._waiting_since
        more = None
        if self.boundaries < self.policy.boundaries_wanted and self.steps_per_epoch:
            more = self.policy.boundary_affordable(self.steps_per_epoch,
                                                   self._boundary_budget() - spent)
        self._boundary_within(self.steps_per_epoch)
        if more is None:
            self.stop_requested = True
            self.waiting_for_boundary = False
            n = self.boundaries
            self.policy.reason += f"; went on to time {'one epoch boundary' if n == 1 else f'{n} epoch boundaries'}"
