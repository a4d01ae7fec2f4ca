"""``probe --find-batch-size``: the largest batch size that fits on a host, found by probing it
one batch size at a time - the search (core/model/memory/batch_search.py) says which next, from the
memory each probe reached. Each probe is an ordinary probe (a log, a row in the ranking)."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path

from ..model.memory.batch_search import DEFAULT_CAP, DEFAULT_START, Answer, Search
from ..model.memory.forecast import HEADROOM, memory_point
from .config import Host, ProbeSettings
from .probe_plan import PlannedProbe, plan_probes
from .prepare import Preparation
from .session import Session

PROBE_STEPS = 5  # the peak is reached in the first steps (gradients, optimizer state); more costs time


@dataclass
class Found:
    host: Host
    answer: Answer
    logs: list[Path]


def probe_settings(settings: ProbeSettings) -> ProbeSettings:
    """Short probes, no epoch boundary sought: what is measured is memory (and the step time
    comes with it)."""
    s = settings.copy()
    if s.max_steps is None or s.max_steps > PROBE_STEPS:
        s.max_steps = PROBE_STEPS if s.target_ci is None else s.max_steps
    s.boundary_budget = 0.0
    s.adaptive_budget = 0.0
    s.min_steady_seconds = 0.0
    return s


async def find_batch_size(session: Session, host: Host, settings: ProbeSettings, log_dir: Path,
                          search: Search, all_hosts: list[Host] | None = None,
                          prep: Preparation | None = None) -> Found:
    """Probe ``host`` at the batch sizes the search asks for until it has its answer."""
    settings = probe_settings(settings)
    settings.batch_sizes = [search.start]
    base = plan_probes([host], settings, log_dir, all_hosts, prep)[0]
    logs: list[Path] = []
    while (b := search.next()) is not None:
        key = f"{host.name}-b{b}"
        p = PlannedProbe(host, dataclasses.replace(base.spec, key=key, label=f"{host.name} b{b}",
                                                   batch_size=b),
                         log_dir / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', key)}.jsonl", base.prep)
        await session.run_only([p])
        logs.append(p.log_path)
        entry = session.board.entries[key]
        if entry.status not in ("done", "does-not-fit"):
            search.failure = f"b{b}: the probe {entry.status} ({entry.detail})"
            break
        search.add(memory_point(entry.state), b)
    return Found(host, search.answer(), logs)



async def find_on(session: Session, hosts: list[Host], settings: ProbeSettings, log_dir: Path,
                  headroom: float = HEADROOM, cap: int = DEFAULT_CAP,
                  start: int | None = None) -> list[Found]:
    """Every host searched at once (``start``: else the smallest chosen batch size); the
    project copies released at the end. `probe --find-batch-size` and the app's setup toggle."""
    first = start or (min(settings.batch_sizes) if settings.batch_sizes else DEFAULT_START)
    all_hosts = session.config.hosts if session.config is not None else hosts
    try:
        return list(await asyncio.gather(*(
            find_batch_size(session, h, settings, log_dir,
                            Search(start=first, cap=cap, headroom=headroom), all_hosts)
            for h in hosts)))
    finally:
        await session.release()
