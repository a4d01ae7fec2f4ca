"""SkyPilot as a source of probe hosts: ``SkyProvider`` (the [skypilot] section) launches one
cluster per candidate as a ``SkyLaunch`` - the launched hosts' flow of ``launched.LaunchedHosts``
with SkyPilot behind it: each cluster probed over SSH as soon as it is up (the adaptive probe
too), and every cluster asked for downed on every exit path (success, failure, Ctrl-C, SIGTERM,
the app's quit); SkyPilot's autodown covers a probecast that was killed.

Calls into the SDK go through ``skypilot`` (``sp.launch_cluster``, ``sp.down_cluster``): the one
seam the tests replace.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from ..model.pricing import InstanceType
from ..run.config import Host
from ..run.sky_settings import SkyPilotSettings
from . import skypilot as sp
from .launched import LaunchedHost, LaunchedHosts, unique_names


@dataclass(frozen=True)
class SkyQuote:
    """What launching these candidates would cost at worst: each on its dearest catalog offer
    until autodown, against ``max_spend``."""

    types: tuple[str, ...]
    where: str
    spot: bool
    worst_usd: float
    unknown: tuple[str, ...]  # candidates without a priced offer: the worst case is unbounded
    minutes: int
    max_spend: float
    notes: tuple[str, ...] = ()  # catalogs that could not be read

    @property
    def problem(self) -> str | None:
        if self.unknown:
            return (f"no price in SkyPilot's catalog for {', '.join(self.unknown)} on "
                    f"{self.where}: the worst case cannot be bounded (check the name, infra or "
                    "clouds)")
        if self.worst_usd > self.max_spend:
            return (f"worst case ${self.worst_usd:.2f} exceeds skypilot.max_spend "
                    f"${self.max_spend:.2f}: raise it or lower skypilot.autodown_minutes")
        return None

    def describe(self) -> str:
        return (f"will launch {len(self.types)} SkyPilot cluster(s) on {self.where}: "
                f"{', '.join(self.types)}{' (spot)' if self.spot else ''}; worst case "
                f"${self.worst_usd:.2f} (each on its dearest catalog offer until autodown, "
                f"{self.minutes} idle min), cap ${self.max_spend:.2f}")

    def teardown(self) -> str:
        return ("they are downed (sky down) when the probes end, on q and on every exit (else "
                f"by SkyPilot's autodown after {self.minutes} idle min)")


@dataclass
class SkyProvider:
    """The [skypilot] section as a source of probe hosts: built once by the app's factory and
    by `probe --headless`, handed in. ``offers``: SkyPilot's catalog per candidate, read on the
    first quote (tests may hand them in)."""

    settings: SkyPilotSettings
    ssh_timeout: float = 300
    offers: dict[str, list[InstanceType]] = field(default_factory=dict)
    unread: set[str] = field(default_factory=set)  # clouds whose catalog could not be read
    kind: ClassVar[str] = "skypilot"

    @property
    def where(self) -> str:
        return self.settings.infra or "any cloud SkyPilot can use"

    def quote(self, names: list[str]) -> SkyQuote:
        """The worst case of launching ``names`` (reads SkyPilot's catalog: blocking)."""
        for acc in names:
            if acc not in self.offers:
                self.offers[acc], failed = sp.catalog_offers(self.settings, acc)
                self.unread.update(failed)
        picked = msgspec.structs.replace(self.settings, accelerators=list(names))
        worst, unknown = sp.worst_case(picked, self.offers)
        notes = (f"SkyPilot's catalog of {', '.join(sorted(self.unread))} could not be read "
                 "(offline? unknown cloud?): not priced from it",) if self.unread else ()
        return SkyQuote(tuple(names), self.where, self.settings.use_spot, worst, tuple(unknown),
                        self.settings.autodown_minutes, self.settings.max_spend, notes)

    def candidates(self) -> list[str]:
        """What the app offers to launch: ``[skypilot] accelerators``."""
        return list(self.settings.accelerators)

    @staticmethod
    def gpus(name: str) -> str:
        model, count = sp.split_accelerators(name)
        return f"{count}x {model}"

    def launch(self, names: list[str], log_dir: Path, taken: set[str] | None = None
               ) -> SkyLaunch:
        return SkyLaunch(self, names, log_dir, taken)

    def find_leftovers(self) -> list[dict[str, Any]]:
        return find_leftovers()


class SkyLaunch(LaunchedHosts):
    """One cluster per candidate, planned up front (named by its accelerators until SkyPilot
    says which instance it chose); ``run`` launches, probes each as it comes up, downs all."""

    def __init__(self, provider: SkyProvider, names: list[str], log_dir: Path,
                 taken: set[str] | None = None) -> None:
        self.provider = provider
        self.settings = provider.settings
        self.session = uuid.uuid4().hex[:6]
        hosts = []
        for acc, name in zip(names, unique_names(names, taken)):
            host = Host(name=name, instance=acc, kind="ssh", address="",
                        python=self.settings.python, known_hosts=str(log_dir / "known_hosts"),
                        accept_new_host_key=True)  # SkyPilot pins no key: trusted on first use
            hosts.append(LaunchedHost(host, None))
        super().__init__(log_dir, hosts)
        self.clusters = {lh.host.name: sp.cluster_name(self.session, i, lh.host.instance)
                         for i, lh in enumerate(self.hosts)}
        self.asked: list[str] = []  # clusters sky.launch was called for
        self.downed: list[str] = []
        self._launches: dict[str, concurrent.futures.Future[Any]] = {}  # the SDK calls
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=max(1, len(self.hosts)), thread_name_prefix="sky-launch")

    def summary(self) -> list[str]:
        if not self.asked:
            return []
        return [f"torn down {len(self.downed)} SkyPilot cluster(s) of session {self.session}"]

    def none_came_up(self, failed: list[LaunchedHost]) -> Exception:
        errors = sorted({lh.error for lh in failed})
        return sp.SkyPilotError(errors[0] if len(errors) == 1 else "; ".join(
            f"{lh.host.name}: {lh.error}" for lh in failed))

    def explain(self, exc: Exception) -> str:
        return str(exc)

    async def come_up(self, lh: LaunchedHost) -> None:
        acc, name = lh.host.instance, self.clusters[lh.host.name]
        lh.phase = "launching"
        self.say(lh, "launching", f"sky launch {acc} on {self.provider.where}")
        task = sp.build_task(self.settings, acc)
        if self._closing is not None:  # torn down already: asked now, it would outlive the session
            raise sp.SkyPilotError(f"{acc}: not launched, the session ended")
        self.asked.append(name)
        self._launches[name] = self._pool.submit(sp.launch_cluster, task, name,
                                                 self.settings.autodown_minutes)
        try:
            handle = await asyncio.wrap_future(self._launches[name])
        except sp.SkyPilotError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise sp.explain(exc, f"sky launch {acc}") from exc
        lh.instance_id, lh.started, lh.phase = name, time.monotonic(), "booting"
        up = host_for(lh.host.name, name, acc, handle, self.settings,
                      self.log_dir / "known_hosts", self.provider.offers.get(acc, []))
        for attr in ("instance", "price_per_hour", "address", "port", "user", "identity_file"):
            setattr(lh.host, attr, getattr(up, attr))  # the planned host, now the cluster
        lh.price_per_hour = up.price_per_hour
        self.say(lh, "launching", f"{name} running at {up.address}: waiting for SSH")
        from .provision import wait_ssh_ready

        await wait_ssh_ready(up.address, up.port or 22, self.provider.ssh_timeout)

    async def release(self, lh: LaunchedHost) -> None:
        name = self.clusters[lh.host.name]
        if name in self.asked:
            try:
                await asyncio.shield(asyncio.to_thread(self._down, [name]))
            except sp.SkyPilotError:
                return  # close() downs it with the rest
            lh.phase, lh.ended = "terminated", time.monotonic()

    async def tear_down(self) -> None:
        """``sky down`` every cluster asked for (the SDK blocks: a thread, shielded so a second
        Ctrl-C cannot skip it)."""
        live = [lh for lh in self.hosts if lh.instance_id and lh.phase != "terminated"]
        for lh in live:
            lh.phase = "terminating"
        try:
            await asyncio.shield(asyncio.to_thread(self._down, list(self.asked)))
        except BaseException:
            for lh in live:
                lh.phase = "down failed: run probecast cleanup --skypilot"
            raise
        else:
            now = time.monotonic()
            for lh in live:
                lh.phase, lh.ended = "terminated", now
        finally:
            self._pool.shutdown(wait=False)
            for lh in self.hosts:
                if not lh.instance_id and lh.phase in ("waiting", "launching"):
                    lh.phase = "not launched"

    def _down(self, names: list[str]) -> None:
        """``sky down`` each (idempotent). A launch still running (cancelled while SkyPilot
        provisions) is waited for first: downed before it ends, the cluster would come up after
        its teardown. A failure to down one is collected, the others still go down."""
        errors = []
        for name in names:
            if name in self.downed:
                continue
            launch = self._launches.get(name)
            if launch is not None:
                concurrent.futures.wait([launch])
            try:
                sp.down_cluster(name)
                self.downed.append(name)
            except Exception as exc:  # noqa: BLE001
                errors.append(f"{name}: {sp._one_line(exc)}")
        if errors:
            raise sp.SkyPilotError("could not tear down " + "; ".join(errors) + " - run `probecast "
                                   "cleanup --skypilot` or `sky down` (autodown also will)")


