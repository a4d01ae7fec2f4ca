"""AWS: live on-demand and spot prices, GPU facts, and probe hosts launched with guaranteed teardown.

Credentials and endpoints come from boto3's standard chain (environment, profiles, SSO;
AWS_ENDPOINT_URL is honoured). Nothing here runs unless asked: without credentials the app uses
the embedded catalog.

Teardown, in layers: every instance is tagged (probecast:session, probecast:owner), launched with
InstanceInitiatedShutdownBehavior=terminate and a dead-man timer in its user data (it shuts itself
down - and so terminates - at a deadline probecast must keep pushing back); probecast terminates
it when its probes end, on success, failure, cancel or quit; ``probecast cleanup`` finds leftovers.
"""

from __future__ import annotations

import datetime as dt
import getpass
import json
import os
import socket
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model.pricing import Catalog, InstanceType

GPU_FAMILIES = ("p2", "p3", "p3dn", "p4d", "p4de", "p5", "p5e", "g3", "g4dn", "g4ad", "g5", "g5g",
                "g6", "g6e", "gr6", "trn1", "inf2")
TAG_SESSION = "probecast:session"
TAG_OWNER = "probecast:owner"
REGION_NAMES = {  # Pricing API filters by location name as well as region code in older data
    "us-east-1": "US East (N. Virginia)", "us-east-2": "US East (Ohio)",
    "us-west-2": "US West (Oregon)", "eu-west-1": "EU (Ireland)", "eu-central-1": "EU (Frankfurt)",
}


class AwsError(Exception):
    """A failure phrased for the user: what happened and what to do."""


def retry_config() -> Any:
    from botocore.config import Config as BotoConfig

    # throttling and transient errors: exponential backoff with jitter, adaptive client rate
    return BotoConfig(retries={"max_attempts": 8, "mode": "adaptive"}, connect_timeout=10,
                      read_timeout=30)


def client(service: str, region: str | None = None, endpoint_url: str | None = None) -> Any:
    import boto3

    kwargs: dict[str, Any] = {"config": retry_config()}
    if region:
        kwargs["region_name"] = region
    if endpoint_url:
        kwargs["endpoint_url"] = endpoint_url
    # A fresh session each time: the credential chain is read now, not cached from earlier.
    return boto3.session.Session().client(service, **kwargs)


def explain(exc: BaseException, action: str) -> AwsError:
    """Turn boto errors into one actionable sentence."""
    from botocore.exceptions import ClientError, EndpointConnectionError, NoCredentialsError

    if isinstance(exc, NoCredentialsError):
        return AwsError("no AWS credentials: set AWS_PROFILE (aws configure / aws sso login) or "
                        "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY; without them probecast uses its "
                        "embedded price catalog")
    if isinstance(exc, EndpointConnectionError):
        return AwsError(f"cannot reach AWS for {action}: {exc}")
    if isinstance(exc, ClientError):
        code = exc.response.get("Error", {}).get("Code", "")
        msg = exc.response.get("Error", {}).get("Message", "")
        if code in ("UnauthorizedOperation", "AccessDenied", "AccessDeniedException"):
            return AwsError(f"not allowed to call {action}: grant the IAM action {action} "
                            f"to this identity ({msg})")
        if code in ("Throttling", "ThrottlingException", "RequestLimitExceeded"):
            return AwsError(f"AWS throttled {action} even after retries; try again in a minute")
        if code in ("InsufficientInstanceCapacity", "InstanceLimitExceeded", "Unsupported"):
            return AwsError(f"{action}: {code}: {msg}")
        return AwsError(f"{action} failed: {code}: {msg}")
    return AwsError(f"{action} failed: {type(exc).__name__}: {exc}")


# ---- prices ---------------------------------------------------------------------------------


