"""How the PyTorch loops adapter keeps the phases of a program that trains in several loops,
one after another (phases.py): the probe ends a phase by running its loaders dry, as it always
stopped a loop, so the loop ends through its own exit and the program goes on - to its
post-training work, or to its next loop, the next phase. Only the loop the probe stopped gets
empty passes (``inside`` its anchor): the next loop iterates its loaders, the same objects
included. A loop with no loader to run dry is left at its next line, as a ``break`` would
(loop_exit.py); where it cannot be, it is unwound (ProbeStop) at its next step.

A loop that trains a part at a time - one optimizer per layer, each layer's loop called from a
loop over the layers (pytorch/examples' forward-forward) - is a phase per part: an optimizer's
first step after a whole pass of the lead's loop, or after the probe left one, begins a phase as
long as that pass (length.one_pass), and the probe leaves only that pass's loop. Each phase's
epoch is checked at its second step (``_check_batches_per_step``).
"""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

from ..anchors import inside, inside_caller, loop_anchor
from ..epoch_marker import EpochMarker
from ..length import Length, one_pass
from ..loop_exit import epochs_exit, leave_epochs, leave_loops
from ..probe_session import ProbeSession, ProbeStop
from .base import Trainers
from .lead import LeadOptimizer


_UNREAD = object()  # a loop variable not read


