"""The setup screen's memory forecast: read once (in a thread) from earlier probes - the logs of
earlier sessions under the log root and ``probecast --memory-from`` - and asked per workload and
chosen batch sizes: which instances hold them (the table's fit column) and what to say of the
picks (the line under the summary). core/model/memory/forecast.py forecasts; this only keeps it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from probecast.core.model.memory.forecast import ProgramMemory, programs_memory
from probecast.core.model.logstore import discover_logs, load_probe
from probecast.core.model.pricing import Catalog
from probecast.core.model.state import ProbeState
from probecast.core.report.memory_text import fit_cell, setup_note
from probecast.core.run.session import Session

LOG_ROOT = "probecast-logs"  # where sessions write their logs by default (plan.session_dir)
MAX_LOGS = 2000  # a log root of many sessions: the newest this many are read


def states_from_logs(paths: Sequence[str]) -> tuple[list[ProbeState], int]:
    """The probe states of the logs under ``paths`` (files or directories; missing ones
    skipped), the newest first; and how many were read."""
    files, _ = discover_logs([p for p in paths if Path(p).exists()])
    files = sorted(files, key=lambda f: f.stat().st_mtime, reverse=True)[:MAX_LOGS]
    return [load_probe(f).state for f in files], len(files)


class SetupMemory:
    def __init__(self, session: Session, catalog: Catalog) -> None:
        # the logs given; else the session's, or earlier sessions' under the log root
        self.paths = list(session.memory_from) or [str(session.log_dir or LOG_ROOT)]
        self.catalog = catalog
        self.states: list[ProbeState] | None = None  # None: not read yet
        self.logs = 0
        self._programs: dict[tuple[str, tuple[int, ...]], ProgramMemory | None] = {}

    def load(self) -> None:
        """Read the logs (a worker thread: a log root of many sessions takes a moment)."""
        self.states, self.logs = states_from_logs(self.paths)

    def program(self, workload: str, batch_sizes: Sequence[int]) -> ProgramMemory | None:
        if self.states is None:
            return None
        key = (workload, tuple(batch_sizes))
        if key not in self._programs:
            mine = [s for s in self.states if s.start is not None and s.start.workload == workload]
            self._programs[key] = programs_memory(mine, self.catalog, batch_sizes).get(workload)
        return self._programs[key]

    def cell(self, workload: str, batch_sizes: Sequence[int], instance: str) -> str:
        program = self.program(workload, batch_sizes)
        return fit_cell(program.on(instance) if program else None, batch_sizes)

    def note(self, workload: str, batch_sizes: Sequence[int], picked: Sequence[str]) -> str:
        if self.states is None:
            return "memory: reading earlier probes for a forecast …"
        return setup_note(workload, self.program(workload, batch_sizes), batch_sizes, picked)