def _gib(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return float(text.replace(",", "").split()[0])
    except (ValueError, IndexError):
        return None


def parse_price_list(items: Iterable[str]) -> list[InstanceType]:
    """Parse Pricing API ``PriceList`` entries (JSON strings) into catalog rows."""
    out: dict[str, InstanceType] = {}
    for raw in items:
        doc = json.loads(raw)
        attrs = doc.get("product", {}).get("attributes", {})
        name = attrs.get("instanceType")
        if not name:
            continue
        price = None
        for term in doc.get("terms", {}).get("OnDemand", {}).values():
            for dim in term.get("priceDimensions", {}).values():
                if dim.get("unit") in ("Hrs", "Hours"):
                    try:
                        price = float(dim["pricePerUnit"]["USD"])
                    except (KeyError, ValueError):
                        continue
        if price is None or price <= 0:
            continue
        gpus = attrs.get("gpu")
        out[name] = InstanceType(
            instance=name, provider="aws", service="ec2",
            region=attrs.get("regionCode", ""),
            gpu_model="", gpu_count=int(gpus) if gpus and gpus.isdigit() else 0,
            gpu_memory_gb=_gib(attrs.get("gpuMemory")),
            vcpus=int(attrs["vcpu"]) if attrs.get("vcpu", "").isdigit() else None,
            memory_gb=_gib(attrs.get("memory")), price_per_hour=price,
            price_date=dt.date.today().isoformat(), source="AWS Pricing API", billing="per-second-60",
        )
    return sorted(out.values(), key=lambda i: i.instance)


def fetch_ondemand_prices(pricing: Any, region: str, families: Iterable[str] = ()) -> list[InstanceType]:
    """On-demand Linux prices of GPU instance types, filtered server-side, all pages."""
    filters = [
        {"Type": "TERM_MATCH", "Field": "regionCode", "Value": region},
        {"Type": "TERM_MATCH", "Field": "operatingSystem", "Value": "Linux"},
        {"Type": "TERM_MATCH", "Field": "tenancy", "Value": "Shared"},
        {"Type": "TERM_MATCH", "Field": "preInstalledSw", "Value": "NA"},
        {"Type": "TERM_MATCH", "Field": "capacitystatus", "Value": "Used"},
        {"Type": "TERM_MATCH", "Field": "instanceFamily", "Value": "GPU instance"},
    ]
    items: list[str] = []
    try:
        for page in pricing.get_paginator("get_products").paginate(
                ServiceCode="AmazonEC2", Filters=filters, FormatVersion="aws_v1"):
            items.extend(page.get("PriceList", []))
    except Exception as exc:  # noqa: BLE001
        raise explain(exc, "pricing:GetProducts") from exc
    rows = parse_price_list(items)
    fams = tuple(families)
    if fams:
        rows = [r for r in rows if r.instance.split(".")[0] in fams]
    return rows


def latest_spot_prices(ec2: Any, instance_types: list[str]) -> dict[str, dict[str, float]]:
    """{type: {availability zone: latest Linux spot $/h}}."""
    out: dict[str, dict[str, tuple[dt.datetime, float]]] = {}
    try:
        pages = ec2.get_paginator("describe_spot_price_history").paginate(
            InstanceTypes=instance_types, ProductDescriptions=["Linux/UNIX"],
            StartTime=dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=6))
        for page in pages:
            for p in page.get("SpotPriceHistory", []):
                az, ts, price = p["AvailabilityZone"], p["Timestamp"], float(p["SpotPrice"])
                cur = out.setdefault(p["InstanceType"], {}).get(az)
                if cur is None or ts > cur[0]:
                    out[p["InstanceType"]][az] = (ts, price)
    except Exception as exc:  # noqa: BLE001
        raise explain(exc, "ec2:DescribeSpotPriceHistory") from exc
    return {t: {az: v[1] for az, v in azs.items()} for t, azs in out.items()}


def gpu_facts(ec2: Any, instance_types: list[str] | None = None) -> list[InstanceType]:
    """GPU model/count/memory, vCPUs and memory from describe_instance_types (all pages)."""
    kwargs: dict[str, Any] = {}
    if instance_types:
        kwargs["InstanceTypes"] = instance_types
    else:
        kwargs["Filters"] = [{"Name": "instance-type", "Values": [f"{f}.*" for f in GPU_FAMILIES]}]
    out = []
    try:
        for page in ec2.get_paginator("describe_instance_types").paginate(**kwargs):
            for t in page.get("InstanceTypes", []):
                gpus = t.get("GpuInfo", {}).get("Gpus", [])
                if not gpus:
                    continue
                g = gpus[0]
                out.append(InstanceType(
                    instance=t["InstanceType"], provider="aws", service="ec2",
                    gpu_model=g.get("Name", ""), gpu_count=sum(x.get("Count", 0) for x in gpus),
                    gpu_memory_gb=g.get("MemoryInfo", {}).get("SizeInMiB", 0) / 1024 or None,
                    vcpus=t.get("VCpuInfo", {}).get("DefaultVCpus"),
                    memory_gb=t.get("MemoryInfo", {}).get("SizeInMiB", 0) / 1024 or None,
                    source="ec2:DescribeInstanceTypes"))
    except Exception as exc:  # noqa: BLE001
        raise explain(exc, "ec2:DescribeInstanceTypes") from exc
    return sorted(out, key=lambda i: i.instance)


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "probecast"