def host_for(name: str, cluster: str, accelerators: str, handle: Any,
             settings: SkyPilotSettings, known_hosts: Path, offers: list[InstanceType]) -> Host:
    """The probe host ``name`` for a launched cluster: SSH from SkyPilot's config entry (the
    handle's head IP and port where the entry lacks them), priced from SkyPilot's catalog."""
    entry = sp.read_ssh_entry(cluster)
    if entry is not None and entry.proxy_command:
        raise sp.SkyPilotError(f"{cluster}: reached through a ProxyCommand "
                               f"({entry.proxy_command.split()[0]}): probecast's SSH runner "
                               "needs a direct address (Kubernetes and remote API servers are "
                               "not supported yet)")
    address = entry.host if entry else getattr(handle, "head_ip", None)
    port = entry.port if entry else getattr(handle, "head_ssh_port", None)
    if not address:
        raise sp.SkyPilotError(f"{cluster}: SkyPilot gave no SSH address (no "
                               f"{sp.SSH_CONFIG_DIR}/{cluster} and no head IP)")
    res = getattr(handle, "launched_resources", None)
    cloud = str(getattr(res, "cloud", "") or "").lower()
    region = str(getattr(res, "region", "") or "")
    itype = str(getattr(res, "instance_type", "") or "")
    row = sp.launched_row(offers, itype, cloud, region, settings.use_spot) if itype else None
    instance = row.instance if row else (sp.instance_key(itype, cloud, region) if itype
                                         else accelerators)
    return Host(name=name, instance=instance, price_per_hour=row.price_per_hour if row else None,
                address=address, port=port, user=entry.user if entry else None,
                identity_file=entry.identity_file if entry else None, python=settings.python,
                known_hosts=str(known_hosts), accept_new_host_key=True)


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
