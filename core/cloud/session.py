"""A provisioned probe session: launch, probe over SSH, keep the dead-man timer back, terminate."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ..model.pricing import Catalog
from ..run.config import AwsSettings, Host
from ..run.plan import plan_probes, run_plan
from ..run.ssh import connect
from .client import AwsError
from .deadman import DEADMAN_FILE, extend_command
from .provision import Provisioner, wait_ssh_ready
from .userdata import known_hosts_line, write_known_hosts

async def run_provisioned(board: Any, settings: Any, aws: AwsSettings, ec2: Any, catalog: Catalog,
                          log_dir: Path, *, ssm: Any = None, address_for: Any = None,
                          port: int | None = None,
                          deadman_file: str = DEADMAN_FILE, ssh_timeout: float = 300) -> Provisioner:
    """Launch one instance per type, probe them over SSH, terminate them whatever happens.

    Each instance's SSH host key is made here and given to it at boot; the session's
    ``known_hosts`` (in the log directory) holds those keys only, and nothing else is trusted -
    no trust on first use. ``address_for(launched) -> address`` overrides the instance's IP
    (tests map instances to local sshd servers). The dead-man deadline is pushed back while
    probes run.
    """
    prov = Provisioner(ec2, aws, ssm=ssm)
    prov.check_budget(catalog)
    try:
        launched = [prov.launch(t) for t in aws.instance_types]
        await prov.wait_running(launched, 2 if aws.endpoint_url else 5)
        hosts, pinned = [], []
        known_hosts = log_dir / "known_hosts"
        for item in launched:
            address = address_for(item) if address_for else item.address
            if not address:
                raise AwsError(f"{item.instance_id} has no reachable address (public IP or VPN?)")
            assert item.host_key is not None
            pinned.append(known_hosts_line(address, port, item.host_key))
            hosts.append(Host(name=f"{item.instance_type}-{item.instance_id[-6:]}",
                              instance=item.instance_type, address=address, port=port,
                              user=aws.user, identity_file=aws.identity_file, python=aws.python,
                              known_hosts=str(known_hosts), accept_new_host_key=False))
        write_known_hosts(known_hosts, pinned)
        await asyncio.gather(*(wait_ssh_ready(h.address, h.port or 22, ssh_timeout)
                               for h in hosts))

        async def keep_alive() -> None:
            cmd = extend_command(aws.deadman_minutes, deadman_file)
            while True:
                for h in hosts:
                    try:
                        conn = await connect(h)
                        async with conn:
                            await conn.run(cmd, check=False)
                    except Exception:  # noqa: BLE001 - the probe reports the host's problems
                        pass
                await asyncio.sleep(max(30.0, aws.deadman_minutes * 60 / 3))

        extender = asyncio.create_task(keep_alive())
        try:
            await run_plan(board, plan_probes(hosts, settings, log_dir),
                           concurrency=settings.concurrency, timeout=settings.timeout)
        finally:
            extender.cancel()
    finally:
        prov.terminate_all()
    return prov
