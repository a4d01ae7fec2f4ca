"""Event log schema v1: typed records, a streaming reader and an appending writer.

One JSON object per line. Every line has ``ev`` (kind) and ``t`` (seconds since the probe
process started). Timed events (init, step, val, end) also carry ``dt``: wall seconds since the
previous timed event ended, so the ``dt`` of a complete log add up to the whole run.

Readers ignore unknown fields and unknown kinds, count malformed lines (with line numbers) and
mark a log without ``end`` as truncated. The schema itself is described in DESIGN.md.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Union

SCHEMA_VERSION = 1

END_STATUSES = ("complete", "probe-done", "stopped", "failed")


@dataclass(slots=True, frozen=True)
class Device:
    kind: str
    name: str
    memory_mb: float | None = None


@dataclass(slots=True, frozen=True)
class Start:
    t: float
    probe: str
    v: int = SCHEMA_VERSION
    time: str = ""
    instance: str = ""
    host: str = ""
    batch_size: int = 0
    workload: str = ""
    steps_per_epoch: int = 0
    val_steps: int = 0
    epochs: int | None = None
    framework: str = ""
    devices: tuple[Device, ...] = ()
    price_per_hour: float | None = None
    note: str = ""


@dataclass(slots=True, frozen=True)
class Init:
    t: float
    dt: float


# Step and Sample are the hot records (millions in a long replay): plain slotted dataclasses,
# since frozen ones cost ~4x more to build. Treat them as immutable all the same.
@dataclass(slots=True)
class Step:
    t: float
    dt: float
    epoch: int
    step: int


@dataclass(slots=True, frozen=True)
class Val:
    t: float
    dt: float
    epoch: int
    steps: int
    metrics: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True, frozen=True)
class Epoch:
    t: float
    epoch: int
    metrics: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True)
class Sample:
    t: float
    gpu_util: tuple[float, ...] | None = None
    gpu_mem_mb: tuple[float, ...] | None = None
    gpu_mem_total_mb: tuple[float, ...] | None = None
    cpu_util: float | None = None
    rss_mb: float | None = None
    swap_mb: float | None = None


@dataclass(slots=True, frozen=True)
class Log:
    t: float
    level: str
    msg: str


@dataclass(slots=True, frozen=True)
class End:
    t: float
    dt: float
    status: str
    reason: str = ""


Event = Union[Start, Init, Step, Val, Epoch, Sample, Log, End]


class MalformedLine(ValueError):
    """A line that is not a valid schema-v1 event of a known kind."""


def _num(obj: dict[str, Any], key: str) -> float:
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MalformedLine(f"field {key!r} must be a number, got {value!r}")
    return float(value)


def _int(obj: dict[str, Any], key: str, default: int | None = None) -> int:
    value = obj.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise MalformedLine(f"field {key!r} must be an integer, got {value!r}")
    return value


def _opt_float(obj: dict[str, Any], key: str) -> float | None:
    value = obj.get(key)
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _floats(obj: dict[str, Any], key: str) -> tuple[float, ...] | None:
    value = obj.get(key)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (float(value),)
    if isinstance(value, list):
        return tuple(float(v) for v in value if isinstance(v, (int, float)) and not isinstance(v, bool))
    return None


def _metrics(obj: dict[str, Any]) -> dict[str, float]:
    raw = obj.get("metrics") or {}
    if not isinstance(raw, dict):
        return {}
    return {
        str(k): float(v)
        for k, v in raw.items()
        if isinstance(v, (int, float)) and not isinstance(v, bool)
    }


def _devices(obj: dict[str, Any]) -> tuple[Device, ...]:
    raw = obj.get("devices") or []
    out = []
    if isinstance(raw, list):
        for d in raw:
            if isinstance(d, dict):
                out.append(
                    Device(
                        kind=str(d.get("kind", "")),
                        name=str(d.get("name", "")),
                        memory_mb=_opt_float(d, "memory_mb"),
                    )
                )
    return tuple(out)


def _dt(obj: dict[str, Any]) -> float:
    dt = _num(obj, "dt")
    if dt < 0:
        raise MalformedLine(f"negative dt {dt}")
    return dt


def event_from_dict(obj: dict[str, Any]) -> Event | None:
    """Build a typed event from a decoded JSON object; None for an unknown kind."""
    kind = obj.get("ev")
    if not isinstance(kind, str):
        raise MalformedLine("missing 'ev'")
    t = _num(obj, "t")
    if kind == "step":
        return Step(t, _dt(obj), _int(obj, "epoch", 0), _int(obj, "step", 0))
    if kind == "val":
        return Val(t, _dt(obj), _int(obj, "epoch", 0), _int(obj, "steps", 0), _metrics(obj))
    if kind == "sample":
        return Sample(
            t,
            gpu_util=_floats(obj, "gpu_util"),
            gpu_mem_mb=_floats(obj, "gpu_mem_mb"),
            gpu_mem_total_mb=_floats(obj, "gpu_mem_total_mb"),
            cpu_util=_opt_float(obj, "cpu_util"),
            rss_mb=_opt_float(obj, "rss_mb"),
            swap_mb=_opt_float(obj, "swap_mb"),
        )
    if kind == "init":
        return Init(t, _dt(obj))
    if kind == "epoch":
        return Epoch(t, _int(obj, "epoch", 0), _metrics(obj))
    if kind == "start":
        epochs = obj.get("epochs")
        return Start(
            t,
            probe=str(obj.get("probe", "")),
            v=_int(obj, "v", SCHEMA_VERSION),
            time=str(obj.get("time", "")),
            instance=str(obj.get("instance", "") or ""),
            host=str(obj.get("host", "") or ""),
            batch_size=_int(obj, "batch_size", 0),
            workload=str(obj.get("workload", "") or ""),
            steps_per_epoch=_int(obj, "steps_per_epoch", 0),
            val_steps=_int(obj, "val_steps", 0),
            epochs=_int(obj, "epochs") if epochs is not None else None,
            framework=str(obj.get("framework", "") or ""),
            devices=_devices(obj),
            price_per_hour=_opt_float(obj, "price_per_hour"),
            note=str(obj.get("note", "") or ""),
        )
    if kind == "end":
        status = obj.get("status")
        if status not in END_STATUSES:
            raise MalformedLine(f"unknown end status {status!r}")
        return End(t, _dt(obj), str(status), str(obj.get("reason", "") or ""))
    if kind == "log":
        return Log(t, str(obj.get("level", "info")), str(obj.get("msg", "")))
    return None


def parse_line(line: str) -> Event | None:
    """Parse one line; None for an unknown kind; MalformedLine for anything else wrong."""
    try:
        obj = json.loads(line)
    except ValueError as exc:
        raise MalformedLine(f"not JSON: {exc.args[0] if exc.args else exc}") from None
    if not isinstance(obj, dict):
        raise MalformedLine("not a JSON object")
    return event_from_dict(obj)


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None and v != "" and v != ()}


def event_to_dict(event: Event) -> dict[str, Any]:
    """The schema-v1 JSON object for an event (fields in a stable, readable order)."""
    if isinstance(event, Step):
        return {"ev": "step", "t": event.t, "dt": event.dt, "epoch": event.epoch, "step": event.step}
    if isinstance(event, Init):
        return {"ev": "init", "t": event.t, "dt": event.dt}
    if isinstance(event, Val):
        return {"ev": "val", "t": event.t, "dt": event.dt, "epoch": event.epoch,
                "steps": event.steps, "metrics": dict(event.metrics)}
    if isinstance(event, Epoch):
        return {"ev": "epoch", "t": event.t, "epoch": event.epoch, "metrics": dict(event.metrics)}
    if isinstance(event, Sample):
        d = {
            "ev": "sample",
            "t": event.t,
            "gpu_util": list(event.gpu_util) if event.gpu_util is not None else None,
            "gpu_mem_mb": list(event.gpu_mem_mb) if event.gpu_mem_mb is not None else None,
            "gpu_mem_total_mb": list(event.gpu_mem_total_mb)
            if event.gpu_mem_total_mb is not None else None,
            "cpu_util": event.cpu_util,
            "rss_mb": event.rss_mb,
            "swap_mb": event.swap_mb,
        }
        return _drop_none(d)
    if isinstance(event, Log):
        return {"ev": "log", "t": event.t, "level": event.level, "msg": event.msg}
    if isinstance(event, End):
        return _drop_none({"ev": "end", "t": event.t, "dt": event.dt, "status": event.status,
                           "reason": event.reason})
    if isinstance(event, Start):
        d = {
            "ev": "start", "t": event.t, "v": event.v, "probe": event.probe, "time": event.time,
            "instance": event.instance, "host": event.host, "batch_size": event.batch_size,
            "workload": event.workload, "steps_per_epoch": event.steps_per_epoch,
            "val_steps": event.val_steps, "epochs": event.epochs, "framework": event.framework,
            "devices": [_drop_none({"kind": d.kind, "name": d.name, "memory_mb": d.memory_mb})
                        for d in event.devices],
            "price_per_hour": event.price_per_hour, "note": event.note,
        }
        out = _drop_none(d)
        out.setdefault("devices", [])
        out["val_steps"] = event.val_steps
        return out
    raise TypeError(f"not an event: {event!r}")


def dumps(event: Event) -> str:
    return json.dumps(event_to_dict(event), separators=(",", ":"))


@dataclass(slots=True)
class ReadReport:
    """What a reader saw besides the events: what a user should be told about a log."""

    lines: int = 0
    events: int = 0
    malformed: list[tuple[int, str]] = field(default_factory=list)
    unknown_kinds: Counter[str] = field(default_factory=Counter)
    end: End | None = None

    @property
    def truncated(self) -> bool:
        return self.end is None

    def describe_malformed(self, limit: int = 3) -> str:
        shown = ", ".join(f"line {n}: {why}" for n, why in self.malformed[:limit])
        more = len(self.malformed) - limit
        return shown + (f" (+{more} more)" if more > 0 else "")


# The agent writes steps in exactly this shape; matching it directly skips json.loads (most
# lines of a log are steps). Anything else - other key orders, spacing - takes the general path.
STEP_LINE = re.compile(
    r'\{"ev":"step","t":(-?[0-9.]+(?:[eE][-+]?[0-9]+)?),"dt":([0-9.]+(?:[eE][-+]?[0-9]+)?),'
    r'"epoch":([0-9]+),"step":([0-9]+)\}\s*$'
)


class EventReader:
    """Turns lines into events incrementally, keeping a ReadReport.

    Feed whole lines (``feed_line``), raw chunks as they arrive from a pipe or socket
    (``feed_chunk``: a partial last line waits for the rest), or iterate a whole source.
    A partial line left when the stream closes is counted as malformed by ``close``.
    """

    __slots__ = ("report", "_pending")

    def __init__(self) -> None:
        self.report = ReadReport()
        self._pending = ""

    def feed_line(self, line: str) -> Event | None:
        report = self.report
        report.lines += 1
        m = STEP_LINE.match(line)
        if m is not None:
            report.events += 1
            t, dt, epoch, step = m.groups()
            return Step(float(t), float(dt), int(epoch), int(step))
        stripped = line.strip()
        if not stripped:
            return None
        try:
            event = parse_line(stripped)
        except MalformedLine as exc:
            report.malformed.append((report.lines, str(exc)))
            return None
        if event is None:
            try:
                kind = str(json.loads(stripped).get("ev"))
            except ValueError:  # pragma: no cover - parse_line already decoded it
                kind = "?"
            report.unknown_kinds[kind] += 1
            return None
        report.events += 1
        if isinstance(event, End):
            report.end = event
        return event

    def feed_chunk(self, chunk: str) -> list[Event]:
        data = self._pending + chunk
        lines = data.split("\n")
        self._pending = lines.pop()
        out = []
        for line in lines:
            ev = self.feed_line(line)
            if ev is not None:
                out.append(ev)
        return out

    def close(self) -> list[Event]:
        """End of stream: a leftover partial line is parsed if whole, else counted malformed."""
        pending, self._pending = self._pending, ""
        if not pending.strip():
            return []
        ev = self.feed_line(pending)
        return [ev] if ev is not None else []

    def read(self, lines: Iterable[str]) -> Iterator[Event]:
        for line in lines:
            ev = self.feed_line(line)
            if ev is not None:
                yield ev


def read_log(path: str | os.PathLike[str]) -> tuple[list[Event], ReadReport]:
    """Read a whole log file. Bytes that are not UTF-8 make their line malformed, not fatal."""
    reader = EventReader()
    with open(path, encoding="utf-8", errors="replace") as fh:
        events = list(reader.read(fh))
    return events, reader.report


class EventWriter:
    """Appends events to a log file, one flushed line each, so a crash loses nothing received."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] = open(self.path, "a", encoding="utf-8")

    def write(self, event: Event) -> None:
        self._fh.write(dumps(event) + "\n")
        self._fh.flush()

    def write_raw(self, line: str) -> None:
        """Append a line exactly as received (live streams keep even lines we cannot parse)."""
        self._fh.write(line.rstrip("\n") + "\n")
        self._fh.flush()

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()

    def __enter__(self) -> EventWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