def save_price_cache(rows: list[InstanceType], region: str, spot: dict[str, float] | None = None) -> Path:
    path = cache_dir() / f"prices-{region}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"catalog_date": dt.date.today().isoformat(), "region": region,
           "instances": [{k: getattr(r, k) for k in r.__dataclass_fields__} for r in rows],
           "spot": spot or {}}
    path.write_text(json.dumps(doc, indent=1))
    return path


def cached_spot_prices(region: str) -> dict[str, float]:
    """Spot prices saved by the last `prices --refresh --spot` for the region (else empty)."""
    try:
        spot = json.loads((cache_dir() / f"prices-{region}.json").read_text()).get("spot", {})
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in spot.items()}


def current_catalog(region: str = "us-east-1", max_age_days: int = 30) -> Catalog:
    """The embedded catalog, updated by a fresh price cache for the region when there is one.

    ``Catalog.source`` says which was used, with its date."""
    embedded = Catalog.embedded()
    path = cache_dir() / f"prices-{region}.json"
    try:
        doc = json.loads(path.read_text())
        taken = dt.date.fromisoformat(doc["catalog_date"])
    except (OSError, ValueError, KeyError):
        return embedded
    if (dt.date.today() - taken).days > max_age_days:
        embedded.source = f"embedded (cache {path} from {taken} is older than {max_age_days} days)"
        return embedded
    cached = Catalog.from_document(doc, source=f"AWS Pricing API cache {path}")
    rows = {i.instance: i for i in embedded}
    for i in cached:
        base = rows.get(i.instance)
        if base is not None:  # keep the embedded GPU facts where the price list lacks them
            from dataclasses import replace

            i = replace(i, gpu_model=i.gpu_model or base.gpu_model,
                        gpu_memory_gb=i.gpu_memory_gb or base.gpu_memory_gb)
        rows[i.instance] = i
    return Catalog(list(rows.values()), date=str(taken), source=cached.source)


# ---- provisioning ---------------------------------------------------------------------------


DEADMAN_FILE = "/var/run/probecast-deadline"


def deadman_user_data(minutes: int) -> str:
    """A shell script for cloud-init: shut down (= terminate) at a deadline probecast extends.

    probecast pushes the deadline back over SSH (``extend_command``); if probecast dies, nobody
    does, and the instance shuts itself down - with InstanceInitiatedShutdownBehavior=terminate,
    it is terminated.
    """
    return f"""#!/bin/bash
echo $(( $(date +%s) + {int(minutes) * 60} )) > {DEADMAN_FILE}
chmod 666 {DEADMAN_FILE}
nohup bash -c 'while true; do
  d=$(cat {DEADMAN_FILE} 2>/dev/null || echo 0)
  if [ "$(date +%s)" -ge "$d" ]; then shutdown -h now; fi
  sleep 20
done' >/dev/null 2>&1 &
"""


def extend_command(minutes: int) -> str:
    return f"echo $(( $(date +%s) + {int(minutes) * 60} )) > {DEADMAN_FILE}"


@dataclass
class AwsSettings:
    region: str = "us-east-1"
    ami: str | None = None
    ami_ssm_parameter: str | None = None  # e.g. a Deep Learning AMI's public SSM parameter
    key_name: str | None = None
    subnet_ids: list[str] = field(default_factory=list)
    security_group_ids: list[str] = field(default_factory=list)
    instance_types: list[str] = field(default_factory=list)
    max_spend: float = 5.0  # USD, worst case over the whole session
    deadman_minutes: int = 45
    user: str = "ubuntu"
    identity_file: str | None = None
    python: str = "python3"
    spot: bool = False
    endpoint_url: str | None = None


@dataclass
class Launched:
    instance_id: str
    instance_type: str
    address: str = ""
    zone: str = ""


def owner() -> str:
    try:
        return f"{getpass.getuser()}@{socket.gethostname()}"
    except Exception:  # noqa: BLE001
        return "unknown"


