"""The probe job's pieces: the one rule for a probe's length, the checks before anything starts,
one plan of configured and launched hosts, the one host-price rule, the one epoch-plan loader."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from conftest import SAMPLE_LOGS
from probecast.core.agent.policy import DEFAULT_MAX_STEPS, probe_length
from probecast.core.cloud.aws_launch import AwsProvider
from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing
from probecast.core.run.board import Board
from probecast.core.run.config import AwsSettings, Config, Host, ProbeSettings, parse_config
from probecast.core.run.job import JobError, ProbeJob, describe_length, load_epoch_plan
from probecast.core.run.probe_plan import host_price
from probecast.core.run.session import Session


def test_one_rule_for_a_probes_length() -> None:
    assert probe_length(None, None, None) == DEFAULT_MAX_STEPS == 30
    assert probe_length(12, None, None) == 12
    assert probe_length(None, 0.02, None) is None  # another stop is given: no step limit
    assert probe_length(None, None, 60.0) is None
    assert probe_length(None, None, None, full=True) is None
    # the config applies it as the app and the CLI do: a time limit alone stops by time
    cfg = parse_config('[probe]\nmax_seconds = 60\n')
    assert cfg.probe.max_steps is None and describe_length(cfg.probe) == "60 s"
    assert parse_config("").probe.max_steps == 30
    assert describe_length(ProbeSettings(max_steps=30, target_ci=0.02)) == "30 steps or CI ≤ 2%"


def session(hosts: list[Host], **probe: Any) -> Session:
    config = Config(hosts=hosts, probe=ProbeSettings(**probe), path=None)
    return Session(Board(Pricing(Catalog.embedded())), config=config)


def test_the_length_is_decided_when_the_job_is_made(tmp_path: Path) -> None:
    s = session([Host(name="here", kind="local")])
    job = ProbeJob(s, list(s.config.hosts), tmp_path)  # type: ignore[union-attr]
    assert job.settings.max_steps == 30 and s.settings is job.settings
    full = ProbeJob(session([]), [], tmp_path, full=True)
    assert full.settings.max_steps is None


def test_checks_refuse_before_anything_starts(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(JobError, match="cannot write probe logs in"):
        ProbeJob(session([]), [], blocker / "logs").check()
    project = tmp_path / "project"
    project.mkdir()
    (project / "big.bin").write_bytes(os.urandom(300_000))
    remote = Host(name="far", address="10.0.0.9")
    said: list[str] = []
    job = ProbeJob(session([remote], project=str(project), project_limit_mb=0.1), [remote],
                   tmp_path / "a")
    with pytest.raises(JobError, match="big.bin"):
        job.check(said.append)
    here = Host(name="here", kind="local")
    job = ProbeJob(session([here], project=str(project), project_limit_mb=0.1), [here],
                   tmp_path / "b")
    job.check(said.append)  # local probes use the project in place: no limit
    assert said == [f"project {project}: used in place (local probes)"]


class Ec2:
    def run_instances(self, **kwargs: Any) -> dict[str, Any]:  # never reached: only planned
        raise AssertionError("nothing may launch in a plan")


def test_one_plan_of_configured_and_launched_hosts(tmp_path: Path) -> None:
    here = Host(name="here", kind="local")
    aws = AwsSettings(ami="ami-1", instance_types=["g5.xlarge"], max_spend=10)
    provider = AwsProvider(aws, Catalog.embedded(), ec2_client=Ec2())
    s = session([here], batch_sizes=[8, 16])
    job = ProbeJob(s, [here], tmp_path, [(provider, ["g5.xlarge", "p5.48xlarge"])])
    said: list[str] = []
    with pytest.raises(JobError, match="exceeds max_spend"):  # refused: said, then nothing
        job.quote(said.append)
    assert said and said[0].startswith("will launch 2 instance(s)")
    assert [q.types for q in ProbeJob(s, [here], tmp_path, [(provider, ["g5.xlarge"])]).quote()] \
        == [("g5.xlarge",)]
    job = ProbeJob(s, [here], tmp_path, [(provider, ["g5.xlarge", "here"])])
    plan = job.make_plan()
    assert [p.spec.key for p in plan] == ["here-b8", "here-b16", "g5.xlarge-b8", "g5.xlarge-b16",
                                          "here-2-b8", "here-2-b16"]  # a launched name taken
    assert job.launch is not None and job.make_plan() is plan  # made once
    assert job.launch.caption("g5.xlarge-b8") is not None and job.launch.caption("here-b8") is None


def test_a_hosts_own_price_comes_first_then_the_catalog() -> None:
    catalog = Catalog.embedded()
    assert host_price(Host(name="a", instance="g5.xlarge", price_per_hour=0.5), catalog) == 0.5
    listed, _ = catalog.price("g5.xlarge")
    assert host_price(Host(name="b", instance="g5.xlarge"), catalog) == listed is not None
    assert host_price(Host(name="c", instance="nosuch.type"), catalog) is None


def test_epoch_plans_are_loaded_once_for_every_front_end(tmp_path: Path) -> None:
    warned: list[str] = []
    plan = load_epoch_plan([str(SAMPLE_LOGS / "cpu-keras" / "full-runs"),
                            str(tmp_path / "missing")], warn=warned.append)
    assert plan and all(isinstance(k, tuple) for k in plan)
    assert warned == [f"{tmp_path / 'missing'}: no such file or directory"]
    assert load_epoch_plan([]) is None
