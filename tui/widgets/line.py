"""A line of text that repaints only when its words change."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import var
from textual.widgets import Static


class TextLine(Static):
    """A fixed-height line (the status line, a probe panel's headline): ``text`` is set on every
    redraw tick, and the widget repaints - without a layout pass - only when it differs. Over a
    slow SSH link every repainted cell costs bytes."""

    text: var[str | Text] = var("", init=False)

    def watch_text(self, text: str | Text) -> None:
        self.update(text, layout=False)
