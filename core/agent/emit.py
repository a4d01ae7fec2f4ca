"""Schema-v2 event emission on the probe host: stdlib only (this file is shipped to remote hosts).

The Emitter owns the clock. ``t`` is seconds since the probe process started; every timed event's
``dt`` is the wall time since the previous timed event ended, so the ``dt`` of a complete log add
up to its end time: stalls, callbacks and epoch boundaries all land in some ``dt``.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable
from typing import IO, Any

from . import schema
from .schema import SCHEMA_VERSION

# Check every line against the schema and raise SchemaError on a bad one (the tests set it; on a
# user's job a line is never worth their training run, so by default lines are written as made).
ENV_STRICT = "PROBECAST_STRICT_EVENTS"


def process_start_monotonic() -> float:
    """The monotonic time at which this process started (Linux), else now.

    Interpreter start-up and imports belong to T_init, so the clock starts with the process,
    not with the agent's first line of code.
    """
    now = time.monotonic()
    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        start_ticks = int(fields[19])  # field 22 of stat; 2 fields consumed before ')' split
        with open("/proc/uptime", "rb") as fh:
            uptime = float(fh.read().split()[0])
        age = uptime - start_ticks / os.sysconf("SC_CLK_TCK")
        if 0 <= age < 3600:
            return now - age
    except (OSError, ValueError, IndexError):
        pass
    return now


_encode_str = json.encoder.encode_basestring_ascii
_INF = float("inf")


def _flat_line(obj: dict[str, Any]) -> str | None:
    """The JSON line of an event whose values are all ints, floats, strings, bools or None -
    every step event - written as ``json.dumps(_finite(obj), separators=(",", ":"))`` would,
    in a third of its time (a step event is written per optimizer step; this was ~0.02 ms of the
    agent's ~0.05 ms a step). None for anything else (the caller falls back to json)."""
    parts = []
    for k, v in obj.items():
        t = type(v)
        if t is int or t is bool or v is None:
            text = "true" if v is True else "false" if v is False else "null" if v is None \
                else int.__repr__(v)
        elif t is float:
            text = "null" if v != v or v == _INF or v == -_INF else float.__repr__(v)
        elif t is str:
            text = _encode_str(v)
        else:
            return None
        parts.append(f"{_encode_str(k)}:{text}")
    return "{" + ",".join(parts) + "}\n"


def _finite(value: Any) -> Any:
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


class ProbeCancelled(BaseException):
    """SIGTERM/SIGHUP/SIGINT, or the reader went away: stop the training, write `end: stopped`."""


class Emitter:
    """Writes one flushed JSON line per event to stdout and, optionally, to a file."""

    def __init__(
        self,
        out: IO[str] | None = None,
        path: str | None = None,
        t0: float | None = None,
        strict: bool | None = None,
        steps: Callable[[float, float, int, int], None] | None = None,
    ) -> None:
        self.strict = os.environ.get(ENV_STRICT, "") not in ("", "0") if strict is None else strict
        self.t0 = process_start_monotonic() if t0 is None else t0
        self._last_timed = self.t0
        self._outs: list[IO[str]] = [out if out is not None else sys.stdout]
        self._file: IO[str] | None = None
        if path:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            self._file = open(path, "a", encoding="utf-8")
            self._outs.append(self._file)
        self._lock = threading.Lock()  # the sampler thread emits too
        self._main = threading.main_thread().ident
        # where a plain step's numbers go, its line made later (channel.EventClient.step): only
        # when that is the one output (a file needs the line now)
        self._steps = steps if path is None else None
        self.ended = False
        # A cancel signal must not land between advancing the clock and writing the line (the
        # dt partition would lose that event): handlers defer while a write is in progress.
        self.critical = False
        self.pending_cancel: str | None = None
        self.orphaned = False
        self.started = False
        self.meta: dict[str, Any] = {}  # what fallback_start says when nothing trained
        # called with the end's status before it is written: (log code, warning) to say first
        self.before_end: Callable[[str], tuple[str, str] | None] | None = None

    def now(self) -> float:
        return time.monotonic() - self.t0

    @property
    def last_timed(self) -> float:
        """The monotonic time the latest timed event ended."""
        return self._last_timed

    def emit(self, ev: str, **fields: Any) -> dict[str, Any]:
        with self._lock:
            return self._write({"ev": ev, "t": round(self.now(), 6), **fields})

    def timed(self, ev: str, at: float | None = None, **fields: Any) -> dict[str, Any]:
        """Emit a timed event whose dt runs from the end of the previous timed event to now
        (or to ``at``, a monotonic time already past: when the event was known to end)."""
        out, main = self._clocked(at, lambda now, dt: self._write(
            {"ev": ev, "t": round(now - self.t0, 6), "dt": round(dt, 6), **fields}))
        if main and ev != "end":
            self._cancel_if_asked()
        return out  # type: ignore[no-any-return]

    def step(self, epoch: int, step: int, at: float | None = None) -> float:
        """A plain step event (no other field), timed as ``timed`` times it, its line made
        directly (or by ``steps``, later): one is written per optimizer step, inside the
        program's step, and the general path (a dict, _flat_line) was most of the hook's own time
        there. Returns its dt."""
        if self.strict:
            return float(self.timed("step", at=at, epoch=epoch, step=step)["dt"])
        dt, main = self._clocked(at, lambda now, dt: self._step_line(epoch, step, now, dt))
        if main:
            self._cancel_if_asked()
        return dt  # type: ignore[no-any-return]

    def _step_line(self, epoch: int, step: int, now: float, dt: float) -> float:
        if self._steps is None:
            dt = round(dt, 6)
            self._write_raw(f'{{"ev":"step","t":{round(now - self.t0, 6)!r},"dt":{dt!r},'
                            f'"epoch":{int(epoch)},"step":{int(step)}}}\n')
            return dt
        try:  # (rounded where the line is made)
            self._steps(now - self.t0, dt, int(epoch), int(step))
        except (OSError, ValueError):
            self._lost()
        return dt

    def _clocked(self, at: float | None, write: Callable[[float, float], Any]) -> tuple[Any, bool]:
        """``write(now, dt)`` with the clock moved to now (or to ``at``, never back), under the
        lock and - on the main thread - inside the critical section a cancel signal waits out.
        Returns what it returned, and whether this is the main thread (a waiting cancel is
        raised there next, the line written)."""
        main = threading.get_ident() == self._main
        with self._lock:
            if main:
                self.critical = True
            try:
                now = time.monotonic() if at is None else max(self._last_timed, at)
                dt, self._last_timed = now - self._last_timed, now
                return write(now, dt), main
            finally:
                if main:
                    self.critical = False

    def _cancel_if_asked(self) -> None:
        if self.pending_cancel:
            reason, self.pending_cancel = self.pending_cancel, None
            raise ProbeCancelled(reason)

    def _write(self, obj: dict[str, Any]) -> dict[str, Any]:
        # JSON has no NaN/Infinity: a diverged loss is written as null, never as a bad line
        line = _flat_line(obj)
        if line is None or self.strict:
            written = _finite(obj)
            if self.strict:
                schema.check(written)
            line = json.dumps(written, separators=(",", ":"), allow_nan=False) + "\n"
        self._write_raw(line)
        return obj

    def _write_raw(self, line: str) -> None:
        for i, out in enumerate(self._outs):
            try:
                out.write(line)
                out.flush()
            except (OSError, ValueError):
                if i == 0:
                    self._lost()

    def _lost(self) -> None:
        """Our reader went away (probecast quit, the SSH channel closed): the log file still
        gets everything; stop the training at the next timed event."""
        if not self.orphaned:
            self.orphaned = True
            if self.pending_cancel is None and not self.ended:
                self.pending_cancel = "reader gone (stdout closed)"

    def start(self, probe: str, **fields: Any) -> None:
        fields.setdefault("host", socket.gethostname())
        fields.setdefault(
            "time", _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        )
        self.started = True
        self.emit("start", v=SCHEMA_VERSION, probe=probe, **fields)

    def fallback_start(self) -> None:
        """The launcher's `start` when no process ever trained (the log still says what ran)."""
        if not self.started:
            self.start(self.meta.get("probe") or uuid.uuid4().hex[:12],
                       **{k: v for k, v in self.meta.items() if k != "probe"})

    def end(self, status: str, reason: str = "", exit_code: int | None = None,
            agent_s: float = 0.0) -> None:
        """The log's last event. ``agent_s``: the agent's own seconds inside a run that has no
        `init` (no step was found), which the plain program does not spend."""
        if self.ended:
            return
        at = time.monotonic()  # what ``before_end`` looks at is no part of the program's time
        try:
            said = self.before_end(status) if self.before_end is not None else None
        except Exception:  # noqa: BLE001 - nothing it looks at may cost the log its end
            said = None
        if said:
            with self._lock:
                self._write({"ev": "log", "t": round(at - self.t0, 6), "level": "warning",
                             "msg": said[1], "code": said[0]})
        self.ended = True
        fields: dict[str, Any] = {"status": status}
        if reason:
            fields["reason"] = reason[:2000]
        if exit_code is not None:
            fields["exit_code"] = exit_code
        if agent_s > 0:
            fields["agent_s"] = round(agent_s, 6)
        self.timed("end", at=at, **fields)

    def log(self, level: str, msg: str, code: str = "") -> None:
        if code:
            self.emit("log", level=level, msg=msg, code=code)
        else:
            self.emit("log", level=level, msg=msg)

    # ---- the launcher relays its hooks' lines through the same outputs and clock -------------

    def sync_timed(self, t: float) -> None:
        """A relayed timed event ended at ``t``: the next timed event's dt starts there."""
        with self._lock:
            self._last_timed = self.t0 + t

    def write_line(self, line: str) -> None:
        if self.strict:
            schema.check(json.loads(line))
        with self._lock:
            self._write_raw(line.rstrip("\n") + "\n")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def clean_metrics(metrics: dict[str, Any] | None) -> dict[str, float]:
    """A program's metrics as an event carries them: numbers, rounded; the rest left out."""
    out: dict[str, float] = {}
    for k, v in (metrics or {}).items():
        try:
            out[str(k)] = round(float(v), 6)
        except (TypeError, ValueError):
            continue
    return out
