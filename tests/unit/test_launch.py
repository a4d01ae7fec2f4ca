"""AwsLaunch's teardown edges, with an EC2 stand-in that records calls (moto covers the rest)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from probecast.core.cloud.client import AwsError
from probecast.core.cloud.launch import AwsProvider
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
