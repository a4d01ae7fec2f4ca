"""The session: one board and the runners that feed it, live or replayed.

The app (and the headless CLI) receive a Session; they never build runners or reach into each
other. A session is either ``live`` (probes started from a plan, or given runners) or ``replay``
(saved logs played back through the same board), and says so in ``mode``.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .board import Board
from .config import Config
from .plan import (PlannedProbe, RunnerFactory, finish_preparations, run_plan, run_runners,
                   runner_factory)
from .runners import ReplayRunner, Runner

if TYPE_CHECKING:
    from .adaptive import AdaptiveReport

DEFAULT_HORIZONS = (5, 10, 20, 25)
FAST_REPLAY_LANES = 4
REPLAY_LANES = 256


class Mode(enum.Enum):
    LIVE = "live"
    REPLAY = "replay"


@dataclass
class Session:
    board: Board
    mode: Mode = Mode.LIVE
    config: Config | None = None
    horizons: tuple[int, ...] = DEFAULT_HORIZONS
    log_dir: Path | None = None
    title: str = ""
    factory: RunnerFactory | None = None  # how a live plan's probes are started (tests: fakes)
    runners: list[Runner] = field(default_factory=list)  # given up front (replay, or tests)
    # a probe's host in one line, where its provider knows more (a launched instance's phase
    # and cost so far); None: nothing to add
    host_caption: Callable[[str], str | None] | None = None
    _live: dict[str, Runner] = field(default_factory=dict, init=False)
    adaptive: AdaptiveReport | None = field(default=None, init=False)  # after a live plan

    @classmethod
    def replay(cls, board: Board, runners: list[ReplayRunner], title: str = "") -> Session:
        return cls(board, Mode.REPLAY, runners=list(runners), title=title)

    @property
    def is_replay(self) -> bool:
        return self.mode is Mode.REPLAY

    @property
    def replay_runners(self) -> list[ReplayRunner]:
        return [r for r in self.runners if isinstance(r, ReplayRunner)]

    # ---- driving probes ---------------------------------------------------------------------

    async def drive(self) -> None:
        """Feed the runners given up front into the board until they end."""
        for r in self.runners:
            self._live[r.spec.key] = r
        await run_runners(self.board, self.runners, self.drive_limit)

    @property
    def drive_limit(self) -> int | None:
        """How many given runners play at once: a replay as fast as possible reads a few logs at
        a time (it is CPU-bound anyway), a paced one at most REPLAY_LANES (open files)."""
        replays = self.replay_runners
        if not replays:
            return None
        return FAST_REPLAY_LANES if all(r.speed <= 0 for r in replays) else REPLAY_LANES

    async def run(self, plan: list[PlannedProbe], concurrency: int, timeout: float) -> None:
        """Start a live plan: probes on their hosts, logs under the plan's directory."""
        make = self.factory or runner_factory(self.config.hosts if self.config else [])

        def factory(host, spec, path):  # type: ignore[no-untyped-def]
            runner = make(host, spec, path)
            self._live[spec.key] = runner
            return runner

        if plan:
            self.log_dir = plan[0].log_path.parent
        try:
            await run_plan(self.board, plan, concurrency=concurrency, timeout=timeout,
                           factory=factory, finish=False)
            if plan and not any(p.spec.full for p in plan):
                from ..model.ranking import RankOptions
                from .adaptive import settle

                settings = self.config.probe if self.config else None
                self.adaptive = await settle(
                    self.board, plan, RankOptions(epochs=settings.epochs if settings else None),
                    budget_s=settings.adaptive_budget if settings else None,
                    concurrency=concurrency, timeout=timeout, factory=factory)
        finally:  # the hosts' project copies: once the adaptive probe is over too
            await finish_preparations(plan)

    @property
    def has_probes(self) -> bool:
        return bool(self.runners or self._live)

    def is_running(self, key: str) -> bool:
        """A live probe that can be cancelled."""
        entry = self.board.entries.get(key)
        return entry is not None and entry.active and key in self._live

    async def cancel(self, key: str) -> bool:
        """Stop one probe; False when it is not running (the others go on)."""
        if not self.is_running(key):
            return False
        await self._live[key].cancel()
        return True

    async def stop_all(self, wait: float = 20.0) -> None:
        """Stop every running probe and wait (bounded) until they are gone. A replay has
        nothing to stop: cancelling its driver (the caller's) ends it at once."""
        if self.is_replay:
            return
        active = [r for k, r in self._live.items()
                  if (e := self.board.entries.get(k)) is not None and e.active]
        if active:
            await asyncio.wait_for(asyncio.gather(*(r.cancel() for r in active),
                                                  return_exceptions=True), wait)

    # ---- replay controls --------------------------------------------------------------------

    @property
    def paused(self) -> bool:
        runners = self.replay_runners
        return bool(runners) and runners[0].paused

    @property
    def speed(self) -> float:
        runners = self.replay_runners
        return runners[0].speed if runners else 1.0

    def set_paused(self, paused: bool) -> None:
        for r in self.replay_runners:
            r.pause() if paused else r.resume()

    def scale_speed(self, factor: float) -> None:
        for r in self.replay_runners:
            r.speed = min(1000.0, max(0.125, (r.speed or 1.0) * factor))
