"""SkyPilot as a multi-cloud provider (probecast[skypilot]): one cluster per candidate in
``[skypilot] accelerators``, launched through SkyPilot's Python SDK, probed over probecast's own
SSH runner, torn down (``sky down``) on every exit path.

- Launch: ``sky.launch(task, cluster_name=..., down=True, idle_minutes_to_autostop=N)``, the
  0.14 SDK's request, awaited with ``sky.stream_and_get``. Autodown is the dead-man: a cluster
  left with no job and no SSH session for N minutes tears itself down, so a probecast killed
  with ``kill -9`` leaves nothing running for long. ``probecast cleanup --skypilot`` downs
  leftovers now (cluster names start ``probecast-<owner>-``).
- SSH: SkyPilot writes one SSH config entry per cluster (``~/.sky/generated/ssh/<cluster>``,
  included from ``~/.ssh/config``); its HostName, Port, User and IdentityFile become a probecast
  ``Host``. SkyPilot gives no host key to pin, so the key is trusted on first use and recorded
  in the session's own ``known_hosts`` (a changed key is refused after that).
- Prices and GPU facts come from SkyPilot's catalog (``sky.catalog``) for the cloud, region and
  instance type SkyPilot chose, so rankings are priced per cloud and region; the host's
  instance is named ``<instance type>@<cloud>/<region>``.

``launch_cluster`` and ``down_cluster`` are the only calls into the SDK that touch a cloud: the
tests replace ``launch_cluster`` with a loopback sshd "cluster".
"""

from __future__ import annotations

import getpass
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model.pricing import InstanceType
from ..run.sky_settings import SkyPilotSettings

CLUSTER_PREFIX = "probecast"
DEFAULT_CLOUDS = ("aws", "gcp", "azure", "lambda", "runpod")
SSH_CONFIG_DIR = "~/.sky/generated/ssh"


class SkyPilotError(Exception):
    """A failure phrased for the user: one line, what happened and what to do."""


def sdk() -> Any:
    """The SkyPilot SDK, or one line saying how to install it."""
    try:
        import sky
    except ImportError:
        raise SkyPilotError("SkyPilot is not installed: pip install 'probecast[skypilot]'") \
            from None
    return sky


def owner_slug(who: str | None = None) -> str:
    """The user, as a cluster name allows (lower-case letters, digits, -)."""
    try:
        who = who or getpass.getuser()
    except Exception:  # noqa: BLE001
        who = "unknown"
    slug = re.sub(r"[^a-z0-9]+", "-", who.lower()).strip("-")
    return (slug or "unknown")[:16]


def cluster_prefix(who: str | None = None) -> str:
    return f"{CLUSTER_PREFIX}-{owner_slug(who)}-"


def cluster_name(session: str, index: int, accelerators: str, who: str | None = None) -> str:
    acc = re.sub(r"[^a-z0-9]+", "", accelerators.lower())[:10]
    return f"{cluster_prefix(who)}{session}-{index}-{acc}"


def split_accelerators(spec: str) -> tuple[str, int]:
    name, _, count = spec.partition(":")
    return name, int(count) if count else 1


def _infra_parts(infra: str | None) -> tuple[str | None, str | None]:
    if not infra:
        return None, None
    parts = infra.split("/")
    cloud = None if parts[0] in ("*", "") else parts[0].lower()
    region = parts[1] if len(parts) > 1 and parts[1] != "*" else None
    return cloud, region


def build_task(settings: SkyPilotSettings, accelerators: str) -> Any:
    """A real ``sky.Task`` asking for one node with these accelerators. It runs nothing:
    probecast probes the node over SSH itself."""
    sky = sdk()
    kwargs: dict[str, Any] = {"accelerators": accelerators, "use_spot": settings.use_spot}
    if settings.infra:
        kwargs["infra"] = settings.infra
    if settings.disk_size:
        kwargs["disk_size"] = settings.disk_size
    if settings.image_id:
        kwargs["image_id"] = settings.image_id
    try:
        resources = sky.Resources(**kwargs)
    except Exception as exc:  # noqa: BLE001 - SkyPilot says what is wrong
        raise SkyPilotError(f"skypilot: {accelerators} ({settings.infra or 'any cloud'}): "
                            f"{_one_line(exc)}") from exc
    return sky.Task(name="probecast-host").set_resources(resources)


# ---- prices and GPU facts from SkyPilot's catalog -------------------------------------------


def instance_key(instance_type: str, cloud: str, region: str) -> str:
    return f"{instance_type}@{cloud.lower()}/{region}"


def catalog_offers(settings: SkyPilotSettings, accelerators: str) -> tuple[list[InstanceType], list[str]]:
    """Every offering of these accelerators in SkyPilot's catalog (restricted to the infra's
    cloud and region), as catalog rows; and the clouds whose catalog could not be read."""
    sky = sdk()
    from sky import catalog as sky_catalog

    name, count = split_accelerators(accelerators)
    cloud, region = _infra_parts(settings.infra)
    clouds = [cloud] if cloud else list(settings.clouds or DEFAULT_CLOUDS)
    rows: list[InstanceType] = []
    failed: list[str] = []
    for c in clouds:
        try:
            found = sky_catalog.list_accelerators(
                gpus_only=True, name_filter=f"^{re.escape(name)}$", quantity_filter=count,
                clouds=c, case_sensitive=False, all_regions=True,
                region_filter=f"^{re.escape(region)}$" if region else None)
        except Exception:  # noqa: BLE001 - a catalog we cannot read (offline, unknown cloud)
            failed.append(c)
            continue
        for infos in found.values():
            for info in infos:
                rows.append(_row(info, settings.use_spot))
    del sky
    return rows, failed


