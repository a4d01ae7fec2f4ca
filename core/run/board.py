"""The board: every probe of a session, its state, status and estimate; the live ranking.

Runners feed events in (O(1) each); the UI reads the board on a timer and redraws only what
changed (each entry carries a version number that bumps on every change).
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from ..agent.steady import DEFAULT_STATISTIC
from ..model.events import Block, Event, Step
from ..model.pricing import cost_usd
from ..model.epochs import EpochsInfo
from ..model.rank.ranking import Candidate, EstimateCache, Pricing, RankedRow, Ranking, RankOptions, build_ranking
from .runners import LineBatch, ProbeSpec, Runner, RunnerStatus
from ..model.events import EventReader
from ..model.logstore import setup_seconds
from ..model.memory.forecast import does_not_fit
from ..model.estimate.runtime import ran_untimed
from ..model.state import ProbeState, fold_lines

CHART_POINTS = 240
# a probe not yet ended: "launching" while its host (a launched instance) comes up
ACTIVE_STATUSES = ("pending", "launching", "connecting", "uploading", "running")


@dataclass
class ProbeEntry:
    spec: ProbeSpec
    state: ProbeState = field(default_factory=ProbeState)
    status: str = "pending"
    detail: str = ""
    log_path: Path | None = None
    recent: deque[float] = field(default_factory=lambda: deque(maxlen=CHART_POINTS))
    reader: EventReader = field(default_factory=EventReader)  # for raw line batches
    version: int = 0

    @property
    def key(self) -> str:
        return self.spec.key

    @property
    def instance(self) -> str:
        if self.state.start is not None and self.state.start.instance:
            return self.state.start.instance
        return self.spec.instance

    @property
    def batch_size(self) -> int:
        if self.state.start is not None and self.state.start.batch_size:
            return self.state.start.batch_size
        return self.spec.batch_size

    @property
    def active(self) -> bool:
        return self.status in ACTIVE_STATUSES


class Board:
    def __init__(self, pricing: Pricing, statistic: str = DEFAULT_STATISTIC,
                 epoch_plan: dict[tuple[str, int], EpochsInfo] | None = None) -> None:
        self.pricing = pricing
        self.statistic = statistic
        self.epoch_plan = epoch_plan  # methodology 1: N_ep per (workload, batch) from full runs
        self.entries: dict[str, ProbeEntry] = {}
        self.version = 0
        self._estimates: EstimateCache = {}  # per probe: re-estimated only when it changed
        self._setups: dict[Path, float | None] = {}  # each host's measured setup, by probe log
        # instances nobody probed that every ranking of this board predicts (the contender
        # plan's, core/run/contenders.py), unless the options name their own
        self.predict: tuple[str, ...] = ()

    def add(self, spec: ProbeSpec, log_path: Path | None = None) -> ProbeEntry:
        entry = ProbeEntry(spec, log_path=log_path)
        self.entries[spec.key] = entry
        self.version += 1
        return entry

    def restart(self, key: str, log_path: Path | None = None) -> ProbeEntry:
        """The probe runs again from the start (the adaptive probe): a fresh state, same key."""
        old = self.entries[key]
        entry = ProbeEntry(old.spec, log_path=log_path or old.log_path)
        entry.version = old.version + 1  # cached estimates of the old state are not reused
        self.entries[key] = entry
        self.version += 1
        return entry

    def feed(self, key: str, item: Event | RunnerStatus | LineBatch) -> None:
        entry = self.entries[key]
        if isinstance(item, LineBatch):
            fold_lines(item.lines, entry.state, entry.reader)
            # the chart shows the latest steps; at full replay speed: the first (slow) one when it
            # is still in view, then the latest steady ones
            st = entry.state
            entry.recent.clear()
            if st.t_it1 is not None and st.steps <= CHART_POINTS:
                entry.recent.append(st.t_it1)
            entry.recent.extend(st.steady.values[-CHART_POINTS:])
            if st.blocks and not st.steps:  # a run timed in blocks (imported MLPerf): its blocks
                entry.recent.extend(b.dt for b in st.blocks[-CHART_POINTS:])
            entry.version += 1
            self.version += 1
            return
        if type(item) is Step:  # the hot path
            entry.state.fold(item)
            entry.recent.append(item.dt)
            entry.version += 1
            self.version += 1
            return
        if isinstance(item, RunnerStatus):
            entry.status = item.status
            entry.detail = item.detail
            bad = entry.reader.report.malformed  # lines folded in batches (a fast replay)
            if bad and item.status in ("done", "failed", "stopped") and "malformed" not in item.detail:
                entry.detail += (f"; {len(bad)} malformed line(s) skipped: "
                                 f"{entry.reader.report.describe_malformed(1)}")
        else:
            entry.state.fold(item)
            if type(item) is Block:
                entry.recent.append(item.dt)
        entry.version += 1
        self.version += 1

    async def pump(self, runner: Runner) -> None:
        """Pump one runner into the board until it ends; a failure marks only this probe."""
        key = runner.spec.key
        try:
            async for item in runner.stream():
                self.feed(key, item)
        except asyncio.CancelledError:
            # marked stopped first: stopping the host can take long (an SSH grace period) or
            # never end (a hung host), and a second cancel - the app quitting - cuts it short
            self.feed(key, RunnerStatus("stopped", "cancelled"))
            await runner.cancel()
            raise
        except Exception as exc:  # noqa: BLE001 - one probe's failure must not stop the others
            self.feed(key, RunnerStatus("failed", f"{type(exc).__name__}: {exc}"))

    @property
    def active(self) -> int:
        return sum(1 for e in self.entries.values() if e.active)

    def workloads(self) -> list[str]:
        """Distinct workloads seen so far (rankings compare probes of one workload only)."""
        return sorted({e.state.start.workload for e in self.entries.values()
                       if e.state.start is not None})

    def candidates(self) -> list[Candidate]:
        """Every probe that can support an estimate yet (two steps or more, a block of a run
        timed in blocks, or a run with no step to time seen to its exit), and every probe whose
        batch size does not fit (a row that says so)."""
        return [Candidate(e.key, e.spec.label, e.state, status=e.status,
                          path=str(e.log_path) if e.log_path else None, version=e.version,
                          setup_s=self._setup_s(e.log_path))
                for e in self.entries.values()
                if e.state.steps >= 2 or e.state.blocks or e.status == "does-not-fit"
                or does_not_fit(e.state) or ran_untimed(e.state)]

    def _setup_s(self, log: Path | None) -> float | None:
        """The host's measured setup, read once per probe: setup ends before a probe's first
        step and only probes with steps are candidates, so what is read then is final (a
        ranking refresh of thousands of replayed logs does no file I/O)."""
        if log is None:
            return None
        if log not in self._setups:
            self._setups[log] = setup_seconds(log)
        return self._setups[log]

    def ranking(self, options: RankOptions) -> Ranking:
        """The ranking as it stands: the same pipeline as `probecast rank`."""
        if self.epoch_plan is not None and options.epoch_plan is None:
            options = dataclasses.replace(options, epoch_plan=self.epoch_plan)
        if options.statistic != self.statistic:
            options = dataclasses.replace(options, statistic=self.statistic)
        if self.predict and not options.predict:
            options = dataclasses.replace(options, predict=self.predict)
        return build_ranking(self.candidates(), self.pricing, options, self._estimates)

    def states(self) -> dict[str, ProbeState]:
        return {k: e.state for k, e in self.entries.items()}

    def full_cost(self, rows: list[RankedRow]) -> float | None:
        """What running every ranked candidate to completion would cost (Malta 2021, Table 5.14)."""
        if any(r.equation == "measured" for r in rows):
            return None  # a whole run among them (imported, or a probe that ran to its end)
        costs = [r.cost_usd for r in rows if r.cost_usd is not None]
        return sum(costs) if costs else None

    def probe_cost(self) -> float | None:
        """What the probes themselves have cost so far: price x wall time covered, billed by the
        instance's rule - as the ranking's deciding cost (core/report/table.decision_cost).

        None when no probe has a known price (local runs)."""
        total = 0.0
        priced = False
        for entry in self.entries.values():
            price, _, rule = self.pricing.price_for(entry.state)
            if price is None and entry.spec.price_per_hour is not None:
                price = entry.spec.price_per_hour
            if price is not None and not math.isnan(entry.state.elapsed):
                priced = True
                total += cost_usd(price, entry.state.elapsed, rule)
        return total if priced else None
