"""Probe logs on disk: find them, read them, fold them."""

from __future__ import annotations

import gzip
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable
from typing import IO

from .events import EventReader, ReadReport
from .rows import Candidate
from .state import ProbeState, fold_lines

LOG_SUFFIXES = (".jsonl", ".ndjson", ".log", ".jsonl.gz")


def is_log(path: Path) -> bool:
    return path.name.endswith(LOG_SUFFIXES)


def log_name(path: Path) -> str:
    """A log's name without its suffix (``x.jsonl.gz`` -> ``x``, as ``x.jsonl`` -> ``x``)."""
    for suffix in LOG_SUFFIXES[::-1]:  # the longest, .jsonl.gz, first
        if path.name.endswith(suffix):
            return path.name[: -len(suffix)]
    return path.stem


def open_log(path: str | os.PathLike[str]) -> IO[str]:
    """A log as text lines; gzipped logs (``.jsonl.gz``, the corpus) are read as they are."""
    if str(path).endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


@dataclass
class ProbeRecord:
    """A probe log read from disk: its folded state and what the reader saw."""

    path: Path
    state: ProbeState
    report: ReadReport

    @property
    def label(self) -> str:
        return self.state.probe_id or self.path.stem

    def candidate(self) -> Candidate:
        return Candidate(key=str(self.path), label=self.label, state=self.state, path=str(self.path),
                         truncated=self.report.truncated,
                         malformed_lines=len(self.report.malformed),
                         setup_s=setup_seconds(self.path))


_BATCH_SUFFIX = re.compile(r"-b\d+$")


def setup_seconds(log: Path) -> float | None:
    """The measured `[probe] setup` of the host a probe log belongs to: ``<host>.setup.json``
    beside ``<host>-b<batch>.jsonl`` (core/run/prepare.py writes it); None when there was none
    or it failed."""
    stem = log.name.split(".jsonl")[0]
    host = _BATCH_SUFFIX.sub("", stem)
    if host == stem:
        return None
    record = log.with_name(f"{host}.setup.json")
    try:
        data = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    seconds = data.get("seconds") if isinstance(data, dict) else None
    if data.get("exit_status") != 0 or not isinstance(seconds, (int, float)):
        return None
    return float(seconds)


def discover_logs(paths: list[str]) -> tuple[list[Path], list[str]]:
    """Expand files and directories (recursively, sorted) into log files; errors name the path."""
    found: list[Path] = []
    errors: list[str] = []
    for raw in paths:
        p = Path(os.path.expanduser(raw))
        if p.is_dir():
            logs = sorted(f for f in p.rglob("*") if f.is_file() and is_log(f))
            if not logs:
                errors.append(f"{raw}: no probe logs (*.jsonl) in this directory")
            found.extend(logs)
        elif p.is_file():
            found.append(p)
        else:
            errors.append(f"{raw}: no such file or directory")
    return found, errors


def load_probe(path: str | os.PathLike[str]) -> ProbeRecord:
    """Read and fold one log. Malformed lines are counted in the report, never fatal."""
    reader = EventReader()
    state = ProbeState()
    with open_log(path) as fh:
        fold_lines(fh, state, reader)
    return ProbeRecord(Path(path), state, reader.report)


def load_records(paths: list[str], warn: Callable[[str], object]) -> list[ProbeRecord]:
    """Every log under ``paths``, read and folded; each problem (a path with no logs, a file
    that cannot be read, malformed lines) said once through ``warn``, never fatal."""
    files, errors = discover_logs(paths)
    for e in errors:
        warn(e)
    records = []
    for f in files:
        try:
            rec = load_probe(f)
        except OSError as exc:
            warn(f"{f}: cannot read ({exc.strerror or exc})")
            continue
        if rec.report.malformed:
            warn(f"{f}: {len(rec.report.malformed)} malformed line(s) skipped - "
                 f"{rec.report.describe_malformed()}")
        records.append(rec)
    return records
