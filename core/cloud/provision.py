"""Launch tagged instances with a dead-man timer, wait for them, terminate them; find leftovers."""

from __future__ import annotations

import getpass
import asyncio
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

from ..model.pricing import Catalog
from ..run.config import AwsSettings
from .client import TAG_OWNER, TAG_SESSION, AwsError, explain
from .userdata import HostKey, user_data

@dataclass
class Launched:
    instance_id: str
    instance_type: str
    address: str = ""
    zone: str = ""
    host_key: HostKey | None = None  # made here and given in the user data: SSH pins it


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


@dataclass(frozen=True)
class LaunchQuote:
    """What a launch would cost at worst: every instance running until its dead-man deadline
    (the bound ``max_spend`` is checked against - ``Provisioner.check_budget``)."""

    region: str
    types: tuple[str, ...]
    worst_usd: float
    unknown: tuple[str, ...]  # types without a price: the worst case cannot be bounded
    minutes: int
    max_spend: float

    @property
    def problem(self) -> str | None:
        """Why it may not launch (None: it may)."""
        if self.unknown:
            return (f"no price for {', '.join(self.unknown)}: add them under [prices] so the "
                    "worst case can be checked against max_spend")
        if self.worst_usd > self.max_spend:
            return (f"worst case ${self.worst_usd:.2f} ({len(self.types)} instance(s) for "
                    f"{self.minutes} min) exceeds max_spend ${self.max_spend:.2f}: raise "
                    "aws.max_spend or lower aws.deadman_minutes")
        return None

    notes: tuple[str, ...] = ()  # nothing to add: AWS prices every type it can quote

    def describe(self) -> str:
        return (f"will launch {len(self.types)} instance(s) in {self.region}: "
                f"{', '.join(self.types)}; worst case ${self.worst_usd:.2f} (each at most "
                f"{self.minutes} min, dead-man timer), cap ${self.max_spend:.2f}")

    def teardown(self) -> str:
        return ("they are terminated when the probes end, on q and on every exit (else by "
                f"their dead-man timer after {self.minutes} min)")


def quote(aws: AwsSettings, types: list[str], catalog: Catalog) -> LaunchQuote:
    worst, unknown = worst_case_cost(types, catalog, aws.deadman_minutes)
    return LaunchQuote(aws.region, tuple(types), worst, tuple(unknown), aws.deadman_minutes,
                       aws.max_spend)


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
        self.closed = False  # terminate_all ran: a launch answering after it is undone at once
        self._lock = threading.Lock()

    def check_budget(self, catalog: Catalog, types: list[str] | None = None) -> float:
        """The worst case of launching ``types`` (default: aws.instance_types), refused when it
        cannot be bounded or exceeds max_spend."""
        q = quote(self.settings, self.settings.instance_types if types is None else types,
                  catalog)
        if q.problem:
            raise AwsError(q.problem)
        return q.worst_usd

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
        host_key = HostKey.generate()
        for subnet in subnets:
            kwargs: dict[str, Any] = {
                "ImageId": self.image_id(), "InstanceType": instance_type, "MinCount": 1,
                "MaxCount": 1, "InstanceInitiatedShutdownBehavior": "terminate",
                "UserData": user_data(s.deadman_minutes, host_key),
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
                            zone=inst.get("Placement", {}).get("AvailabilityZone", ""),
                            host_key=host_key)
            with self._lock:
                self.launched.append(item)
                late = self.closed
            if late:  # the session ended while this call was in flight (a cancel, a quit)
                terminate(self.ec2, [item.instance_id])
                raise AwsError(f"{item.instance_id} launched after the session ended: terminated")
            return item
        raise explain(last or AwsError("no subnet"), "ec2:RunInstances")

    async def wait_running(self, items: list[Launched], delay: float = 5,
                           max_attempts: int = 60) -> None:
        """Until every instance runs, polling with short calls: a Ctrl-C or SIGTERM cancels the
        wait at once (boto's waiter blocked a thread for minutes, and exit waited on it)."""
        ids = [i.instance_id for i in items]
        by_id = {i.instance_id: i for i in items}
        for _ in range(max_attempts):
            try:
                resp = await asyncio.to_thread(self.ec2.describe_instances, InstanceIds=ids)
            except Exception as exc:  # noqa: BLE001
                raise explain(exc, "ec2:DescribeInstances") from exc
            states = {}
            for r in resp["Reservations"]:
                for inst in r["Instances"]:
                    it = by_id[inst["InstanceId"]]
                    it.address = inst.get("PublicIpAddress") or inst.get("PrivateIpAddress") or ""
                    states[inst["InstanceId"]] = inst["State"]["Name"]
            if any(s in ("shutting-down", "terminated", "stopping", "stopped")
                   for s in states.values()):
                raise AwsError(f"an instance stopped while starting: {states}")
            if states and all(s == "running" for s in states.values()):
                return
            await asyncio.sleep(delay)
        raise AwsError(f"instances not running after {delay * max_attempts:g}s: {ids}")

    def terminate_all(self) -> list[str]:
        """Terminate everything this session launched (idempotent)."""
        with self._lock:
            self.closed = True
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


def _raise_lost_cancel() -> None:
    """Before Python 3.12, ``asyncio.wait_for`` swallows a cancel that lands as the awaited
    thing completes (it returns the result): raise it again, or the SSH wait goes on to its
    timeout and a Ctrl-C is lost. (Python 3.10 has no ``cancelling`` to tell.)"""
    task = asyncio.current_task()
    if task is not None and getattr(task, "cancelling", lambda: 0)():
        raise asyncio.CancelledError


async def wait_ssh_ready(address: str, port: int = 22, timeout: float = 300,
                         interval: float = 2) -> None:
    """Until the SSH port answers with an SSH banner. Cancellable at any moment."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(address, port), 5)
            try:
                _raise_lost_cancel()
                banner = await asyncio.wait_for(reader.read(64), 5)
                _raise_lost_cancel()
            finally:
                writer.close()
            if banner.startswith(b"SSH-"):
                return
        except (OSError, asyncio.TimeoutError):
            pass
        await asyncio.sleep(interval)
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
