"""AWS as a source of probe hosts: ``AwsProvider`` (the [aws] section, built once by the app's
factory and by `probe --headless`) launches instance types as an ``AwsLaunch`` - the launched
hosts' flow of ``launched.LaunchedHosts`` with EC2 behind it: instances tagged and given their
SSH host key at boot, the dead-man deadline pushed back while each is up, every instance
terminated when the run ends or on ``close`` (the dead-man timer and `probecast cleanup` cover a
probecast that was killed).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ..model.pricing import Catalog
from ..run.config import AwsSettings, Host
from .client import AwsError
from .deadman import DEADMAN_FILE, extend_command
from .gate import HostGate
from .launched import LaunchedHost, LaunchedHosts, unique_names
from .provision import Launched, LaunchQuote, Provisioner, quote, terminate, wait_ssh_ready
from .userdata import known_hosts_line, write_known_hosts

__all__ = ["AwsLaunch", "AwsProvider", "HostGate", "LaunchQuote", "LaunchedHost", "quote"]


class AwsLaunch(LaunchedHosts):
    """One launch: the instance types' hosts, planned up front; ``run`` launches, probes,
    terminates."""

    def __init__(self, provider: AwsProvider, types: list[str], log_dir: Path,
                 taken: set[str] | None = None) -> None:
        self.provider = provider
        self.aws = provider.aws
        self.quote = provider.quote(types)
        self.prov = Provisioner(provider.ec2(), self.aws, ssm=provider.ssm())
        hosts = []
        for t, name in zip(types, unique_names(types, taken)):
            host = Host(name=name, instance=t, kind="ssh", address="", user=self.aws.user,
                        identity_file=self.aws.identity_file, python=self.aws.python,
                        known_hosts=str(log_dir / "known_hosts"), accept_new_host_key=False)
            price, _ = provider.catalog.price(t)
            hosts.append(LaunchedHost(host, price))
        super().__init__(log_dir, hosts)
        self._pinned: dict[str, str] = {}  # known_hosts lines of the hosts reached so far

    @property
    def launched(self) -> list[Launched]:
        return self.prov.launched

    @property
    def session(self) -> str:
        return self.prov.session

    def summary(self) -> list[str]:
        if not self.launched:
            return []
        return [f"terminated {len(self.launched)} instance(s) of session {self.session}"]

    def check(self) -> None:
        if self.quote.problem:  # checked before anything launches, as the CLI does
            raise AwsError(self.quote.problem)

    def none_came_up(self, failed: list[LaunchedHost]) -> Exception:
        return AwsError("no launched instance came up: " + "; ".join(
            f"{lh.host.instance}: {lh.error}" for lh in failed))

    def explain(self, exc: Exception) -> str:
        return str(exc) if isinstance(exc, AwsError) else f"{type(exc).__name__}: {exc}"

    # ---- one host ---------------------------------------------------------------------------

    async def come_up(self, lh: LaunchedHost) -> None:
        item = await self._launch(lh)
        await self.prov.wait_running([item], 2 if self.aws.endpoint_url else 5)
        await self._reach(lh, item)

    async def _launch(self, lh: LaunchedHost) -> Launched:
        lh.phase = "launching"
        self.say(lh, "launching", f"ec2:RunInstances {lh.host.instance} in {self.aws.region}")
        item = await asyncio.to_thread(self.prov.launch, lh.host.instance)
        lh.instance_id, lh.zone, lh.started = item.instance_id, item.zone, time.monotonic()
        lh.phase = "booting"
        self.say(lh, "launching", f"{item.instance_id} in {item.zone or self.aws.region}: "
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
        self.say(lh, "launching", f"{item.instance_id} running at {address}: waiting for SSH")
        await wait_ssh_ready(address, provider.port or 22, provider.ssh_timeout)

    async def release(self, lh: LaunchedHost) -> None:
        """A failed host's instance, of no use now, terminated at once (``close`` terminates
        every instance again at the end, should this not answer)."""
        if lh.instance_id and not self.prov.closed:
            try:
                await asyncio.to_thread(terminate, self.prov.ec2, [lh.instance_id])
            except Exception:  # noqa: BLE001 - close() terminates it with the rest
                return
            lh.phase, lh.ended = "terminated", time.monotonic()

    async def keep_alive(self, lh: LaunchedHost) -> None:
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

    async def tear_down(self) -> None:
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
    kind: ClassVar[str] = "aws"
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