class TorchPhases:
    """Mixed into TorchLoopsAdapter (whose attributes these are)."""

    session: ProbeSession
    trainers: Trainers
    trainers_at_stop: int  # the trainers the program had made when the probe stopped a loop
    trainers_at_begin: int  # ... when the current phase began
    loaders: dict[int, int | None]
    stopped: bool
    val: list[int] | None
    last_loader: int | None
    train_loader: int | None
    epoch: int
    index: int
    batches_since_step: int
    loop_epoch: int
    per_pass: tuple[int, int] | None
    unwind: bool
    phase_pending: bool
    fresh: bool
    left_pass: bool
    per_pass_phase: bool
    found: Length | None
    stepped: set[int]
    began_at: list[Any]  # _loop_values() at the phase's first step
    marker: EpochMarker  # the loop around the steps' loop, where it marks each epoch
    steps_per_epoch: int | None
    optimizers: int
    lead: LeadOptimizer

    def init_torch_phases(self) -> None:
        self.phase_pending = False  # a new phase begins at this step
        self.trainers_at_stop = 0
        self.trainers_at_begin = 0
        self.stepped = set()  # id() of every optimizer that stepped
        self.fresh = False  # this step is an optimizer's first after a pass of an outer loop
        self.left_pass = False  # the probe left only a pass of an outer loop (loop_exit.py)
        self.per_pass_phase = False  # this phase is such a pass: its length is the pass's
        self.part_depth = 1  # ... of the loops this many out from its step (_part_depth)
        self.found = None  # the length read at this phase's first step
        self.began_at = []
        self.marker = EpochMarker()

    def _drain(self) -> None:
        raise NotImplementedError  # the adapter's

    def _end_val(self) -> None:
        raise NotImplementedError  # the adapter's

    def _in_stopped_loop(self, key: int) -> bool:
        anchor = self.session.anchor
        if anchor is None:
            return key in self.loaders  # no loop known: every loader training used runs dry
        return inside(anchor, sys._getframe())

    def _left_the_loop(self) -> bool:
        """A step outside the current phase's loop: that loop ran to its end, another began."""
        anchor = self.session.anchor
        return (self.session.phases_enabled and anchor is not None
                and not inside_caller(anchor))

    def _next_phase(self) -> None:
        """A step after the probe stopped a loop, or outside the loop that ran: a new phase
        when it is another loop (and phases are left), else the stopped loop goes on without
        data and is unwound."""
        s = self.session
        anchor = s.anchor
        # a trainer made since the stop trains on from the stopped loop's own line: fastai's
        # fine_tune (two fit()s), a function making a Trainer called again
        made_since = len(self.trainers.made) > self.trainers_at_stop
        if not s.phases_enabled or (self.stopped and not self.fresh and not made_since and (
                anchor is None or inside(anchor, sys._getframe()))):
            raise ProbeStop(s.policy.reason or "the probe stopped")
        if not s.more_phases():
            s.log("warning", f"training went on in a phase past the probe's {s.phase}: the "
                  "program is stopped here; the estimate covers the phases seen",
                  code="phase-budget")
            raise ProbeStop(s.policy.reason or "the probe stopped")
        # a trainer made since the last phase ended is this phase's: it answers - since the
        # stop, or, where that phase ran to its end, since it began (the Lightning tutorials'
        # datamodules: a second Trainer(max_epochs=3) read as the first one's 2)
        made = self.trainers.made
        before = self.trainers_at_stop if self.stopped else self.trainers_at_begin
        if len(made) > before:
            del made[:before]
        self._drain()  # the last phase's steps are in the log before the new phase
        # An optimizer's first step after the probe left one pass of an outer loop: that loop
        # trains a part at a time (one optimizer per layer), each pass a phase of its own, as
        # long as its own loops (the outer loop's count is the passes, not this one's epochs).
        self.per_pass_phase = self.fresh
        self.part_depth = self._part_depth() if self.fresh else 1
        if self.fresh and self.found is not None:
            s.plan(**one_pass(self.found, self.part_depth).fields())
        if self.val is not None and self.val[0] == self.last_loader:
            self.val = None  # no validation: the new phase's training loader, its first pass
        self._end_val()
        self.stopped = False
        self.epoch = self.index = self.batches_since_step = self.loop_epoch = 0
        self.train_loader = None  # the loader this phase's steps consume: read at its step
        self.val = self.per_pass = None
        self.unwind = self.fresh = self.left_pass = False
        self.phase_pending = True

    def _adopt_loader(self) -> None:
        """The steps draw from a loader first iterated after training began, and not from the
        training loader since the last step: a new DataLoader for each pass (a fold's, in a
        k-fold loop; one rebuilt each epoch) - not validation, but the next pass of training."""
        if not (self.session.started and self.val is not None and self.val[1] > 0
                and self.val[0] == self.last_loader and self.batches_since_step == 0):
            return
        self.train_loader, self.batches_since_step = self.val
        self.val = None
        if self.index > 0:
            self.epoch += 1
            self.index = 0

    def _pass_done(self) -> bool:
        """The lead's loop ran a whole pass: its steps per epoch, as its loop or the loader it
        iterates says them (not a loader drawn from by next(): its length may be no pass of
        the loop at all - a full batch drawn once). An optimizer's first step after that (or
        after the probe left a pass) trains something not seen yet - a layer-wise trainer's
        next layer. A GAN's second optimizer first steps inside the lead's first pass."""
        n = self.loop_epoch or (self.session.steps_per_epoch if not self.unwind else 0)
        return self.session.started and self.session.phases_enabled and 0 < n <= self.index

    def _next_part(self, key: int) -> bool:
        """An optimizer's first step after the lead's loop ran a whole pass (or after the probe
        left a pass), in that loop entered again: a layer-wise trainer's next part - a phase of
        its own, one pass long. A GAN's second optimizer first steps inside the first pass; a
        new model's optimizer in a loop written elsewhere is a phase as long as that loop."""
        return key not in self.stepped and self.lead.steps > 1 and (
            (self.stopped and self.left_pass) or (not self.stopped and self._pass_done())) \
            and self._same_loop()

    def _loop_values(self) -> list[Any]:
        """What each loop around the step's own binds now (its ``for`` target; _UNREAD where it
        cannot be read): which iteration each is in."""
        frames: dict[Any, FrameType] = {}
        frame: FrameType | None = sys._getframe()
        while frame is not None:
            frames.setdefault(frame.f_code, frame)
            frame = frame.f_back
        out: list[Any] = []
        for lp in self.found.loops[1:] if self.found is not None else []:
            at = frames.get(lp.code)
            out.append(at.f_locals.get(lp.target, _UNREAD) if at is not None and lp.target
                       else _UNREAD)
        return out

    def _loop_passed(self) -> bool:
        """The program's loop of steps ran a pass: the loop around it moved on (epoch_marker.py),
        else its steps a pass (loop_epoch) were counted."""
        moved = self.marker.moved()
        return self.index >= self.loop_epoch if moved is None else moved and self.index > 0

    def _part_depth(self) -> int:
        """The loops a part runs in: those inside the innermost loop whose ``for`` moved on
        since the phase began (a layer-wise trainer's loop over its layers: 1, the layer's own);
        none moved - the same code called again, as pytorch/tutorials' nn_tutorial calls its
        fit() once per model - all of them."""
        if self.found is None:
            return 1
        for i, (was, now) in enumerate(zip(self.began_at, self._loop_values())):
            if was is not _UNREAD and now is not _UNREAD and not (was is now or (
                    isinstance(was, (int, str)) and was == now)):
                return i + 1
        return len(self.found.loops) or 1

    def _parts_recur(self) -> bool:
        """A new part began in the innermost loop whose ``for`` moved on since the phase began;
        a readable loop outside that one runs every part again - a model and optimizer per fold
        in a loop over epochs (k-fold cross-validation): the job the plan read, not a part at a
        time as a layer-wise trainer's."""
        if self.found is None:
            return False
        for i, (was, now) in enumerate(zip(self.began_at, self._loop_values())):
            if was is not _UNREAD and now is not _UNREAD and not (was is now or (
                    isinstance(was, (int, str)) and was == now)):
                return any(lp.count for lp in self.found.loops[i + 2:])
        return False

    def _same_loop(self) -> bool:
        """This step runs in the loop the current phase runs in, entered again - a layer-wise
        trainer's loop over its layers - not in a loop written elsewhere (a new model and
        optimizer in a loop of its own: a tutorial's next refactoring of its loop)."""
        anchor = self.session.anchor
        if anchor is None:
            return True
        here = loop_anchor(sys._getframe())
        return here is not None and here.code is anchor.code and here.first == anchor.first

    def _leave_loops(self) -> None:
        """The stopped loop has no loader to run dry: the program leaves it at its next line,
        as a ``break`` would (loop_exit.py), and goes on to its post-training work or its next
        phase. With optimizers made that have not stepped yet, only the innermost loop's pass
        is left - the loop around it may go on to train them (one optimizer per layer) - and
        so for the phases that began so. Where no loop can be left, the next step unwinds."""
        s = self.session
        innermost = self.per_pass_phase or self.optimizers > len(self.stepped)
        if leave_loops(s, sys._getframe(), lambda: ProbeStop(s.policy.reason or "the probe "
                       "stopped"), innermost=innermost):
            self.left_pass = innermost

    def _leave_epochs_loop(self) -> None:
        """The stopped loop's loader runs dry; the loop of epochs around it is left when it
        would begin its next pass, as a ``break`` at its top would (loop_exit.py) - the rest of
        the stopped epoch runs (its validation, its scheduler step), its later epochs do not:
        run on empty passes, their per-epoch code divided an epoch's loss by its batches
        (aladdinpersson's lr-scheduler example: ZeroDivisionError, the program's post-training
        code never ran) or saved a checkpoint each. Only where that loop is the outermost
        around the step (a loop around the epochs may train more: its next pass goes on)."""
        exit_ = epochs_exit(sys._getframe(), self.found.loops if self.found is not None else [])
        if exit_ is not None:
            s = self.session
            leave_epochs(s, exit_, lambda: ProbeStop(s.policy.reason or "the probe stopped"))

    def _check_batches_per_step(self, per_step: int, batches: int, first: int) -> None:
        """At the second step, the batches between two steps are the true batches per step: a
        loader that fetches ahead (Accelerate's) made the first count one too many; none at all
        (a full batch drawn once, before a loop of the program's own) makes no epoch of it - the
        loop does. N_it corrected in a `plan`."""
        if per_step == first or self.steps_per_epoch or self.loop_epoch:
            return
        if per_step < 1:
            if self.found is not None and self.found.steps_per_epoch:
                n = self.loop_epoch = self.session.steps_per_epoch = self.found.steps_per_epoch
                self.session.plan(steps_per_epoch=n)
                self.session.log("info", f"PyTorch: no batch from its DataLoader between two "
                                 f"steps (drawn before the loop): {n} steps per epoch, the loop "
                                 f"{self.found.loops[0].text}", code="torch-loop")
            return
        n = batches // per_step
        self.session.plan(steps_per_epoch=n)
        self.session.log("info", f"PyTorch: {per_step} batch(es) per optimizer step, not {first} "
                         f"as the first step suggested (a loader that fetches ahead): {n} steps "
                         "per epoch", code="torch-loop")
