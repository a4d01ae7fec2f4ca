"""Launch instance types, probe them, terminate them: the one flow `probe --headless` and the app
share (``AwsProvider`` -> ``AwsLaunch``).

The launched hosts exist before the instances do (placeholders named by instance type, their
address filled in once they run), so their probes are planned - and shown on the board - from
the start: ``launching``, then the probe's own statuses (copying the project, setup, probing),
and each host's phase with what it has cost so far (elapsed x hourly price) in ``caption``.

Each launched host is on its own (DESIGN: one failing probe never takes down the others): the
plan runs at once - configured hosts probe straight away - and a launched host's probes wait at
its gate (``HostGate``, their ``prep``) until that instance is up; an instance that cannot be
launched or reached fails its own probes, with why, and nothing else.

Whatever happens, every instance launched is terminated when ``run`` ends (success, failure,
cancel) or when ``close`` is called (the app's quit); the dead-man timer and `probecast cleanup`
cover a probecast that was killed.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..model.pricing import Catalog
from ..run.board import ACTIVE_STATUSES, Board
from ..run.config import AwsSettings, Host, ProbeSettings
from ..run.plan import PlannedProbe, plan_probes
from ..run.runners import RunnerStatus
from .client import AwsError
from .deadman import DEADMAN_FILE, extend_command
from .gate import HostGate
from .provision import Launched, LaunchQuote, Provisioner, quote, terminate, wait_ssh_ready
from .userdata import known_hosts_line, write_known_hosts

if TYPE_CHECKING:
    from ..run.prepare import HostPrep

__all__ = ["AwsLaunch", "AwsProvider", "HostGate", "LaunchQuote", "LaunchedHost", "quote"]

log = logging.getLogger("probecast.cloud")


@dataclass
class LaunchedHost:
    """One instance type to launch: its probe host, its phase and what it has cost so far."""

    host: Host  # a placeholder until the instance runs: then its address, key and user
    price_per_hour: float | None
    phase: str = "waiting"  # launching, booting, up, failed, terminating, terminated
    error: str = ""  # why it never came up (its probes failed with it)
    instance_id: str = ""
    zone: str = ""
    started: float | None = None  # monotonic: run_instances answered (billing starts)
    ended: float | None = None  # terminate_instances answered
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


class AwsLaunch:
    """One launch: the instance types' hosts, planned up front; ``run`` launches, probes,
    terminates."""

    def __init__(self, provider: AwsProvider, types: list[str], log_dir: Path,
                 taken: set[str] | None = None) -> None:
        self.provider = provider
        self.aws = provider.aws
        self.log_dir = log_dir
        self.quote = provider.quote(types)
        self.prov = Provisioner(provider.ec2(), self.aws, ssm=provider.ssm())
        self.hosts: list[LaunchedHost] = []
        used = set(taken or ())
        for t in types:
            name, n = t, 2
            while name in used:  # a configured host of that name, or the type twice
                name, n = f"{t}-{n}", n + 1
            used.add(name)
            host = Host(name=name, instance=t, kind="ssh", address="", user=self.aws.user,
                        identity_file=self.aws.identity_file, python=self.aws.python,
                        known_hosts=str(log_dir / "known_hosts"), accept_new_host_key=False)
            price, _ = provider.catalog.price(t)
            self.hosts.append(LaunchedHost(host, price))
        self._by_key: dict[str, LaunchedHost] = {}
        self._gates = {lh.host.name: HostGate(lh.host) for lh in self.hosts}
        self._pinned: dict[str, str] = {}  # known_hosts lines of the hosts reached so far
        self._keepers: list[asyncio.Task[None]] = []  # dead-man pushers, one per host up
        self._closing: asyncio.Future[None] | None = None
        self.board: Board | None = None

    @property
    def launched(self) -> list[Launched]:
        return self.prov.launched

    @property
    def session(self) -> str:
        return self.prov.session

    def plan(self, settings: ProbeSettings, others: list[Host] | None = None,
             known: list[Host] | None = None) -> list[PlannedProbe]:
        """The probes of the launched hosts (and of ``others``, configured hosts, in one plan;
        ``known``: every configured host, where jump hosts are found)."""
        hosts = [*(others or []), *(h.host for h in self.hosts)]
        plan = plan_probes(hosts, settings, self.log_dir,
                           [*(known or others or []), *(h.host for h in self.hosts)])
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

    def _say(self, lh: LaunchedHost, status: str, detail: str) -> None:
        if self.board is None:
            return
        for key in lh.keys:
            entry = self.board.entries.get(key)
            if entry is not None and entry.status in ACTIVE_STATUSES:
                self.board.feed(key, RunnerStatus(status, detail))

    async def run(self, board: Board, plan: list[PlannedProbe],
                  probe: Callable[[], Awaitable[None]]) -> None:
        """Run ``probe()`` (the whole plan) at once while each host is launched and reached on
        its own: a launched host's probes wait at its gate (their ``prep``) until it is up (its
        pinned key in ``known_hosts``, SSH answering), and fail with the reason when it cannot be
        (launch error, no capacity, no SSH) - the configured hosts' probes and the other
        launched hosts' go on. Each host's dead-man deadline is pushed back from when it is up.
        Everything launched is terminated when ``run`` ends, whichever way (a failed host's
        instance at once). Raises only when nothing could run: the worst case is refused before
        anything launches, or every host of the plan was launched and none came up."""
        self.board = board
        self.adopt(plan)
        for p in plan:
            if p.spec.key not in board.entries:
                board.add(p.spec, p.log_path)
        try:
            if self.quote.problem:  # checked before anything launches, as the CLI does
                raise AwsError(self.quote.problem)
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
                raise AwsError("no launched instance came up: " + "; ".join(
                    f"{lh.host.instance}: {lh.error}" for lh in failed))
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
            item = await self._launch(lh)
            await self.prov.wait_running([item], 2 if self.aws.endpoint_url else 5)
            await self._reach(lh, item)
        except asyncio.CancelledError:
            gate.settle("cancelled")
            raise
        except Exception as exc:  # noqa: BLE001 - this host's probes say it; the others go on
            await self._fail(lh, gate, exc)
            return
        lh.phase = "up"
        self._keepers.append(asyncio.create_task(self._keep_alive(lh)))
        self._say(lh, "pending", f"{lh.instance_id} up at {lh.host.address}")
        gate.settle(None)

    async def _launch(self, lh: LaunchedHost) -> Launched:
        lh.phase = "launching"
        self._say(lh, "launching", f"ec2:RunInstances {lh.host.instance} in {self.aws.region}")
        item = await asyncio.to_thread(self.prov.launch, lh.host.instance)
        lh.instance_id, lh.zone, lh.started = item.instance_id, item.zone, time.monotonic()
        lh.phase = "booting"
        self._say(lh, "launching", f"{item.instance_id} in {item.zone or self.aws.region}: "
                                   "waiting for it to run")
        return item

    async def _reach(self, lh: LaunchedHost, item: Launched) -> None:
        """Its address, its host key pinned (the one it was given at boot), SSH answering."""
        provider = self.provider
        address = provider.address_for(item) if provider.address_for else item.address
        if not address:
            raise AwsError(f"{item.instance_id} has no reachable address (public IP or VPN?)")
        assert item.host_key is not None
        lh.host.address, lh.host.port = address, provider.port
        self._pinned[lh.host.name] = known_hosts_line(address, provider.port, item.host_key)
        # replaced whole: the probes of hosts already up read it while this one comes up
        path = self.log_dir / "known_hosts"
        tmp = path.with_name(f".known_hosts.{os.getpid()}.tmp")
        write_known_hosts(tmp, list(self._pinned.values()))
        os.replace(tmp, path)
        self._say(lh, "launching", f"{item.instance_id} running at {address}: waiting for SSH")
        await wait_ssh_ready(address, provider.port or 22, provider.ssh_timeout)

    async def _fail(self, lh: LaunchedHost, gate: HostGate, exc: Exception) -> None:
        """This host's probes failed with why; its instance, of no use now, terminated at once
        (``close`` terminates every instance again at the end, should this not answer)."""
        lh.error = str(exc) if isinstance(exc, AwsError) else f"{type(exc).__name__}: {exc}"
        lh.phase = "failed"
        reason = f"launch failed: {lh.error}"
        log.info("%s: %s", lh.host.name, reason)
        self._say(lh, "failed", reason)
        gate.settle(reason)
        if lh.instance_id and not self.prov.closed:
            try:
                await asyncio.to_thread(terminate, self.prov.ec2, [lh.instance_id])
            except Exception:  # noqa: BLE001 - close() terminates it with the rest
                return
            lh.phase, lh.ended = "terminated", time.monotonic()

    async def _keep_alive(self, lh: LaunchedHost) -> None:
        """Push the host's dead-man deadline back, from when it is up until ``run`` ends."""
        from ..run.ssh import connect

        cmd = extend_command(self.aws.deadman_minutes, self.provider.deadman_file)
        while True:
            try:
                conn = await connect(lh.host)
                async with conn:
                    await conn.run(cmd, check=False)
            except Exception:  # noqa: BLE001 - the probe reports the host's problems
                pass
            me = asyncio.current_task()
            if me is not None and me.cancelling():  # a cancel the SSH library turned into an error
                return
            await asyncio.sleep(max(30.0, self.aws.deadman_minutes * 60 / 3))

    async def close(self) -> None:
        """Terminate everything launched (idempotent; concurrent callers wait for the one)."""
        if self._closing is None:
            self._closing = asyncio.ensure_future(self._terminate())
        await asyncio.shield(self._closing)

    async def _terminate(self) -> None:
        live = [lh for lh in self.hosts if lh.instance_id and lh.phase != "terminated"]
        for lh in live:
            lh.phase = "terminating"
        try:
            await asyncio.to_thread(self.prov.terminate_all)
        except BaseException:
            for lh in live:  # still billed, maybe: said so, and `probecast cleanup` finds them
                lh.phase = "terminate failed: run probecast cleanup"
            raise
        else:
            now = time.monotonic()
            for lh in live:
                lh.phase, lh.ended = "terminated", now
        finally:
            for lh in self.hosts:
                if not lh.instance_id and lh.phase in ("waiting", "launching"):
                    lh.phase = "not launched"