def _num(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def _row(info: Any, spot: bool) -> InstanceType:
    price = _num(info.spot_price if spot else info.price)
    vcpus = _num(info.cpu_count)
    return InstanceType(
        instance=instance_key(info.instance_type, str(info.cloud), info.region),
        provider=str(info.cloud).lower(), service="skypilot", region=info.region,
        gpu_model=info.accelerator_name, gpu_count=int(info.accelerator_count),
        gpu_memory_gb=_num(info.device_memory), vcpus=int(vcpus) if vcpus else None,
        memory_gb=_num(info.memory), price_per_hour=price,
        source="SkyPilot catalog" + (" (spot)" if spot else ""), billing="per-second-60")


def launched_row(offers: list[InstanceType], instance_type: str, cloud: str, region: str,
                 spot: bool) -> InstanceType | None:
    """The catalog row of what SkyPilot launched (its cloud, region and instance type); asks
    SkyPilot's catalog for the price when the offers listed before the launch lack it."""
    key = instance_key(instance_type, cloud, region)
    for r in offers:
        if r.instance == key:
            return r
    try:
        from sky import catalog as sky_catalog

        price = sky_catalog.get_hourly_cost(instance_type, spot, region, None, clouds=cloud.lower())
    except Exception:  # noqa: BLE001
        return None
    return InstanceType(instance=key, provider=cloud.lower(), service="skypilot", region=region,
                        price_per_hour=float(price), source="SkyPilot catalog")


def worst_case(settings: SkyPilotSettings, offers: dict[str, list[InstanceType]]
               ) -> tuple[float, list[str]]:
    """Each candidate on its dearest matching offer until autodown; candidates with no priced
    offer are listed (the launch is refused: the worst case cannot be bounded)."""
    total, unknown = 0.0, []
    for acc in settings.accelerators:
        prices = [r.price_per_hour for r in offers.get(acc, []) if r.price_per_hour is not None]
        if not prices:
            unknown.append(acc)
            continue
        total += max(prices) * settings.autodown_minutes / 60
    return total, unknown


# ---- the SSH config entry SkyPilot writes per cluster ----------------------------------------


@dataclass
class SshEntry:
    host: str
    port: int = 22
    user: str | None = None
    identity_file: str | None = None
    proxy_command: str | None = None


def read_ssh_entry(cluster: str, directory: str = SSH_CONFIG_DIR) -> SshEntry | None:
    """HostName, Port, User, IdentityFile (and ProxyCommand) of the cluster's head node, from
    the file SkyPilot writes for it; None when there is none."""
    path = Path(os.path.expanduser(directory)) / cluster
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    current: str | None = None
    found: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, _, value = _split_option(line)
        key = key.lower()
        if key == "host":
            current = value
            continue
        if current == cluster and key not in found:
            found[key] = value
    if "hostname" not in found:
        return None
    return SshEntry(host=found["hostname"], port=int(found.get("port", 22)),
                    user=found.get("user"), identity_file=found.get("identityfile"),
                    proxy_command=found.get("proxycommand"))


def _split_option(line: str) -> tuple[str, str, str]:
    m = re.match(r"^(\S+?)(?:\s*=\s*|\s+)(.*)$", line)
    if not m:
        return line, "", ""
    return m.group(1), "", m.group(2).strip().strip('"')


# ---- the SDK calls that touch a cloud --------------------------------------------------------


def launch_cluster(task: Any, name: str, autodown_minutes: int) -> Any:
    """The seam: launch one cluster and return SkyPilot's resource handle (blocking).
    ``down=True`` with an idle time: autodown, the dead-man."""
    sky = sdk()
    request = sky.launch(task, cluster_name=name, down=True,
                         idle_minutes_to_autostop=autodown_minutes)
    _job_id, handle = sky.stream_and_get(request)
    return handle


def down_cluster(name: str) -> None:
    """Tear a cluster down (blocking); one that does not exist (never got that far) is fine."""
    sky = sdk()
    from sky import exceptions as sky_exceptions

    try:
        sky.stream_and_get(sky.down(name))
    except sky_exceptions.ClusterDoesNotExist:
        pass


def explain(exc: BaseException, action: str) -> SkyPilotError:
    """SkyPilot's exceptions as one line for the user."""
    try:
        from sky import exceptions as e
    except ImportError:  # pragma: no cover
        return SkyPilotError(f"{action}: {_one_line(exc)}")
    if isinstance(exc, e.NoCloudAccessError):
        return SkyPilotError("no cloud enabled for SkyPilot: run `sky check` (and set up a "
                             "cloud's credentials) - nothing was launched")
    if isinstance(exc, e.ResourcesUnavailableError):
        return SkyPilotError(f"{action}: no cloud could provide it now: {_one_line(exc)} "
                             "(another infra, accelerator or use_spot may)")
    if isinstance(exc, e.ApiServerConnectionError):
        return SkyPilotError(f"{action}: cannot reach SkyPilot's API server: {_one_line(exc)} "
                             "(sky api start / sky api info)")
    return SkyPilotError(f"{action}: {type(exc).__name__}: {_one_line(exc)}")


def _one_line(exc: BaseException) -> str:
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).strip()
    return text.splitlines()[0] if text else type(exc).__name__
