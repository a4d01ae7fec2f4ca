"""MLPerf Training result logs read as they really are: ``:::MLLOG {...}`` lines (the format of
mlcommons/logging) among a job's other output.

What real result files hold besides the lines themselves, each handled here:

- a rank prefix (``0: :::MLLOG ...``) and, without one, the same line printed by every rank: a
  line is kept once (the lowest rank's, or the first of identical ones; ``init_start`` is the
  earliest any rank printed);
- program output glued in front of a line (``... True:::MLLOG {...}``) and lines that are not
  MLLOG at all: skipped; a MLLOG line whose JSON does not parse is counted, never fatal;
- events after ``run_stop``: not part of the run (counted);
- progress written in different units by different benchmarks (``epoch_num`` in epochs, in
  samples, or as a fraction of an epoch; ``samples_count``; a block's ``first_epoch_num`` and
  ``epoch_count``), and evaluations that end after their ``eval_stop`` (a metric computed
  afterwards) or have no ``eval_start`` at all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

MLLOG = ":::MLLOG"
_RANK = re.compile(r"^\s*(\d+)\s*:\s*$")
_DECODER = json.JSONDecoder()
# keys a run has once: across ranks the earliest start and the latest stop is the run's
_ONCE_FIRST = ("init_start", "run_start")
_ONCE_LAST = ("init_stop",)


@dataclass(frozen=True)
class MlEvent:
    """One MLLOG line."""

    time_ms: float
    key: str
    value: Any
    meta: dict[str, Any]
    rank: int | None = None
    line: int = 0


@dataclass
class MlRead:
    """The events of one result file, deduplicated and in time order, with what was set aside."""

    events: list[MlEvent] = field(default_factory=list)
    malformed: list[int] = field(default_factory=list)  # line numbers of MLLOG lines not read
    duplicates: int = 0  # the same event printed again (by another rank)
    after_stop: int = 0  # events after run_stop
    other_lines: int = 0  # the program's own output

    def first(self, key: str) -> MlEvent | None:
        return next((e for e in self.events if e.key == key), None)

    def value(self, key: str, default: Any = None) -> Any:
        ev = self.first(key)
        return default if ev is None else ev.value

    def all(self, key: str) -> list[MlEvent]:
        return [e for e in self.events if e.key == key]


def _parse_line(text: str, number: int) -> MlEvent | None:
    """The MLLOG event on a line; None for a line that is not one; ValueError when it is one
    whose JSON is broken."""
    at = text.find(MLLOG)
    if at < 0:
        return None
    rank_match = _RANK.match(text[:at])
    body = text[at + len(MLLOG):].strip()
    obj, _ = _DECODER.raw_decode(body)  # trailing output after the object is ignored
    if not isinstance(obj, dict) or "key" not in obj or "time_ms" not in obj:
        raise ValueError("not an MLLOG event")
    time_ms = float(obj["time_ms"])
    meta = obj.get("metadata") or {}
    if not isinstance(meta, dict):
        meta = {}
    return MlEvent(time_ms, str(obj["key"]), obj.get("value"), meta,
                   int(rank_match.group(1)) if rank_match else None, number)


def _identity(ev: MlEvent) -> str:
    meta = {k: v for k, v in ev.meta.items() if k not in ("file", "lineno")}
    return json.dumps([ev.key, ev.value, meta], sort_keys=True, default=str)


def read_mllog(lines: Iterable[str]) -> MlRead:
    """Every MLLOG event of a result file, once each, in time order, up to ``run_stop``."""
    out = MlRead()
    raw: list[MlEvent] = []
    for number, text in enumerate(lines, 1):
        try:
            ev = _parse_line(text, number)
        except (ValueError, TypeError, OverflowError):
            out.malformed.append(number)
            continue
        if ev is None:
            out.other_lines += 1
        else:
            raw.append(ev)
    lowest_of: dict[str, int] = {}
    for e in raw:
        if e.rank is not None:
            lowest_of[e.key] = min(e.rank, lowest_of.get(e.key, e.rank))
    once: dict[str, MlEvent] = {}
    seen: set[str] = set()
    kept: list[MlEvent] = []
    for ev in raw:
        if ev.key in _ONCE_FIRST or ev.key in _ONCE_LAST:
            old = once.get(ev.key)
            if old is not None:
                out.duplicates += 1
            later = ev.key in _ONCE_LAST
            if old is None or (ev.time_ms > old.time_ms if later else ev.time_ms < old.time_ms):
                once[ev.key] = ev
            continue
        if ev.rank is not None and ev.rank != lowest_of.get(ev.key, ev.rank):
            out.duplicates += 1
            continue
        ident = _identity(ev)
        if ident in seen:
            out.duplicates += 1
            continue
        seen.add(ident)
        kept.append(ev)
    kept.extend(once.values())
    kept.sort(key=lambda e: (e.time_ms, e.line))
    stop = next((i for i, e in enumerate(kept) if e.key == "run_stop"), None)
    if stop is not None:
        out.after_stop = len(kept) - stop - 1
        kept = kept[:stop + 1]
    out.events = kept
    return out


def progress_of(meta: dict[str, Any]) -> tuple[float | None, str]:
    """How far training had got, as an event's metadata says it, and in which unit."""
    for key, unit in (("samples_count", "samples"), ("epoch_num", "epochs"), ("step_num", "steps")):
        value = meta.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value), unit
    return None, ""
