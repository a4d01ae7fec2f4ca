"""AwsLaunch's teardown edges, with an EC2 stand-in that records calls (moto covers the rest)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from probecast.core.cloud.client import AwsError
from probecast.core.cloud.aws_launch import AwsProvider
from probecast.core.model.pricing import Catalog
from probecast.core.run.config import AwsSettings


class Ec2:
    def __init__(self, fail_terminate: bool = False) -> None:
        self.terminated: list[str] = []
        self.fail_terminate = fail_terminate
        self.n = 0

    def run_instances(self, **kwargs: Any) -> dict[str, Any]:
        self.n += 1
        return {"Instances": [{"InstanceId": f"i-{self.n:017d}", "Placement": {}}]}

    def terminate_instances(self, InstanceIds: list[str]) -> None:  # noqa: N803 - boto's name
        if self.fail_terminate:
            raise RuntimeError("endpoint down")
        self.terminated += InstanceIds


def provider(ec2: Ec2) -> AwsProvider:
    aws = AwsSettings(ami="ami-1", instance_types=["g5.xlarge"], max_spend=10)
    return AwsProvider(aws, Catalog.embedded(), ec2_client=ec2)


def test_a_launch_answering_after_close_is_terminated_at_once(tmp_path: Path) -> None:
    ec2 = Ec2()
    launch = provider(ec2).launch(["g5.xlarge"], tmp_path)
    asyncio.run(launch.close())  # a quit while RunInstances was in flight
    with pytest.raises(AwsError, match="after the session ended"):
        launch.prov.launch("g5.xlarge")
    assert ec2.terminated == ["i-00000000000000001"]


def test_a_failed_terminate_is_said_not_hidden(tmp_path: Path) -> None:
    ec2 = Ec2(fail_terminate=True)
    launch = provider(ec2).launch(["g5.xlarge"], tmp_path)
    item = launch.prov.launch("g5.xlarge")
    launch.hosts[0].instance_id = item.instance_id
    with pytest.raises(AwsError, match="TerminateInstances"):
        asyncio.run(launch.close())
    assert "cleanup" in launch.hosts[0].phase


def test_the_quote_refuses_over_max_spend_and_unknown_prices(tmp_path: Path) -> None:
    p = provider(Ec2())
    assert p.quote(["g5.xlarge"]).problem is None
    assert "exceeds max_spend" in (p.quote(["p5.48xlarge"]).problem or "")
    assert "no price for nosuch.type" in (p.quote(["nosuch.type"]).problem or "")
    assert "worst case $" in p.quote(["g5.xlarge"]).describe()


class Capacity(Ec2):
    """g4dn.xlarge: no capacity anywhere; g5.xlarge: answers only once ``release`` is set (after
    the configured host's probe is done: it never waited for the launches)."""

    def __init__(self) -> None:
        super().__init__()
        import threading

        self.release = threading.Event()
        self.types: dict[str, str] = {}

    def run_instances(self, **kwargs: Any) -> dict[str, Any]:
        from botocore.exceptions import ClientError

        if kwargs["InstanceType"] == "g4dn.xlarge":
            raise ClientError({"Error": {"Code": "InsufficientInstanceCapacity",
                                         "Message": "no g4dn.xlarge capacity"}}, "RunInstances")
        assert self.release.wait(20), "the configured host's probe never ran"
        resp = super().run_instances(**kwargs)
        self.types[resp["Instances"][0]["InstanceId"]] = kwargs["InstanceType"]
        return resp

    def describe_instances(self, InstanceIds: list[str]) -> dict[str, Any]:  # noqa: N803
        return {"Reservations": [{"Instances": [
            {"InstanceId": i, "State": {"Name": "running"}, "PrivateIpAddress": "127.0.0.1"}
            for i in InstanceIds]}]}


class Fake:
    def __init__(self, spec: Any, after: Any = None) -> None:
        self.spec, self.after = spec, after

    async def stream(self):  # type: ignore[no-untyped-def]
        from probecast.core.run.runners import RunnerStatus

        yield RunnerStatus("running", "fake")
        yield RunnerStatus("done", "fake")
        if self.after is not None:
            self.after()

    async def cancel(self) -> None:
        pass


def test_one_type_failing_to_launch_fails_only_its_probes(tmp_path: Path) -> None:
    """One failing probe never takes down the others. A configured host probes at once
    (before any launch answers); the type without capacity fails its own probes, with why; the
    other type comes up, probes, and is terminated."""
    from probecast.core.model.rank.ranking import Pricing
    from probecast.core.run.board import Board
    from probecast.core.run.config import Host, ProbeSettings
    from probecast.core.run.probe_plan import run_plan

    ec2 = Capacity()
    aws = AwsSettings(ami="ami-1", instance_types=["g5.xlarge", "g4dn.xlarge"], max_spend=10)
    board = Board(Pricing(Catalog.embedded()))
    here = Host(name="here", kind="local")
    settings = ProbeSettings(command="python3 train.py", batch_sizes=[8, 16])

    async def go() -> Any:
        async def banner(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(b"SSH-2.0-stand-in\r\n")  # all wait_ssh_ready asks of an instance
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(banner, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            p = AwsProvider(aws, Catalog.embedded(), port=port, ssh_timeout=10, ec2_client=ec2)
            launch = p.launch(["g5.xlarge", "g4dn.xlarge"], tmp_path, taken={"here"})
            plan = launch.plan(settings, [here])

            def make(host: Host, spec: Any, path: Path) -> Fake:
                if host.name == "here":
                    return Fake(spec, ec2.release.set if spec.batch_size == 16 else None)
                assert host.address == "127.0.0.1" and host.port == port  # filled in once up
                return Fake(spec)

            await launch.run(board, plan, lambda: run_plan(board, plan, factory=make))
            return launch
        finally:
            server.close()

    launch = asyncio.run(go())
    status = {k: (e.status, e.detail) for k, e in board.entries.items()}
    for key in ("here-b8", "here-b16", "g5.xlarge-b8", "g5.xlarge-b16"):
        assert status[key] == ("done", "fake"), status
    for key in ("g4dn.xlarge-b8", "g4dn.xlarge-b16"):
        assert status[key][0] == "failed", status
        assert "launch failed" in status[key][1] and "InsufficientInstanceCapacity" in status[key][1]
    g5, g4dn = launch.hosts
    assert g5.phase == "terminated" and not g5.error
    assert "InsufficientInstanceCapacity" in g4dn.error and not g4dn.instance_id
    assert ec2.terminated == list(ec2.types) and list(ec2.types.values()) == ["g5.xlarge"]
    assert (tmp_path / "known_hosts").read_text().startswith("127.0.0.1 ") or \
        (tmp_path / "known_hosts").read_text().startswith("[127.0.0.1]:")
