"""A SkyPilot probe session: one cluster per candidate, probed over SSH, every one downed.

Calls into the SDK go through ``skypilot`` (``sp.launch_cluster``, ``sp.down_cluster``): the one
seam the tests replace.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model.pricing import InstanceType
from ..run.config import Host
from ..run.sky_settings import SkyPilotSettings
from . import skypilot as sp

@dataclass
class Cluster:
    name: str
    accelerators: str
    host: Host | None = None
    row: InstanceType | None = None
    error: str = ""
    launch: concurrent.futures.Future[Any] | None = None  # the SDK call, in its own thread


@dataclass
class SkySession:
    """The clusters one probe session launches; every one is downed on every exit path."""

    settings: SkyPilotSettings
    session: str = field(default_factory=lambda: uuid.uuid4().hex[:6])
    clusters: list[Cluster] = field(default_factory=list)
    downed: list[str] = field(default_factory=list)

    def names(self) -> list[str]:
        return [c.name for c in self.clusters]

    def down_all(self) -> list[str]:
        """``sky down`` every cluster this session asked for (launched or not); idempotent.
        A failure to down one is collected, the others still go down. A launch still running
        (cancelled while SkyPilot provisions) is waited for first: downed before it ends, the
        cluster would come up after its teardown."""
        errors = []
        for c in self.clusters:
            if c.name in self.downed:
                continue
            if c.launch is not None:
                concurrent.futures.wait([c.launch])
            try:
                sp.down_cluster(c.name)
                self.downed.append(c.name)
            except Exception as exc:  # noqa: BLE001
                errors.append(f"{c.name}: {sp._one_line(exc)}")
        if errors:
            raise sp.SkyPilotError("could not tear down " + "; ".join(errors) + " - run `probecast "
                                "cleanup --skypilot` or `sky down` (autodown also will)")
        return list(self.downed)


def host_for(cluster: Cluster, handle: Any, settings: SkyPilotSettings, known_hosts: Path,
             offers: list[InstanceType]) -> Host:
    """The probecast Host for a launched cluster: SSH from SkyPilot's config entry (the
    handle's head IP and port where the entry lacks them), priced from SkyPilot's catalog."""
    entry = sp.read_ssh_entry(cluster.name)
    if entry is not None and entry.proxy_command:
        raise sp.SkyPilotError(f"{cluster.name}: reached through a ProxyCommand "
                            f"({entry.proxy_command.split()[0]}): probecast's SSH runner "
                            "needs a direct address (Kubernetes and remote API servers are "
                            "not supported yet)")
    address = entry.host if entry else getattr(handle, "head_ip", None)
    port = entry.port if entry else getattr(handle, "head_ssh_port", None)
    if not address:
        raise sp.SkyPilotError(f"{cluster.name}: SkyPilot gave no SSH address (no "
                            f"{sp.SSH_CONFIG_DIR}/{cluster.name} and no head IP)")
    res = getattr(handle, "launched_resources", None)
    cloud = str(getattr(res, "cloud", "") or "").lower()
    region = str(getattr(res, "region", "") or "")
    itype = str(getattr(res, "instance_type", "") or "")
    row = sp.launched_row(offers, itype, cloud, region, settings.use_spot) if itype else None
    cluster.row = row
    instance = row.instance if row else (sp.instance_key(itype, cloud, region) if itype
                                          else cluster.accelerators)
    return Host(name=cluster.name[len(sp.cluster_prefix()):][:64] or cluster.name[:64],
                instance=instance, price_per_hour=row.price_per_hour if row else None,
                address=address, port=port, user=entry.user if entry else None,
                identity_file=entry.identity_file if entry else None, python=settings.python,
                known_hosts=str(known_hosts), accept_new_host_key=True)


async def run_skypilot(board: Any, probe: Any, settings: SkyPilotSettings, log_dir: Path,
                       offers: dict[str, list[InstanceType]] | None = None,
                       session: SkySession | None = None, ssh_timeout: float = 300,
                       drive: Callable[[list[Any]], Awaitable[None]] | None = None) -> SkySession:
    """Launch one cluster per candidate (in threads: the SDK blocks), probe those that came up
    over SSH, and ``sky down`` every one of them whatever happens (success, failure, Ctrl-C,
    SIGTERM: the caller cancels this task). A candidate that fails to launch fails alone; if
    none comes up, its error is raised. ``drive(plan)`` probes the clusters' plan (the run
    Session's ``run``: the adaptive probe too); by default the plan is only run."""
    from ..run.plan import plan_probes, run_plan
    from .provision import wait_ssh_ready

    sess = session or SkySession(settings)
    offers = offers or {}
    known_hosts = log_dir / "known_hosts"
    log_dir.mkdir(parents=True, exist_ok=True)
    for i, acc in enumerate(settings.accelerators):
        sess.clusters.append(Cluster(sp.cluster_name(sess.session, i, acc), acc))
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(sess.clusters)),
                                                 thread_name_prefix="sky-launch")
    try:
        async def up(c: Cluster) -> None:
            task = sp.build_task(settings, c.accelerators)
            try:
                c.launch = pool.submit(sp.launch_cluster, task, c.name, settings.autodown_minutes)
                handle = await asyncio.wrap_future(c.launch)
            except sp.SkyPilotError as exc:
                c.error = str(exc)
                return
            except Exception as exc:  # noqa: BLE001
                c.error = str(sp.explain(exc, f"sky launch {c.accelerators}"))
                return
            try:
                c.host = host_for(c, handle, settings, known_hosts, offers.get(c.accelerators, []))
                await wait_ssh_ready(c.host.address, c.host.port or 22, ssh_timeout)
            except Exception as exc:  # noqa: BLE001
                c.error = str(exc)
                c.host = None

        await asyncio.gather(*(up(c) for c in sess.clusters))
        hosts = [c.host for c in sess.clusters if c.host is not None]
        if not hosts:
            errors = sorted({c.error for c in sess.clusters if c.error})
            raise sp.SkyPilotError(errors[0] if len(errors) == 1 else "; ".join(errors))
        plan = plan_probes(hosts, probe, log_dir)
        if drive is not None:
            await drive(plan)
        else:
            await run_plan(board, plan, concurrency=probe.concurrency, timeout=probe.timeout)
    finally:
        # the SDK blocks: a thread, shielded so a second Ctrl-C cannot skip the teardown
        await asyncio.shield(asyncio.to_thread(sess.down_all))
        pool.shutdown(wait=False)
    return sess


def find_leftovers(who: str | None = None) -> list[dict[str, Any]]:
    """probecast's clusters of this owner that SkyPilot knows (``sky status``)."""
    sky = sp.sdk()
    try:
        records = sky.get(sky.status())
    except Exception as exc:  # noqa: BLE001
        raise sp.explain(exc, "sky status") from exc
    prefix = sp.cluster_prefix(who)
    out = []
    for r in records:
        name = r["name"] if isinstance(r, dict) else getattr(r, "name", "")
        if not str(name).startswith(prefix):
            continue
        get = r.get if isinstance(r, dict) else (lambda k, d=None, r=r: getattr(r, k, d))
        out.append({"name": name, "status": str(get("status", "")),
                    "launched": str(get("launched_at", ""))})
    return out


def down(names: list[str]) -> None:
    for name in names:
        try:
            sp.down_cluster(name)
        except Exception as exc:  # noqa: BLE001
            raise sp.explain(exc, f"sky down {name}") from exc
