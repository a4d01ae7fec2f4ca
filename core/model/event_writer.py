"""Writing a probe's log: each event one whole line appended with one ``os.write``, so a crash
loses nothing received and a failed write (disk full) leaves no half line (events.py reads them)."""

from __future__ import annotations

import os
from pathlib import Path

from .events import Event, dumps


class LogWriteError(OSError):
    """A log line could not be written (disk full, read-only, I/O error); names the file."""

    def __str__(self) -> str:
        return str(self.strerror)


class EventWriter:
    """Appends events to a log file, one whole line per write, so a crash loses nothing received.

    Each line is one ``os.write`` on an O_APPEND descriptor. When a write fails or is cut short
    (disk full), the file is cut back to its last whole line and LogWriteError names the file:
    the log stays parseable, and the caller decides what to do with the probe."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._good = os.fstat(self._fd).st_size  # bytes of whole lines

    def write(self, event: Event) -> None:
        self._put(dumps(event) + "\n")

    def write_raw(self, line: str) -> None:
        """Append a line exactly as received (live streams keep even lines we cannot parse)."""
        self._put(line.rstrip("\n") + "\n")

    def _put(self, text: str) -> None:
        if self._fd is None:
            raise LogWriteError(f"cannot write {self.path}: already closed")
        data = text.encode("utf-8", "replace")
        try:
            written = os.write(self._fd, data)
            if written != len(data):
                raise OSError(28, "No space left on device (line cut short)")
        except OSError as exc:
            try:
                os.ftruncate(self._fd, self._good)  # no half line at the end
            except OSError:
                pass
            raise LogWriteError(exc.errno, f"cannot write {self.path}: "
                                           f"{exc.strerror or exc}") from exc
        self._good += written

    @property
    def closed(self) -> bool:
        return self._fd is None

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> EventWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
