"""Where no loader's pass makes the epoch, the loop around the steps' loop may: Spinning Up's and
keras.io's PPO train a policy loop that breaks once the KL is too far, then a value loop, each
epoch - their steps a pass are no fixed count, so an epoch counted every N steps falls out of
step with the program's (its rollout at any step of one). What that loop's ``for`` binds, read
at each step in its own frame, marks each epoch instead; where it cannot be read (a ``while``
loop, a step traced away from the program's frames), the count does. Stdlib only.
"""

from __future__ import annotations

import sys
import threading
from types import FrameType
from typing import Any

from .length import Length
from .loops import Loop
from .own_code import user_code

_UNREAD = object()


class EpochMarker:
    def __init__(self) -> None:
        self.loop: Loop | None = None  # the loop whose passes are the epochs
        self.mark: Any = _UNREAD  # what its `for` bound at the latest step

    def start(self, found: Length, frame: FrameType | None = None) -> None:
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
        self.mark = self._now(frame)

    def moved(self, frame: FrameType | None = None) -> bool | None:
        """Whether the marking loop moved on since the latest step; None: no marker to read
        (the count marks the epochs). ``frame``: where the program runs (by default: here)."""
        if self.loop is None or self.mark is _UNREAD:
            return None
        now, was = self._now(frame), self.mark
        if now is _UNREAD:
            return None
        self.mark = now
        return not (now is was or (isinstance(now, (int, str)) and now == was))

    def _now(self, frame: FrameType | None = None) -> Any:
        """What the marking loop's ``for`` binds now: its frame found walking up from ``frame``
        (by default, here)."""
        lp = self.loop
        frame = frame or sys._getframe(1)
        while lp is not None and frame is not None:
            if frame.f_code is lp.code:
                return frame.f_locals.get(lp.target, _UNREAD)
            frame = frame.f_back
        return _UNREAD


def program_frame(caller: int | None) -> FrameType | None:
    """Where the program runs, seen from a hook: its caller's frame, or - a traced step's
    py_function runs on a thread of TensorFlow's - the frame of the thread that traced it
    (``caller``), blocked in the tf.function's call: its loops are the program's; where that
    thread is gone (tf.distribute traces a replica's step on a thread of its own), the main
    thread's, which calls the traced function."""
    if caller is None or caller == threading.get_ident():
        return sys._getframe(2)
    frames = sys._current_frames()
    frame = frames.get(caller)
    if frame is None or not any(user_code(f.f_code.co_filename) for f in _stack(frame)):
        frame = frames.get(threading.main_thread().ident or -1)
    return frame


def _stack(frame: FrameType | None) -> Any:
    while frame is not None:
        yield frame
        frame = frame.f_back
