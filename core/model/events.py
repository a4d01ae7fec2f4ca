"""Event log schema v4 (v1 to v3 logs read too): typed records (msgspec) and a streaming reader
(the appending writer: event_writer.py).

One JSON object per line. Every line has ``ev`` (kind) and ``t`` (seconds since the probe
process started). Timed events (init, step, val, end) also carry ``dt``: wall seconds since the
previous timed event ended, so the ``dt`` of a complete log add up to the whole run.

Lines are decoded by msgspec straight into the typed records: a wrong type, a negative or
non-finite time, NaN/Infinity (not JSON) make the line malformed - counted and reported with its
number, never an exception that stops a reader. Unknown fields are ignored and unknown kinds
counted; a log without ``end`` is truncated. docs/ARCHITECTURE.md describes the schema.
"""

from __future__ import annotations

import gzip
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Annotated, Literal, Union

import msgspec

# The schema is written down once, in the agent (which writes it and may import nothing of
# ours); tests/unit/test_schema.py holds these records to every kind and field there.
from ..agent.schema import END_STATUSES as END_STATUSES
from ..agent.schema import EVENT_KINDS as EVENT_KINDS
from ..agent.schema import SCHEMA_VERSION as SCHEMA_VERSION

Status = Literal["complete", "probe-done", "stopped", "failed", "does-not-fit"]  # END_STATUSES, for the type checker

# Times are seconds; anything beyond ~30 years is a corrupt line, and the bounds also refuse
# inf (JSON has no NaN or Infinity, but 1e999 decodes to inf).
Time = Annotated[float, msgspec.Meta(ge=-1e9, le=1e9)]
Duration = Annotated[float, msgspec.Meta(ge=0, le=1e9)]
Count = Annotated[int, msgspec.Meta(ge=0)]
Metrics = dict[str, Union[float, None]]


class _Event(msgspec.Struct, tag_field="ev", omit_defaults=True):
    """Base of every record: ``ev`` is the tag, ``t`` the time since the probe started.
    Records are not frozen (building them is the hot path of a replay); treat them as values."""


class Device(msgspec.Struct, omit_defaults=True):
    kind: str = ""
    name: str = ""
    memory_mb: float | None = None


class Start(_Event, tag="start"):
    t: Time
    probe: str = ""
    v: int = SCHEMA_VERSION
    time: str = ""
    instance: str = ""
    host: str = ""
    batch_size: Count = 0
    workload: str = ""
    steps_per_epoch: Count = 0
    val_steps: Count = 0
    epochs: Count | None = None
    framework: str = ""
    devices: tuple[Device, ...] = ()
    price_per_hour: Annotated[float, msgspec.Meta(ge=0, le=1e6)] | None = None
    note: str = ""


class Init(_Event, tag="init"):
    t: Time
    dt: Duration
    agent_s: Duration = 0.0  # the agent's own start-up inside dt (not the program's)


class Step(_Event, tag="step"):
    t: Time
    dt: Duration
    epoch: Count = 0
    step: Count = 0
    phase: Count = 0  # from the second phase on: its number (0: the log's first phase)
    outside: Duration = 0.0  # of dt: the program's work between two fit() calls (fit() in a loop)


class Val(_Event, tag="val"):
    t: Time
    dt: Duration
    epoch: Count = 0
    steps: Count = 0
    metrics: Metrics = msgspec.field(default_factory=dict)
    phase: Count = 0


class Epoch(_Event, tag="epoch"):
    t: Time
    epoch: Count = 0
    metrics: Metrics = msgspec.field(default_factory=dict)


class Sample(_Event, tag="sample"):
    t: Time
    gpu_util: tuple[float, ...] | None = None
    gpu_mem_mb: tuple[float, ...] | None = None
    gpu_mem_total_mb: tuple[float, ...] | None = None
    cpu_util: float | None = None
    rss_mb: float | None = None
    swap_mb: float | None = None


class Log(_Event, tag="log"):
    t: Time
    level: str = "info"
    msg: str = ""
    code: str = ""  # machine-readable: fit-loop, early-stop, custom-loop, no-post, ...


class Plan(_Event, tag="plan"):
    """The job's length as the program says it (schema v3): planned epochs, total training
    steps, periodic work every ``every`` steps, and where each was read."""

    t: Time
    epochs: Count | None = None
    steps: Count | None = None
    every: Count | None = None
    source: str = ""
    every_source: str = ""
    steps_per_epoch: Count | None = None  # corrects start's N_it (learned at the second step)
    earliest_epochs: Count | None = None  # the soonest an early stop can end training (patience)
    earliest_steps: Count | None = None  # ... for a job of one loop of steps (no epochs)
    earliest_pass_steps: Count | None = None  # a break ends each epoch's loop: its soonest steps
    until: str = ""  # no length: the condition an endless loop around the step stops at
    repeats: Count | None = None  # a library's loop runs the training this many times (Optuna)
    time_limit_s: Duration | None = None  # ... and starts no run after this many seconds
    every_epochs: Count | None = None  # work between epochs (`if epoch % K == 0: evaluate()`)
    every_epochs_at: Count | None = None  # ... after the epochs j (from 0) with j % K == this
    every_epochs_source: str = ""  # ... where it was read
    every_epochs_first: bool = False  # ... and after the first epoch (`or epoch == 0`)
    every_epochs_last: bool = False  # ... and after the last (`or epoch + 1 == args.epochs`)
    every_epochs_from: Count | None = None  # ... from the j-th epoch on (`epoch >= S and ...`)


