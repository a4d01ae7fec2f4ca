"""Hosts a session launches, probed as they come up: the flow AWS instances (``aws_launch``) and
SkyPilot clusters (``sky_launch``) share.

The launched hosts exist before the machines do (placeholders, their address filled in once they
run), so their probes are planned - and shown on the board - from the start: ``launching``, then
the probe's own statuses (copying the project, setup, probing), and each host's phase with what it
has cost so far (elapsed x hourly price) in ``caption``.

Each launched host is on its own (one failing probe never takes down the others): the
plan runs at once - configured hosts probe straight away - and a launched host's probes wait at
its gate (``HostGate``, their ``prep``) until that machine is up; one that cannot be launched or
reached fails its own probes, with why, and nothing else.

Whatever happens, everything launched is torn down when ``run`` ends (success, failure, cancel)
or when ``close`` is called (the app's quit); each provider's backstop (AWS's dead-man timer,
SkyPilot's autodown) and `probecast cleanup` cover a probecast that was killed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ..run.board import ACTIVE_STATUSES, Board
from ..run.config import Host, ProbeSettings
from ..run.probe_plan import PlannedProbe, plan_probes
from ..run.runners import RunnerStatus
from .gate import HostGate

if TYPE_CHECKING:
    from ..run.prepare import HostPrep, Preparation

log = logging.getLogger("probecast.cloud")


@dataclass
class LaunchedHost:
    """One machine to launch: its probe host, its phase and what it has cost so far."""

    host: Host  # a placeholder until the machine runs: then its address, key and user
    price_per_hour: float | None
    phase: str = "waiting"  # launching, booting, up, failed, terminating, terminated
    error: str = ""  # why it never came up (its probes failed with it)
    instance_id: str = ""  # the provider's name for it: an EC2 instance id, a cluster name
    zone: str = ""
    started: float | None = None  # monotonic: the provider answered (billing starts)
    ended: float | None = None  # torn down
    keys: list[str] = field(default_factory=list)  # its probes on the board

    def elapsed(self, now: float | None = None) -> float:
        if self.started is None:
            return 0.0
        return max(0.0, (self.ended or (now if now is not None else time.monotonic()))
                   - self.started)

    def cost(self, now: float | None = None) -> float | None:
        if self.price_per_hour is None:
            return None
        return self.price_per_hour * self.elapsed(now) / 3600


def unique_names(names: list[str], taken: set[str] | None) -> list[str]:
    """Host names for the machines to launch: each name as given, numbered where a configured
    host (or the same name earlier) has it already."""
    used, out = set(taken or ()), []
    for t in names:
        name, n = t, 2
        while name in used:
            name, n = f"{t}-{n}", n + 1
        used.add(name)
        out.append(name)
    return out


class LaunchedHosts:
    """The launched hosts of one session, planned up front; ``run`` brings each up on its own
    while the plan probes, and tears everything down at the end. A provider fills in
    ``come_up`` (launch and reach one host), ``release`` (tear one failed host down at once),
    ``tear_down`` (everything, idempotent) and ``none_came_up``."""

    def __init__(self, log_dir: Path, hosts: list[LaunchedHost]) -> None:
        self.log_dir = log_dir
        self.hosts = hosts
        self._by_key: dict[str, LaunchedHost] = {}
        self._gates = {lh.host.name: HostGate(lh.host) for lh in self.hosts}
        self._keepers: list[asyncio.Task[None]] = []  # what keeps a host alive while it is up
        self._closing: asyncio.Future[None] | None = None
        self.board: Board | None = None
        # bring a host up only once a probe of it is handed out (the contender plan's rounds:
        # a candidate it predicts is never launched); False: every host at once
        self.on_demand = False

    # ---- what a provider supplies -----------------------------------------------------------

    async def come_up(self, lh: LaunchedHost) -> None:
        raise NotImplementedError

    async def release(self, lh: LaunchedHost) -> None:
        """A host that failed, torn down at once (``close`` tears it down again otherwise)."""

    async def tear_down(self) -> None:
        raise NotImplementedError

    def check(self) -> None:
        """Raise when nothing may launch (its worst case over the cap): before anything does."""

    def none_came_up(self, failed: list[LaunchedHost]) -> Exception:
        return RuntimeError("no launched host came up: " + "; ".join(
            f"{lh.host.name}: {lh.error}" for lh in failed))

    def keep_alive(self, lh: LaunchedHost) -> Awaitable[None] | None:
        """What runs while the host is up (AWS pushes its dead-man deadline back); None: nothing."""
        return None

    def summary(self) -> list[str]:
        """What the end of the run says about the launched hosts (the CLI's last lines, the
        app's notification)."""
        return []

    # ---- the plan -----------------------------------------------------------------------------

    def plan(self, settings: ProbeSettings, others: list[Host] | None = None,
             known: list[Host] | None = None, prep: Preparation | None = None
             ) -> list[PlannedProbe]:
        """The probes of the launched hosts (and of ``others``, configured hosts, in one plan;
        ``known``: every configured host, where jump hosts are found; ``prep``: the project
        scanned already)."""
        hosts = [*(others or []), *(h.host for h in self.hosts)]
        plan = plan_probes(hosts, settings, self.log_dir,
                           [*(known or others or []), *(h.host for h in self.hosts)], prep)
        self.adopt(plan)
        return plan

    def adopt(self, plan: list[PlannedProbe]) -> None:
        """Know which probes run on which launched host (for their statuses and captions), and
        put them behind its gate (their ``prep``, wrapping the host's own preparation)."""
        by_name = {h.host.name: h for h in self.hosts}
        for p in plan:
            lh = by_name.get(p.host.name)
            if lh is None:
                continue
            if p.spec.key not in lh.keys:
                lh.keys.append(p.spec.key)
                self._by_key[p.spec.key] = lh
            gate = self._gates[lh.host.name]
            if p.prep is not cast("HostPrep", gate):
                if p.prep is not None and gate.inner is None:
                    gate.inner = p.prep
                p.prep = cast("HostPrep", gate)  # duck-typed: what run_plan asks of a prep

    def caption(self, key: str) -> str | None:
        """A probe's launched host in one line: type, instance, phase, time, cost so far."""
        lh = self._by_key.get(key)
        if lh is None:
            return None
        parts = [lh.host.instance]
        if lh.instance_id:
            parts.append(lh.instance_id)
        secs = int(lh.elapsed())
        parts.append(f"{self.phase(key)} {secs // 60}:{secs % 60:02d}")
        cost = lh.cost()
        if cost is not None:
            parts.append(f"${cost:.3f} (${lh.price_per_hour:.3f}/h)")
        return " · ".join(parts)

    def phase(self, key: str) -> str:
        """launching → (copying →) setup → probing → terminating → terminated, for one probe's
        host; while it is up, what its probe is doing says which."""
        lh = self._by_key[key]
        if lh.phase != "up":
            return lh.phase
        entry = self.board.entries.get(key) if self.board is not None else None
        if entry is None:
            return "up"
        if entry.status == "uploading" and "agent" not in entry.detail:
            return "copying"
        if entry.status == "running" and "setup" in entry.detail and not entry.state.steps:
            return "setup"
        if entry.status in ("running", "connecting", "uploading"):
            return "probing"
        return {"pending": "waiting", "done": "probed"}.get(entry.status, entry.status)

    # ---- the flow ---------------------------------------------------------------------------

    def say(self, lh: LaunchedHost, status: str, detail: str) -> None:
        if self.board is None:
            return
        for key in lh.keys:
            entry = self.board.entries.get(key)
            if entry is not None and entry.status in ACTIVE_STATUSES:
                self.board.feed(key, RunnerStatus(status, detail))

    async def run(self, board: Board, plan: list[PlannedProbe],
                  probe: Callable[[], Awaitable[None]]) -> None:
        """Run ``probe()`` (the whole plan) at once while each host is launched and reached on
        its own: a launched host's probes wait at its gate (their ``prep``) until it is up, and
        fail with the reason when it cannot be - the configured hosts' probes and the other
        launched hosts' go on. Everything launched is torn down when ``run`` ends, whichever way
        (a failed host at once). Raises only when nothing could run: the worst case is refused
        before anything launches (``check``), or every host of the plan was launched and none
        came up."""
        self.board = board
        self.adopt(plan)
        for p in plan:
            if p.spec.key not in board.entries:
                board.add(p.spec, p.log_path)
        try:
            self.check()
            bring_up = [asyncio.create_task(self._bring_up(lh)) for lh in self.hosts]
            try:
                await probe()
            finally:  # a host still coming up has no probe left to serve
                for task in [*bring_up, *self._keepers]:
                    task.cancel()
                if bring_up or self._keepers:
                    await asyncio.wait([*bring_up, *self._keepers], timeout=10)
            failed = [lh for lh in self.hosts if lh.error]
            if self.hosts and len(failed) == len(self.hosts) and all(
                    p.spec.key in self._by_key for p in plan):
                raise self.none_came_up(failed)
        except asyncio.CancelledError:
            self._end_all(board, plan, "stopped", "cancelled")
            raise
        except Exception as exc:
            self._end_all(board, plan, "failed", f"launch failed: {exc}")
            raise
        finally:
            await self.close()

    @staticmethod
    def _end_all(board: Board, plan: list[PlannedProbe], status: str, detail: str) -> None:
        """Probes that never started (or are still going) when the launch ends early."""
        for p in plan:
            entry = board.entries.get(p.spec.key)
            if entry is not None and entry.active:
                board.feed(p.spec.key, RunnerStatus(status, detail))

    async def _bring_up(self, lh: LaunchedHost) -> None:
        """One host: launched, running, reached - then its probes go; or failed, and only its
        probes fail."""
        gate = self._gates[lh.host.name]
        try:
            if self.on_demand:
                await gate.demanded.wait()
            await self.come_up(lh)
        except asyncio.CancelledError:
            gate.settle("cancelled")
            raise
        except Exception as exc:  # noqa: BLE001 - this host's probes say it; the others go on
            lh.error = self.explain(exc)
            lh.phase = "failed"
            reason = f"launch failed: {lh.error}"
            log.info("%s: %s", lh.host.name, reason)
            self.say(lh, "failed", reason)
            gate.settle(reason)
            await self.release(lh)
            return
        lh.phase = "up"
        keeper = self.keep_alive(lh)
        if keeper is not None:
            self._keepers.append(asyncio.ensure_future(keeper))
        self.say(lh, "pending", f"{lh.instance_id} up at {lh.host.address}")
        gate.settle(None)

    def explain(self, exc: Exception) -> str:
        return f"{type(exc).__name__}: {exc}"

    async def close(self) -> None:
        """Tear everything down (idempotent; concurrent callers wait for the one)."""
        if self._closing is None:
            self._closing = asyncio.ensure_future(self.tear_down())
        await asyncio.shield(self._closing)
