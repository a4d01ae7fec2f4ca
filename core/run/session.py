"""The session: one board and the runners that feed it, live or replayed.

The app and ``probe --headless`` receive a Session; they never build runners or reach into each
other. A session is either ``live`` (probes started from a plan, or given runners) or ``replay``
(saved logs played back through the same board), and says so in ``mode``.

A live plan is driven here once, for every caller and every kind of host: ``run`` probes the plan
(or, with a ``ContenderPlan`` for it, only the rounds that plan hands out: contenders.py),
probes the undecided contenders again (the adaptive probe) and releases the hosts' project copies;
``run_launched`` does the same behind a launch (AWS instances, SkyPilot clusters), whose hosts come
up while the configured ones already probe; ``summary`` says how it went, in the same words for
the app's notification and the CLI's last lines. What surrounds a live run - the checks before
it, the plan, the ranking after it - is the probe job's (``job.py``), for every front-end.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from .board import Board
from .config import Config, Host, ProbeSettings
from .probe_plan import (PlannedProbe, RunnerFactory, finish_preparations, host_preps, run_plan,
                   run_runners, runner_factory)
from .runners import ReplayRunner, Runner

if TYPE_CHECKING:
    from .adaptive import AdaptiveReport
    from .contenders import ContenderPlan
    from .prepare import Preparation


class Launch(Protocol):
    """Hosts brought up for this session (core.cloud.launched.LaunchedHosts: AWS instances,
    SkyPilot clusters): planned before they exist, probed as each comes up, torn down when
    ``run`` ends or on ``close``."""

    log_dir: Path
    on_demand: bool  # a host comes up only once a probe of it is handed out (contenders)

    def caption(self, key: str) -> str | None: ...

    def plan(self, settings: ProbeSettings, others: list[Host] | None = None,
             known: list[Host] | None = None, prep: Preparation | None = None
             ) -> list[PlannedProbe]: ...

    async def run(self, board: Board, plan: list[PlannedProbe],
                  probe: Callable[[], Awaitable[None]]) -> None: ...

    async def close(self) -> None: ...

    def summary(self) -> list[str]: ...


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
    settings: ProbeSettings | None = None  # the probes' settings; None: the config's [probe]
    full: bool = False  # every probe trains to the end (probe --full): nothing to probe again
    horizons: tuple[int, ...] = DEFAULT_HORIZONS
    log_dir: Path | None = None
    title: str = ""
    factory: RunnerFactory | None = None  # how a live plan's probes are started (tests: fakes)
    runners: list[Runner] = field(default_factory=list)  # given up front (replay, or tests)
    # a probe's host in one line, where its provider knows more (a launched instance's phase
    # and cost so far); None: nothing to add
    host_caption: Callable[[str], str | None] | None = None
    stop_wait: float = 20.0  # seconds stop_all waits for the hosts' probes to stop
    memory_from: list[str] = field(default_factory=list)  # logs the setup's memory forecast reads
    _live: dict[str, Runner] = field(default_factory=dict, init=False)
    adaptive: AdaptiveReport | None = field(default=None, init=False)  # after a live plan
    # probe only the contenders ([probe] contenders): the plan's probes handed out in rounds
    contenders: ContenderPlan | None = field(default=None, init=False)
    _plans: list[list[PlannedProbe]] = field(default_factory=list, init=False)  # every plan run

    @classmethod
    def replay(cls, board: Board, runners: list[ReplayRunner], title: str = "") -> Session:
        return cls(board, Mode.REPLAY, runners=list(runners), title=title)

    @property
    def is_replay(self) -> bool:
        return self.mode is Mode.REPLAY

    @property
    def replay_runners(self) -> list[ReplayRunner]:
        return [r for r in self.runners if isinstance(r, ReplayRunner)]

    # ---- running probes ----------------------------------------------------------------------

    async def play(self) -> None:
        """Feed the runners given up front into the board until they end."""
        for r in self.runners:
            self._live[r.spec.key] = r
        await run_runners(self.board, self.runners, self.play_lanes)

    @property
    def play_lanes(self) -> int | None:
        """How many given runners play at once: a replay as fast as possible reads a few logs at
        a time (it is CPU-bound anyway), a paced one at most REPLAY_LANES (open files)."""
        replays = self.replay_runners
        if not replays:
            return None
        return FAST_REPLAY_LANES if all(r.speed <= 0 for r in replays) else REPLAY_LANES

    @property
    def probe_settings(self) -> ProbeSettings:
        if self.settings is not None:
            return self.settings
        return self.config.probe if self.config is not None else ProbeSettings()

    async def run(self, plan: list[PlannedProbe], concurrency: int | None = None,
                  timeout: float | None = None) -> None:
        """Run a live plan: probes on their hosts, logs under the plan's directory; then, unless
        the plan trains to the end, the adaptive probe of the contenders the ranking cannot tell
        apart; the hosts' project copies are released once that is over too."""
        settings = self.probe_settings
        concurrency = settings.concurrency if concurrency is None else concurrency
        timeout = settings.timeout if timeout is None else timeout
        factory = self._begin_plan(plan)
        if self.full:  # whoever made the plan (a launch, SkyPilot's clusters, the CLI)
            for p in plan:
                p.spec.full = True
        self._plans.append(plan)
        try:
            await self._probe(plan, concurrency, timeout, factory)
            if plan and not any(p.spec.full for p in plan):
                from ..model.rank.ranking import RankOptions
                from .adaptive import settle

                self.adaptive = await settle(
                    self.board, plan, RankOptions(epochs=settings.epochs, steps=settings.steps),
                    budget_s=settings.adaptive_budget, concurrency=concurrency, timeout=timeout,
                    factory=factory)
        finally:  # the hosts' project copies: once the adaptive probe is over too
            await finish_preparations(plan)

    async def _probe(self, plan: list[PlannedProbe], concurrency: int, timeout: float,
                     factory: RunnerFactory) -> None:
        """Every probe of the plan; with a contender plan for it, only the rounds it hands
        out (the rest are predicted)."""
        rounds = self.contenders if self.contenders is not None \
            and self.contenders.plan is plan else None
        if rounds is None:
            await run_plan(self.board, plan, concurrency=concurrency, timeout=timeout,
                           factory=factory, finish=False)
            return
        while chosen := rounds.next_round():
            await run_plan(self.board, chosen, concurrency=concurrency, timeout=timeout,
                           factory=factory, finish=False)

    def _begin_plan(self, plan: list[PlannedProbe]) -> RunnerFactory:
        """A plan's log directory, and the factory that makes its runners and keeps them (to
        stop them on quit)."""
        make = self.factory or runner_factory(self.config.hosts if self.config else [])

        def factory(host, spec, path):  # type: ignore[no-untyped-def]
            runner = make(host, spec, path)
            self._live[spec.key] = runner
            return runner

        if plan:
            self.log_dir = plan[0].log_path.parent
        return factory

    async def run_only(self, plan: list[PlannedProbe], timeout: float | None = None) -> None:
        """Run a plan's probes and nothing else: no adaptive probe, and the hosts' project
        copies kept for the next plan (``release`` them at the end). The batch-size search
        (find_batch.py) runs its probes one by one through here."""
        factory = self._begin_plan(plan)
        self._plans.append(plan)
        timeout = self.probe_settings.timeout if timeout is None else timeout
        await run_plan(self.board, plan, concurrency=len(plan) or 1, timeout=timeout,
                       factory=factory, finish=False)

    async def release(self) -> None:
        """The project copies of every plan run_only ran: released (removed unless kept)."""
        await finish_preparations([p for plan in self._plans for p in plan])

    async def run_launched(self, launch: Launch, plan: list[PlannedProbe],
                           concurrency: int | None = None, timeout: float | None = None) -> None:
        """``run``, behind a launch: its hosts' probes wait at their gates until each is up,
        the configured hosts' probe at once, and everything launched ends with it."""
        self.host_caption = launch.caption
        self.log_dir = launch.log_dir
        await launch.run(self.board, plan, lambda: self.run(plan, concurrency, timeout))

    def summary(self, failures: bool = True) -> list[str]:
        """How the live plans went, one line per thing worth saying: the hosts' preparations
        (project copies, setup), the probes the contender plan saved, the probes that failed
        and why (``failures``), what the adaptive probe did."""
        # a launched host's gate (core/cloud/gate.py) wraps its own preparation; a launch that
        # failed is said by its probes' failures
        preps = [getattr(prep, "inner", prep) for plan in self._plans for prep in host_preps(plan)]
        lines = [f"prepared {prep.summary()}" for prep in preps if prep is not None
                 and (prep.shipped is not None or prep.setup_s is not None or prep.error)]
        if self.contenders is not None:
            lines += self.contenders.report.describe()
        if failures:
            lines += self.failures()
        lines += self.left_files()
        if self.adaptive is not None and (self.adaptive.reprobed or not self.adaptive.settled):
            lines.append(self.adaptive.describe())
        return lines

    def failures(self) -> list[str]:
        """Each failed probe and why, one line each."""
        return [f"{e.spec.label}: failed - {e.detail}" for e in self.board.entries.values()
                if e.status == "failed"]

    def left_files(self) -> list[str]:
        """What stopped probes left in their programs' folders (a checkpoint a later run there
        may resume from: core/agent/leftovers.py), once for the probes that left the same."""
        said: dict[str, list[str]] = {}
        for e in self.board.entries.values():
            for msg in e.state.left_files():
                said.setdefault(msg, []).append(e.spec.label)
        return [f"{', '.join(labels)}: {msg}" for msg, labels in said.items()]

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

    async def stop_all(self) -> None:
        """Stop every running probe and wait, ``stop_wait`` at most, until they are gone. A
        replay has nothing to stop: cancelling its driver (the caller's) ends it at once. A host
        slower to stop is given up on, not waited for: the caller cancels the drivers next,
        which mark its probe stopped (raising here kept the app from quitting)."""
        if self.is_replay:
            return
        active = [r for k, r in self._live.items()
                  if (e := self.board.entries.get(k)) is not None and e.active]
        if active:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*(r.cancel() for r in active),
                                                      return_exceptions=True), self.stop_wait)

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
