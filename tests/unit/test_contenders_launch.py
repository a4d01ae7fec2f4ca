"""Probe only the contenders behind a launch: the probe job's launched hosts come up only when
the contender plan hands out a probe of them, so a candidate it predicts is never launched.

The launch is the launched hosts' own flow (core/cloud/launched.py) with the provider's part -
bringing one machine up, tearing all down - recorded instead of calling a cloud (moto's EC2
cannot run a probe); the probes are a stand-in at the Session's factory seam whose step time
follows the instance's GPUs."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from fakes import SteppingProbe
from probecast.core.cloud.launched import LaunchedHost, LaunchedHosts
from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing
from probecast.core.run.board import Board
from probecast.core.run.config import Host, ProbeSettings
from probecast.core.run.job import ProbeJob
from probecast.core.run.runners import ProbeSpec
from probecast.core.run.session import Session

# embedded-catalog instances and a step time that falls with their GPUs' compute
STEP_S = {"p5.48xlarge": 0.002, "p4d.24xlarge": 0.003, "p3.2xlarge": 0.03,
          "g5.xlarge": 0.05, "g4dn.xlarge": 0.06, "p2.xlarge": 0.3}


class RecordedLaunch(LaunchedHosts):
    """The launched hosts' flow; bringing a machine up is recorded, not done."""

    def __init__(self, names: list[str], log_dir: Path) -> None:
        super().__init__(log_dir, [LaunchedHost(Host(name=f"aws-{n}", instance=n, kind="local"),
                                                None) for n in names])
        self.came_up: list[str] = []
        self.torn_down = False

    async def come_up(self, lh: LaunchedHost) -> None:
        self.came_up.append(lh.host.instance)

    async def tear_down(self) -> None:
        self.torn_down = True


class RecordedProvider:
    kind = "aws"

    def __init__(self) -> None:
        self.launches: list[RecordedLaunch] = []

    def quote(self, names: list[str]) -> Any:
        raise AssertionError("not asked here")

    def launch(self, names: list[str], log_dir: Path, taken: set[str] | None = None
               ) -> RecordedLaunch:
        self.launches.append(RecordedLaunch(names, log_dir))
        return self.launches[-1]


def run_job(tmp_path: Path, contenders: bool, batch_sizes: tuple[int, ...] = (64,)
            ) -> tuple[RecordedLaunch, ProbeJob]:
    settings = ProbeSettings(command="python3 train.py", batch_sizes=list(batch_sizes),
                             adaptive_budget=0, contenders=contenders)
    def factory(host: Host, spec: ProbeSpec, path: Path) -> SteppingProbe:
        return SteppingProbe(spec, STEP_S[spec.instance] * spec.batch_size / 64, noise=0.01,
                             steps_per_epoch=2000, epochs=2)

    session = Session(Board(Pricing(Catalog.embedded())), settings=settings, factory=factory)
    provider = RecordedProvider()
    job = ProbeJob(session, [], tmp_path, [(provider, list(STEP_S))])  # type: ignore[list-item]
    asyncio.run(asyncio.wait_for(job.run(), 60))
    return provider.launches[0], job


def test_only_the_contenders_are_launched(tmp_path: Path) -> None:
    launch, job = run_job(tmp_path, contenders=True)
    assert launch.torn_down
    assert 0 < len(launch.came_up) < len(STEP_S)  # the predicted ones never came up
    assert {"p5.48xlarge", "p2.xlarge"} <= set(launch.came_up)  # most and least compute
    rows = job.ranking().rows
    assert {r.instance for r in rows} == set(STEP_S)  # every candidate ranked
    assert {r.instance for r in rows if r.predicted} == set(STEP_S) - set(launch.came_up)
    entries = job.session.board.entries.values()
    # the probes never handed out end as predicted on the board, not pending
    assert all(not e.active for e in entries)
    assert {e.instance for e in entries if e.status == "done"} == set(launch.came_up)
    saved = len(STEP_S) - len(launch.came_up)
    assert any(f"{saved} probe(s) saved" in line for line in job.summary())


def test_without_contenders_every_host_is_launched(tmp_path: Path) -> None:
    launch, job = run_job(tmp_path, contenders=False)
    assert sorted(launch.came_up) == sorted(STEP_S)
    assert not any(r.predicted for r in job.ranking().rows)


def test_a_sweep_is_planned_per_batch_size_and_every_pair_ranked(tmp_path: Path) -> None:
    """Each batch size is its own job: its own first round, its own predictions; every
    (instance, batch size) is in the ranking, probed or predicted at that batch size."""
    launch, job = run_job(tmp_path, contenders=True, batch_sizes=(64, 128))
    rows = job.ranking().rows
    assert sorted((r.instance, r.batch_size) for r in rows) == sorted(
        (n, b) for n in STEP_S for b in (64, 128))
    done = {(e.instance, e.batch_size) for e in job.session.board.entries.values()
            if e.status == "done"}
    assert {(r.instance, r.batch_size) for r in rows if not r.predicted} == done
    assert 0 < len(done) < 2 * len(STEP_S)
    assert set(launch.came_up) == {n for n, _ in done}


def test_the_launch_quote_says_only_the_contenders_are_launched(tmp_path: Path) -> None:
    """The quote is the worst case - every type - said before any host is known; with
    contenders it says that the predicted types are never launched."""
    from probecast.core.cloud.provision import LaunchQuote

    class Quoting(RecordedProvider):
        def quote(self, names: list[str]) -> Any:
            return LaunchQuote("us-east-1", tuple(names), 12.5, (), 60, 100.0)

    for contenders in (True, False):
        settings = ProbeSettings(command="python3 train.py", contenders=contenders)
        session = Session(Board(Pricing(Catalog.embedded())), settings=settings)
        said: list[str] = []
        ProbeJob(session, [], tmp_path, [(Quoting(), list(STEP_S))]).quote(  # type: ignore[list-item]
            said.append)
        assert said[0].startswith(f"will launch {len(STEP_S)} instance(s)")
        assert any("only the contenders are probed" in line for line in said) == contenders