MB = Annotated[float, msgspec.Meta(ge=0, le=1e12)]


class Memory(_Event, tag="memory"):
    """Peak memory of the probe (schema v3): the device's and the host's, with their limits."""

    t: Time
    device: str = ""
    device_peak_mb: MB | None = None
    device_reserved_mb: MB | None = None
    device_total_mb: MB | None = None
    host_peak_mb: MB | None = None
    host_vm_peak_mb: MB | None = None  # the largest process's peak virtual size (RLIMIT_AS)
    host_limit_mb: MB | None = None
    host_limit_kind: str = ""  # what the limit counts: "address-space" or "memory"
    source: str = ""


class Block(_Event, tag="block"):
    """Training timed only in blocks between evaluations (schema v4: logs imported from MLPerf
    Training, which have no per-step events): the block's wall time and how far training had
    got at its end, in the source's own unit."""

    t: Time
    dt: Duration
    index: Count = 0
    progress: Annotated[float, msgspec.Meta(ge=0, le=1e18)] | None = None
    unit: str = ""


class Phase(_Event, tag="phase"):
    """Training went on in another loop (a program that trains in phases): the events after it
    belong to phase ``index`` (from 2); ``previous`` is how the last phase ended."""

    t: Time
    index: Count = 2
    loop: str = ""
    steps_per_epoch: Count = 0
    previous: Status = "probe-done"


class Done(_Event, tag="done"):
    """Training is over (the probe stopped it, or it ran to its end): what follows until ``end``
    is the program's own post-training work and exit, timed by ``end.dt``."""

    t: Time
    dt: Duration
    status: Status = "probe-done"
    reason: str = ""
    hook_ms: Duration | None = None  # the agent's own time inside each steady step (host clock)


class End(_Event, tag="end"):
    t: Time
    dt: Duration
    status: Status
    reason: str = ""
    exit_code: int | None = None  # the program's own exit status, when it exited by itself
    agent_s: Duration = 0.0  # the agent's own start-up, where no `init` said it (no step found)


Event = Union[Start, Init, Step, Val, Epoch, Sample, Log, Plan, Memory, Block, Phase, Done, End]

# kind (`ev`) -> its record, in the schema's order
EVENT_TYPES: dict[str, type[Event]] = {
    cls.__struct_config__.tag: cls  # type: ignore[misc]
    for cls in (Start, Init, Step, Val, Epoch, Sample, Log, Plan, Memory, Block, Phase, Done, End)
}

_DECODER: msgspec.json.Decoder[Event] = msgspec.json.Decoder(Event)
_ENCODER = msgspec.json.Encoder()


class MalformedLine(ValueError):
    """A line that is not a valid schema event."""


class _Kind(msgspec.Struct):
    ev: str = ""


_KIND = msgspec.json.Decoder(_Kind)


def parse_line(line: str | bytes) -> Event | None:
    """One line; None for an unknown kind; MalformedLine for anything else wrong."""
    try:
        return _DECODER.decode(line)
    except msgspec.ValidationError as exc:
        msg = str(exc)
        if msg.startswith("Invalid value") and msg.endswith("`$.ev`"):
            return None  # a kind this reader does not know: ignored, counted by the reader
        what, _, where = msg.partition(" - at `$.")
        raise MalformedLine(f"{where.rstrip('`')}: {what}" if where else msg) from None
    except msgspec.DecodeError as exc:
        raise MalformedLine(f"not JSON: {exc}") from None


def dumps(event: Event) -> str:
    return _ENCODER.encode(event).decode()


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
        event: Event | None
        try:
            event = _DECODER.decode(line)
        except (msgspec.ValidationError, msgspec.DecodeError):
            if not line.strip():
                return None
            try:
                event = parse_line(line)
            except MalformedLine as exc:
                report.malformed.append((report.lines, str(exc)))
                return None
            if event is None:
                try:
                    kind = _KIND.decode(line).ev or "?"
                except (msgspec.ValidationError, msgspec.DecodeError):
                    kind = "?"
                report.unknown_kinds[kind] += 1
                return None
        report.events += 1
        if type(event) is End:
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
    """Read a whole log file (gzipped too: ``.jsonl.gz``, as the corpus is kept). Bytes that are
    not UTF-8 make their line malformed, not fatal."""
    reader = EventReader()
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
        events = list(reader.read(fh))
    return events, reader.report
