"""The program's own output for one probe (its prints, progress bars, warnings), kept beside the
log as <probe>.output and never parsed as events. Refreshes while the probe runs."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Log, Static

from ..actions import bindings

TAIL_BYTES = 256 * 1024


def read_tail(path: Path, limit: int = TAIL_BYTES) -> str:
    """The last ``limit`` bytes as lines; a progress bar's carriage returns keep its last state."""
    try:
        if path.name.endswith(".gz"):  # a recorded corpus: read through, keep the tail
            import gzip

            with gzip.open(path, "rb") as gz:
                data = b""
                while chunk := gz.read(1 << 20):
                    data = (data + chunk)[-limit:]
        else:
            with open(path, "rb") as fh:
                fh.seek(0, 2)
                size = fh.tell()
                fh.seek(max(0, size - limit))
                data = fh.read()
    except (OSError, EOFError):
        return ""
    text = data.decode("utf-8", "replace")
    lines = [line.rsplit("\r", 1)[-1] for line in text.replace("\r\n", "\n").split("\n")]
    return "\n".join(lines)


class OutputScreen(ModalScreen[None]):
    BINDINGS = bindings("output")
    DEFAULT_CSS = """
    OutputScreen { align: center middle; }
    OutputScreen > Vertical { width: 96%; height: 92%; border: round $accent; }
    OutputScreen Log { height: 1fr; }
    OutputScreen #output-where { height: 1; color: $text-muted; padding: 0 1; }
    """

    def __init__(self, label: str, path: Path | None) -> None:
        super().__init__()
        self.label = label
        self.path = path
        self._seen_bytes = -1

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(id="output-where")
            yield Log(id="output", highlight=False, auto_scroll=True)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(Vertical).border_title = f"Output of {self.label}"
        self.reload()
        self.set_interval(2.0, self.reload)

    def reload(self) -> None:
        where = self.query_one("#output-where", Static)
        if self.path is None or not self.path.exists():
            where.update("no output kept for this probe (older logs, or it printed nothing)")
            return
        size = self.path.stat().st_size
        if size == self._seen_bytes:
            return
        self._seen_bytes = size
        where.update(f"{self.path} · {size / 1024:.0f} KB · the last {TAIL_BYTES // 1024} KB")
        log = self.query_one(Log)
        log.clear()
        log.write(read_tail(self.path))

    def action_close(self) -> None:
        self.dismiss(None)
