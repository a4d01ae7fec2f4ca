"""How the PyTorch loops adapter keeps the phases of a program that trains in several loops,
one after another (phases.py): the probe ends a phase by running its loaders dry, as it always
stopped a loop, so the loop ends through its own exit and the program goes on - to its
post-training work, or to its next loop, the next phase. Only the loop the probe stopped gets
empty passes (``inside`` its anchor): the next loop iterates its loaders, the same objects
included. A loop with no loader to run dry can only be unwound (ProbeStop), as before.
"""

from __future__ import annotations

import sys

from ..anchors import inside
from ..probe_session import ProbeSession, ProbeStop
from .base import Trainers


class TorchPhases:
    """Mixed into TorchLoopsAdapter (whose attributes these are)."""

    session: ProbeSession
    trainers: Trainers
    trainers_at_stop: int  # the trainers the program had made when the probe stopped a loop
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
                and not inside(anchor, sys._getframe()))

    def _next_phase(self) -> None:
        """A step after the probe stopped a loop, or outside the loop that ran: a new phase
        when it is another loop (and phases are left), else the stopped loop goes on without
        data and is unwound."""
        s = self.session
        anchor = s.anchor
        if not s.phases_enabled or (self.stopped and (
                anchor is None or inside(anchor, sys._getframe()))):
            raise ProbeStop(s.policy.reason or "the probe stopped")
        if not s.more_phases():
            s.log("warning", f"training went on in a phase past the probe's {s.phase}: the "
                  "program is stopped here; the estimate covers the phases seen",
                  code="phase-budget")
            raise ProbeStop(s.policy.reason or "the probe stopped")
        made = self.trainers.made  # a trainer made since the stop is this phase's: it answers
        if len(made) > self.trainers_at_stop:
            del made[:self.trainers_at_stop]
        self._drain()  # the last phase's steps are in the log before the new phase
        if self.val is not None and self.val[0] == self.last_loader:
            self.val = None  # no validation: the new phase's training loader, its first pass
        self._end_val()
        self.stopped = False
        self.epoch = self.index = self.batches_since_step = self.loop_epoch = 0
        self.train_loader = None  # the loader this phase's steps consume: read at its step
        self.val = self.per_pass = None
        self.unwind = False
        self.phase_pending = True
