"""Where no loader's pass makes the epoch, the loop around the steps' loop may: Spinning Up's and
keras.io's PPO train a policy loop that breaks once the KL is too far, then a value loop, each
epoch - their steps a pass are no fixed count, so an epoch counted every N steps falls out of
step with the program's (its rollout at any step of one). What that loop's ``for`` binds, read
at each step in its own frame, marks each epoch instead; where it cannot be read (a ``while``
loop, a step traced away from the program's frames), the count does. Stdlib only.
"""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

from .length import Length
from .loops import Loop

_UNREAD = object()


class EpochMarker:
    def __init__(self) -> None:
        self.loop: Loop | None = None  # the loop whose passes are the epochs
        self.mark: Any = _UNREAD  # what its `for` bound at the latest step

    def start(self, found: Length) -> None:
        """At a phase's first step, with the length read there: a marker where the steps' own
        loop is the epoch and its steps a pass no fixed count (a break in it, loops of steps
        beside it: length.py's earliest_pass, siblings.py)."""
        loops = found.loops
        fixed = not (found.earliest_pass or (loops and loops[0].beside))
        if len(loops) < 2 or loops[0].over_loader or loops[0].turns or fixed \
                or not loops[1].target:
            self.loop, self.mark = None, _UNREAD
            return
        self.loop = loops[1]
        self.mark = self._now()

    def moved(self) -> bool | None:
        """Whether the marking loop moved on since the latest step; None: no marker to read
        (the count marks the epochs)."""
        if self.loop is None or self.mark is _UNREAD:
            return None
        now, was = self._now(), self.mark
        if now is _UNREAD:
            return None
        self.mark = now
        return not (now is was or (isinstance(now, (int, str)) and now == was))

    def _now(self) -> Any:
        """What the marking loop's ``for`` binds now: its frame found walking up from here."""
        lp = self.loop
        frame: FrameType | None = sys._getframe(1)
        while lp is not None and frame is not None:
            if frame.f_code is lp.code:
                return frame.f_locals.get(lp.target, _UNREAD)
            frame = frame.f_back
        return _UNREAD