def worst_case_cost(types: list[str], catalog: Catalog, minutes: int) -> tuple[float, list[str]]:
    """Every instance running until its dead-man deadline; unknown prices are listed."""
    total, unknown = 0.0, []
    for t in types:
        price, _ = catalog.price(t)
        if price is None:
            unknown.append(t)
        else:
            total += price * minutes / 60
    return total, unknown


class Provisioner:
    """Launches tagged probe hosts and guarantees their termination."""

    def __init__(self, ec2: Any, settings: AwsSettings, session: str | None = None,
                 ssm: Any = None) -> None:
        self.ec2 = ec2
        self.ssm = ssm
        self.settings = settings
        self.session = session or f"pc-{uuid.uuid4().hex[:10]}"
        self.owner = owner()
        self.launched: list[Launched] = []

    def check_budget(self, catalog: Catalog) -> float:
        s = self.settings
        total, unknown = worst_case_cost(s.instance_types, catalog, s.deadman_minutes)
        if unknown:
            raise AwsError(f"no price for {', '.join(unknown)}: add them under [prices] so the "
                           "worst case can be checked against max_spend")
        if total > s.max_spend:
            raise AwsError(f"worst case ${total:.2f} ({len(s.instance_types)} instance(s) for "
                           f"{s.deadman_minutes} min) exceeds max_spend ${s.max_spend:.2f}: raise "
                           "aws.max_spend or lower aws.deadman_minutes")
        return total

    def image_id(self) -> str:
        s = self.settings
        if s.ami:
            return s.ami
        if s.ami_ssm_parameter and self.ssm is not None:
            try:
                return str(self.ssm.get_parameter(Name=s.ami_ssm_parameter)["Parameter"]["Value"])
            except Exception as exc:  # noqa: BLE001
                raise explain(exc, "ssm:GetParameter") from exc
        raise AwsError("set aws.ami or aws.ami_ssm_parameter (a Deep Learning AMI)")

    def launch(self, instance_type: str) -> Launched:
        """Launch one instance, trying each subnet (AZ) in turn on capacity errors."""
        from botocore.exceptions import ClientError

        s = self.settings
        subnets: list[str | None] = list(s.subnet_ids) or [None]
        last: Exception | None = None
        for subnet in subnets:
            kwargs: dict[str, Any] = {
                "ImageId": self.image_id(), "InstanceType": instance_type, "MinCount": 1,
                "MaxCount": 1, "InstanceInitiatedShutdownBehavior": "terminate",
                "UserData": deadman_user_data(s.deadman_minutes),
                "TagSpecifications": [{"ResourceType": "instance", "Tags": [
                    {"Key": TAG_SESSION, "Value": self.session},
                    {"Key": TAG_OWNER, "Value": self.owner},
                    {"Key": "Name", "Value": f"probecast {instance_type}"}]}],
            }
            if s.key_name:
                kwargs["KeyName"] = s.key_name
            if subnet:
                kwargs["SubnetId"] = subnet
            if s.security_group_ids:
                kwargs["SecurityGroupIds"] = s.security_group_ids
            if s.spot:
                kwargs["InstanceMarketOptions"] = {"MarketType": "spot", "SpotOptions": {
                    "SpotInstanceType": "one-time", "InstanceInterruptionBehavior": "terminate"}}
            try:
                resp = self.ec2.run_instances(**kwargs)
            except ClientError as exc:
                code = exc.response.get("Error", {}).get("Code", "")
                if code in ("InsufficientInstanceCapacity", "Unsupported") and subnet != subnets[-1]:
                    last = exc
                    continue  # next subnet = next availability zone
                raise explain(exc, "ec2:RunInstances") from exc
            inst = resp["Instances"][0]
            item = Launched(inst["InstanceId"], instance_type,
                            zone=inst.get("Placement", {}).get("AvailabilityZone", ""))
            self.launched.append(item)
            return item
        raise explain(last or AwsError("no subnet"), "ec2:RunInstances")

    def wait_running(self, items: list[Launched], delay: float = 5, max_attempts: int = 60) -> None:
        ids = [i.instance_id for i in items]
        try:
            self.ec2.get_waiter("instance_running").wait(
                InstanceIds=ids, WaiterConfig={"Delay": delay, "MaxAttempts": max_attempts})
            resp = self.ec2.describe_instances(InstanceIds=ids)
        except Exception as exc:  # noqa: BLE001
            raise explain(exc, "ec2:DescribeInstances") from exc
        by_id = {i.instance_id: i for i in items}
        for r in resp["Reservations"]:
            for inst in r["Instances"]:
                it = by_id[inst["InstanceId"]]
                it.address = inst.get("PublicIpAddress") or inst.get("PrivateIpAddress") or ""

    def terminate_all(self) -> list[str]:
        """Terminate everything this session launched (idempotent)."""
        ids = [i.instance_id for i in self.launched]
        if ids:
            try:
                self.ec2.terminate_instances(InstanceIds=ids)
            except Exception as exc:  # noqa: BLE001
                raise explain(exc, "ec2:TerminateInstances") from exc
        return ids

    def __enter__(self) -> Provisioner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.terminate_all()


