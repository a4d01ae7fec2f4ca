"""Launch instance types, probe them, terminate them: the one flow `probe --headless` and the app
share (``AwsProvider`` -> ``AwsLaunch``).

The launched hosts exist before the instances do (placeholders named by instance type, their
address filled in once they run), so their probes are planned - and shown on the board - from
the start: ``launching``, then the probe's own statuses (copying the project, setup, probing),
and each host's phase with what it has cost so far (elapsed x hourly price) in ``caption``.
Whatever happens, every instance launched is terminated when ``run`` ends (success, failure,
cancel) or when ``close`` is called (the app's quit); the dead-man timer and `probecast cleanup`
cover a probecast that was killed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model.pricing import Catalog
from ..run.board import ACTIVE_STATUSES, Board
from ..run.config import AwsSettings, Host, ProbeSettings
from ..run.plan import PlannedProbe, plan_probes
from ..run.runners import RunnerStatus
from .client import AwsError
from .deadman import DEADMAN_FILE, extend_command
from .provision import Launched, LaunchQuote, Provisioner, quote, wait_ssh_ready

__all__ = ["AwsLaunch", "AwsProvider", "LaunchQuote", "LaunchedHost", "quote"]
from .userdata import known_hosts_line, write_known_hosts


@dataclass
class LaunchedHost:
    """One instance type to launch: its probe host, its phase and what it has cost so far."""

    host: Host  # a placeholder until the instance runs: then its address, key and user
    price_per_hour: float | None
    phase: str = "waiting"  # launching, booting, up, terminating, terminated, failed
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
        self._closing: asyncio.Future[None] | None = None
        self._items: dict[int, Launched] = {}
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
        """Know which probes run on which launched host (for their statuses and captions)."""
        by_name = {h.host.name: h for h in self.hosts}
        for p in plan:
            lh = by_name.get(p.host.name)
            if lh is not None and p.spec.key not in lh.keys:
                lh.keys.append(p.spec.key)
                self._by_key[p.spec.key] = lh

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
        """Launch every host, wait for SSH (its pinned key), run ``probe()`` while the dead-man
        deadline is pushed back, then terminate them all - on every exit path."""
        self.board = board
        self.adopt(plan)
        for p in plan:
            if p.spec.key not in board.entries:
                board.add(p.spec, p.log_path)
        try:
            if self.quote.problem:  # checked before anything launches, as the CLI does
                raise AwsError(self.quote.problem)
            await self._launch_all()
            await self._reach_all()
            extender = asyncio.create_task(self._keep_alive())
            try:
                for lh in self.hosts:
                    self._say(lh, "pending", f"{lh.instance_id} up at {lh.host.address}")
                await probe()
            finally:
                extender.cancel()
        except asyncio.CancelledError:
            self._end_all(board, plan, "stopped", "cancelled")
            raise
        except Exception as exc:
            for lh in self.hosts:
                if lh.phase != "up":
                    lh.phase = "failed"
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

    async def _launch_all(self) -> None:
        async def one(lh: LaunchedHost) -> Launched:
            lh.phase = "launching"
            self._say(lh, "launching", f"ec2:RunInstances {lh.host.instance} in {self.aws.region}")
            item = await asyncio.to_thread(self.prov.launch, lh.host.instance)
            lh.instance_id, lh.zone, lh.started = item.instance_id, item.zone, time.monotonic()
            lh.phase = "booting"
            self._say(lh, "launching", f"{item.instance_id} in {item.zone or self.aws.region}: "
                                       "waiting for it to run")
            return item

        launched = await asyncio.gather(*(one(lh) for lh in self.hosts))
        await self.prov.wait_running(list(launched), 2 if self.aws.endpoint_url else 5)
        self._items = dict(zip((id(lh) for lh in self.hosts), launched))

    async def _reach_all(self) -> None:
        provider = self.provider
        pinned = []
        for lh in self.hosts:
            item = self._items[id(lh)]
            address = provider.address_for(item) if provider.address_for else item.address
            if not address:
                raise AwsError(f"{item.instance_id} has no reachable address (public IP or VPN?)")
            assert item.host_key is not None
            lh.host.address, lh.host.port = address, provider.port
            pinned.append(known_hosts_line(address, provider.port, item.host_key))
            self._say(lh, "launching", f"{item.instance_id} running at {address}: waiting for SSH")
        write_known_hosts(self.log_dir / "known_hosts", pinned)
        await asyncio.gather(*(wait_ssh_ready(lh.host.address, lh.host.port or 22,
                                              provider.ssh_timeout) for lh in self.hosts))
        for lh in self.hosts:
            lh.phase = "up"

    async def _keep_alive(self) -> None:
        from ..run.ssh import connect

        cmd = extend_command(self.aws.deadman_minutes, self.provider.deadman_file)
        while True:
            for lh in self.hosts:
                try:
                    conn = await connect(lh.host)
                    async with conn:
                        await conn.run(cmd, check=False)
                except Exception:  # noqa: BLE001 - the probe reports the host's problems
                    pass
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
