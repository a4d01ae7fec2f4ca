"""Work done once a burst of changes pauses (typing), not once per change."""

from __future__ import annotations

from collections.abc import Callable

from textual.message_pump import MessagePump
from textual.timer import Timer


class Debounce:
    """Calls ``callback`` ``delay`` seconds after the last ``poke()``: each poke restarts the
    wait, so five keystrokes make one call. The timer is the node's, and stops with it."""

    def __init__(self, node: MessagePump, delay: float, callback: Callable[[], object]) -> None:
        self.node = node
        self.delay = delay
        self.callback = callback
        self._timer: Timer | None = None

    @property
    def pending(self) -> bool:
        """A call is waiting for the changes to pause."""
        return self._timer is not None

    def poke(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.node.set_timer(self.delay, self._due)

    def _due(self) -> None:
        self._timer = None
        self.callback()