def wait_ssh_ready(address: str, port: int = 22, timeout: float = 300, interval: float = 2) -> None:
    """Until the SSH port answers with an SSH banner."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((address, port), timeout=5) as sock:
                sock.settimeout(5)
                if sock.recv(64).startswith(b"SSH-"):
                    return
        except OSError:
            pass
        time.sleep(interval)
    raise AwsError(f"{address}:{port} did not offer SSH within {timeout:g}s")


def find_leftovers(ec2: Any, who: str | None = None) -> list[dict[str, Any]]:
    """Instances tagged by probecast for this owner (any session) that are not terminated."""
    filters = [{"Name": f"tag:{TAG_OWNER}", "Values": [who or owner()]},
               {"Name": "instance-state-name", "Values": ["pending", "running", "stopping", "stopped"]}]
    out = []
    try:
        for page in ec2.get_paginator("describe_instances").paginate(Filters=filters):
            for r in page["Reservations"]:
                for inst in r["Instances"]:
                    tags = {t["Key"]: t["Value"] for t in inst.get("Tags", [])}
                    out.append({"id": inst["InstanceId"], "type": inst["InstanceType"],
                                "state": inst["State"]["Name"], "session": tags.get(TAG_SESSION, ""),
                                "launched": str(inst.get("LaunchTime", ""))})
    except Exception as exc:  # noqa: BLE001
        raise explain(exc, "ec2:DescribeInstances") from exc
    return out


def terminate(ec2: Any, ids: list[str]) -> None:
    if not ids:
        return
    try:
        ec2.terminate_instances(InstanceIds=ids)
    except Exception as exc:  # noqa: BLE001
        raise explain(exc, "ec2:TerminateInstances") from exc


async def run_provisioned(board: Any, settings: Any, aws: AwsSettings, ec2: Any, catalog: Catalog,
                          log_dir: Path, *, ssm: Any = None, address_for: Any = None,
                          port: int | None = None, known_hosts: str | None = None,
                          deadman_file: str = DEADMAN_FILE, ssh_timeout: float = 300) -> Provisioner:
    """Launch one instance per type, probe them over SSH, terminate them whatever happens.

    ``address_for(launched) -> address`` overrides the instance's IP (tests map instances to
    local sshd servers). The dead-man deadline is pushed back while probes run.
    """
    import asyncio

    from ..run.config import Host
    from ..run.plan import plan_probes, run_plan
    from ..run.ssh import connect

    prov = Provisioner(ec2, aws, ssm=ssm)
    prov.check_budget(catalog)
    try:
        launched = [prov.launch(t) for t in aws.instance_types]
        await asyncio.to_thread(prov.wait_running, launched, 2 if aws.endpoint_url else 5)
        hosts = []
        for item in launched:
            address = address_for(item) if address_for else item.address
            if not address:
                raise AwsError(f"{item.instance_id} has no reachable address (public IP or VPN?)")
            hosts.append(Host(name=f"{item.instance_type}-{item.instance_id[-6:]}",
                              instance=item.instance_type, address=address, port=port,
                              user=aws.user, identity_file=aws.identity_file, python=aws.python,
                              known_hosts=known_hosts, accept_new_host_key=True))
        await asyncio.gather(*(asyncio.to_thread(wait_ssh_ready, h.address, h.port or 22, ssh_timeout)
                               for h in hosts))

        async def keep_alive() -> None:
            cmd = extend_command(aws.deadman_minutes).replace(DEADMAN_FILE, deadman_file)
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
