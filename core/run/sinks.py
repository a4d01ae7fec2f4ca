"""Where a probe's streams go: its event log (whole lines, an `end` on every exit path, a reserve
for a full disk) and the program's own output beside it."""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import IO

from ..model.event_writer import EventWriter, LogWriteError
from ..model.events import End, Event, EventReader
from .status import RunnerStatus


def output_path(log_path: Path) -> Path:
    """Where a probe's program output is kept: beside its log (``x.jsonl`` -> ``x.output``;
    a gzipped log's, ``x.jsonl.gz``, is ``x.output.gz``, as the corpus keeps them)."""
    if log_path.name.endswith(".gz"):
        return log_path.with_name(log_path.name[:-3]).with_suffix(".output.gz")
    return log_path.with_suffix(".output")


class OutputSink:
    """The program's own output (stdout+stderr, progress bars and all), kept whole beside the
    log and never parsed; a tail of lines for failure messages. If it cannot be written (disk
    full), it stops writing and says so - the probe goes on; the log is what must not be lost."""

    def __init__(self, log_path: Path | None, redact: tuple[str, ...] = (),
                 path: Path | None = None) -> None:
        self.path = path or (output_path(log_path) if log_path is not None else None)
        self._fh: IO[str] | None = None
        self._lines: deque[str] = deque(maxlen=20)
        self._partial = ""  # a line not ended yet: chunks do not end at line ends
        self.error: str | None = None
        self._mask = Mask(redact)

    @property
    def tail(self) -> list[str]:
        """The last lines (non-blank, up to 300 characters each), the unfinished one included."""
        last = self._partial.rstrip()[:300]
        return [*self._lines, last] if last.strip() else list(self._lines)

    def write(self, text: str) -> None:
        self._write(self._mask.feed(text))

    def finish(self) -> None:
        """The stream has ended: what the mask held back is written (and in the tail)."""
        self._write(self._mask.flush())

    def _write(self, text: str) -> None:
        if not text:
            return
        if self.path is not None and self.error is None:
            try:
                if self._fh is None:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    self._fh = open(self.path, "a", encoding="utf-8")
                self._fh.write(text)
                self._fh.flush()
            except OSError as exc:
                self.error = f"program output not kept past this point: cannot write {self.path}: {exc.strerror or exc}"
                self._close_quietly()
        lines = (self._partial + text).replace("\r", "\n").split("\n")
        self._partial = lines.pop()[-4096:]
        for line in lines:
            if line.strip():
                self._lines.append(line.rstrip()[:300])

    def _close_quietly(self) -> None:
        if self._fh is not None:
            try:
                self._fh.close()
            except OSError:
                pass
            self._fh = None

    def close(self) -> None:
        self.finish()
        self._close_quietly()


class Mask:
    """Secret values (``[probe] env`` read from this machine's environment) replaced by ``***``
    in a stream of text chunks: the end of a chunk is held back until the next, so a value split
    between two reads is masked too. Values under 4 characters are left alone (they would mask
    ordinary output)."""

    MIN_LENGTH = 4

    def __init__(self, secrets: tuple[str, ...] = ()) -> None:
        self.secrets = sorted({s for s in secrets if len(s) >= self.MIN_LENGTH}, key=len,
                              reverse=True)
        self.hold = max((len(s) for s in self.secrets), default=1) - 1
        self._carry = ""

    def feed(self, text: str) -> str:
        if not self.secrets:
            return text
        text = self._carry + text
        for secret in self.secrets:
            text = text.replace(secret, "***")
        cut = len(text) - self.hold
        self._carry = text[cut:] if cut > 0 else text
        return text[:cut] if cut > 0 else ""

    def flush(self) -> str:
        out, self._carry = self._carry, ""
        return out


RESERVE_NAME = ".probecast-reserve"
RESERVE_BYTES = 256 * 1024


def make_reserve(directory: Path) -> None:
    """Room set aside in the log directory, freed if the disk fills, so every log can still get
    its last line (`end`). Best effort: no reserve, no harm."""
    try:
        with open(directory / RESERVE_NAME, "wb") as fh:
            fh.write(b"\0" * RESERVE_BYTES)  # written, not sparse: the blocks are really held
    except OSError:
        pass


def release_reserve(directory: Path) -> bool:
    try:
        (directory / RESERVE_NAME).unlink()
        return True
    except OSError:
        return False


class LogSink:
    """Parses raw lines, keeps the log file, remembers whether `end` was seen.

    A line that cannot be written (disk full) sets ``error`` - the runner stops the probe: what
    it would say next could not be kept - and the log is cut back to whole lines."""

    def __init__(self, log_path: Path | None) -> None:
        self.reader = EventReader()
        self.log_path = log_path
        self.writer: EventWriter | None = None  # opened on the first line: no empty logs
        self.saw_end = False
        self.end: End | None = None  # the agent's own `end`, once it arrived
        self.last_t = 0.0
        self.error: str | None = None
        self.kept = 0  # lines written whole

    def line(self, line: str) -> Event | None:
        if self.log_path is not None and line.strip() and self.error is None:
            try:
                if self.writer is None:
                    self.writer = EventWriter(self.log_path)
                self.writer.write_raw(line)
                self.kept += 1
            except OSError as exc:
                self.error = str(exc) if isinstance(exc, LogWriteError) else \
                    f"cannot write {self.log_path}: {exc.strerror or exc}"
        ev = self.reader.feed_line(line)
        if ev is not None:
            self.last_t = max(self.last_t, ev.t)
        if isinstance(ev, End):
            self.saw_end = True
            self.end = ev
        return ev

    def failure(self) -> RunnerStatus:
        """The status of a probe stopped because its log could not be written."""
        return RunnerStatus("failed", f"{self.error} - probe stopped; the {self.kept} line(s) "
                                      "before it are kept; "
                                      "free space (or choose --out DIR) and run it again")

    def close(self, final: RunnerStatus | None = None) -> None:
        """Every exit path leaves a log whose last line is an `end`: when the agent's own never
        arrived (cancelled, connection lost, killed, disk full), probecast writes one, saying so.
        With the disk full, the reserve in the log directory is given up for it."""
        if self.writer is None:
            return
        if not self.saw_end and not self.writer.closed:
            status = final.status if final is not None and final.status in (
                "stopped", "failed") else "failed"
            why = final.detail if final is not None and final.detail else "the probe ended"
            end = End(self.last_t, 0.0, status,  # type: ignore[arg-type]
                      f"written by probecast, the agent's end never arrived: {why}")
            for attempt in range(2):
                try:
                    self.writer.write(end)
                    self.saw_end = True
                    break
                except OSError:
                    if attempt or self.log_path is None or not release_reserve(self.log_path.parent):
                        break
        self.writer.close()