@dataclass
class AwsProvider:
    """The [aws] section as a source of probe hosts: built once by the app's factory (and the
    CLI), handed in. The seams tests use: ``address_for(launched) -> address`` (an instance's
    stand-in sshd), ``port``, ``deadman_file``, ``ssh_timeout``."""

    aws: AwsSettings
    catalog: Catalog  # the one price lookup's, in the [aws] region
    address_for: Callable[[Launched], str] | None = None
    port: int | None = None
    deadman_file: str = DEADMAN_FILE
    ssh_timeout: float = 300
    ec2_client: Any = None
    ssm_client: Any = None

    def ec2(self) -> Any:
        if self.ec2_client is None:
            from .client import client

            self.ec2_client = client("ec2", self.aws.region, self.aws.endpoint_url)
        return self.ec2_client

    def ssm(self) -> Any:
        if self.ssm_client is None and self.aws.ami_ssm_parameter and not self.aws.ami:
            from .client import client

            self.ssm_client = client("ssm", self.aws.region, self.aws.endpoint_url)
        return self.ssm_client

    def quote(self, types: list[str]) -> LaunchQuote:
        return quote(self.aws, types, self.catalog)

    def launch(self, types: list[str], log_dir: Path, taken: set[str] | None = None
               ) -> AwsLaunch:
        return AwsLaunch(self, types, log_dir, taken)

    def find_leftovers(self) -> list[dict[str, Any]]:
        from .provision import find_leftovers

        return find_leftovers(self.ec2())
