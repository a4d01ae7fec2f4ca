"""Launching from the app: Pilot drives the setup screen of a real ProbecastApp, moto's server
plays AWS and loopback sshd servers play the launched instances (test_aws.py's helpers)."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from test_aws import REGION, _play_cloud_init, an_ami, ec2_client, fake_credentials, moto_url  # noqa: F401

from probecast.core.cloud import provision
from probecast.core.cloud.aws_launch import AwsProvider
from probecast.core.run.runners import RunnerStatus
from probecast.tui.main import make_live_app
from probecast.tui.screens.dialogs import ConfirmScreen
from probecast.tui.screens.setup import SetupScreen

TYPES = ("g4dn.xlarge", "g5.xlarge")
ADDRESSES = {"g4dn.xlarge": "127.0.0.6", "g5.xlarge": "127.0.0.7"}


def states(ec2, ids: list[str]) -> set[str]:  # type: ignore[no-untyped-def]
    return {i["State"]["Name"] for r in ec2.describe_instances(InstanceIds=ids)["Reservations"]
            for i in r["Instances"]}


def our_instances(ec2, before: set[str]) -> list[str]:  # type: ignore[no-untyped-def]
    return [i["InstanceId"] for r in ec2.describe_instances()["Reservations"]
            for i in r["Instances"] if i["InstanceId"] not in before]


class Cloud:
    """The config, the client key, the trainer, and an sshd per launched instance."""

    def __init__(self, moto_url: str, tmp_path: Path, steps: int, step_s: float,
                 max_steps: int = 10) -> None:
        import sshd as sshd_mod

        if sshd_mod.available():
            pytest.skip(sshd_mod.available())
        self.ec2 = ec2_client(moto_url)
        # the provider reaches every instance on one port: one free on both addresses
        self.port = sshd_mod.free_port(*ADDRESSES.values())
        self.base = Path(tempfile.mkdtemp(prefix="probecast-app-aws-", dir="/tmp"))
        os.chmod(self.base, 0o755)
        key = sshd_mod.keygen(self.base / "client")
        self.pub = key.with_suffix(".pub").read_text()
        trainer = self.base / "trainer.py"
        trainer.write_text("import time\nfrom probecast_agent import StepTimer\n"
                           f"p = StepTimer(steps_per_epoch={steps}, batch_size=8)\n"
                           f"for _ in p.epochs(range(1)):\n    for _ in p.steps(range({steps})):\n"
                           f"        time.sleep({step_s})\n")
        os.chmod(trainer, 0o644)
        self.config = tmp_path / "probecast.toml"
        self.config.write_text(f"""[aws]
region = "{REGION}"
endpoint_url = "{moto_url}"
ami = "{an_ami(self.ec2)}"
instance_types = ["p3.2xlarge"]
identity_file = "{key}"
user = "root"
python = "/usr/bin/python3"
max_spend = 10

[probe]
command = "python3 {trainer}"
batch_sizes = [8]
max_steps = {min(steps, max_steps)}
boundary_budget = 0
adaptive_budget = 0
""")
        self.servers: list = []  # type: ignore[type-arg]
        self.before = {i["InstanceId"] for r in self.ec2.describe_instances()["Reservations"]
                       for i in r["Instances"]}

    def address_for(self, item) -> str:  # type: ignore[no-untyped-def]
        address = ADDRESSES[item.instance_type]
        self.servers.append(_play_cloud_init(self.ec2, item, self.base, self.pub,
                                             f"s-{item.instance_id}", self.port, address=address))
        return address

    def app(self):  # type: ignore[no-untyped-def]
        from probecast.core.run.config import load_config
        from probecast.core.cloud.price_lookup import price_catalog

        config = load_config(str(self.config))
        assert config.aws is not None
        provider = AwsProvider(config.aws, price_catalog(config), address_for=self.address_for,
                               port=self.port, deadman_file=str(self.base / "deadline"),
                               ssh_timeout=20)
        return make_live_app(str(self.config), provider)

    def stop(self) -> None:
        for s in self.servers:
            s.stop()
        shutil.rmtree(self.base, ignore_errors=True)


async def pick_types(pilot) -> None:  # type: ignore[no-untyped-def]
    for t in TYPES:
        await pilot.press("slash", "ctrl+a", "ctrl+k", *t, "enter", "space")


async def wait_for(pilot, ok, seconds: float = 60) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not ok():
        assert time.monotonic() < deadline, "timed out"
        await pilot.pause(0.1)


@pytest.fixture
def cloud_ports_free() -> None:
    """sshd needs its own loopback addresses: 127.0.0.0/8 is all loopback on Linux."""


async def test_two_picked_types_launch_probe_rank_and_are_terminated(moto_url, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    cloud = Cloud(moto_url, tmp_path, steps=50, step_s=0.01)
    app = cloud.app()
    seen: list[str] = []
    board = app.session.board
    feed = board.feed

    def record(key, item):  # type: ignore[no-untyped-def]
        if isinstance(item, RunnerStatus):
            seen.append(item.status)
        feed(key, item)

    board.feed = record  # type: ignore[method-assign]
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await pick_types(pilot)
            summary = str(app.screen.query_one("#summary").render())
            assert "2 to launch" in summary and "launch ≤ $" in summary and "of $10.00" in summary
            await pilot.press("s")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), 60)
            question = str(app.screen.query_one("#question").render())
            assert "will launch 2 instance(s)" in question and "g4dn.xlarge, g5.xlarge" in question
            assert "worst case $" in question and "cap $10.00" in question
            assert our_instances(cloud.ec2, cloud.before) == []  # nothing before the answer
            await pilot.press("y")
            await wait_for(pilot, lambda: app.launch is not None)
            launch = app.launch
            await wait_for(pilot, lambda: launch.launched and all(
                lh.phase in ("up", "terminated") for lh in launch.hosts))
            await app.workers.wait_for_complete()
            await pilot.pause()
            ids = [i.instance_id for i in launch.launched]
            assert len(ids) == 2 and states(cloud.ec2, ids) <= {"shutting-down", "terminated"}
            entries = app.session.board.entries
            assert {e.instance for e in entries.values()} == set(TYPES)
            assert all(e.status == "done" and e.state.steps == 10 for e in entries.values()), \
                [(e.status, e.detail) for e in entries.values()]
            # the phases, in order: launching, then the probe's own (connecting, running), done
            assert seen.index("launching") < seen.index("running") < seen.index("done")
            for key in entries:
                caption = launch.caption(key)
                assert caption is not None and "terminated" in caption and "$" in caption
            app.screen.refresh_view(force=True)  # type: ignore[attr-defined]
            await pilot.pause()
            rows = app.screen._rows  # type: ignore[attr-defined]
            assert {r.instance for r in rows.values()} == set(TYPES)  # ranked
            panel = app.screen.query_one("#probes").children[0]
            # the panel's subtitle follows on its own timer (the board is still by now)
            await wait_for(pilot, lambda: "terminated" in str(panel.border_subtitle), 60)
            assert "$" in str(panel.border_subtitle)
            await pilot.press("q")
            await pilot.pause()
        assert states(cloud.ec2, ids) <= {"shutting-down", "terminated"}
        assert not [i for i in provision.find_leftovers(cloud.ec2) if i["id"] in ids]
    finally:
        cloud.stop()


async def test_quit_while_launched_instances_probe_terminates_them(moto_url, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    # the probe must outlast the checks below: a 10-step probe (0.5 s) could end between the
    # wait and the "probing" check on a loaded machine (it did, in CI)
    cloud = Cloud(moto_url, tmp_path, steps=100000, step_s=0.05, max_steps=100000)
    app = cloud.app()
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await pick_types(pilot)
            await pilot.press("s")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), 60)
            await pilot.press("y")
            await wait_for(pilot, lambda: app.launch is not None and all(
                e.state.steps >= 2 for e in app.session.board.entries.values()))
            launch = app.launch
            ids = [i.instance_id for i in launch.launched]
            assert len(ids) == 2 and states(cloud.ec2, ids) == {"running"}
            assert any("probing" in (launch.caption(k) or "") for k in app.session.board.entries)
            await pilot.press("q")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), 60)
            assert "terminated" in str(app.screen.query_one("#question").render())
            await pilot.press("y")
            await wait_for(pilot, lambda: not app.is_running, 30)
        assert states(cloud.ec2, ids) <= {"shutting-down", "terminated"}
        assert all(lh.phase == "terminated" for lh in launch.hosts)
    finally:
        cloud.stop()


async def test_cancelling_the_confirm_launches_nothing(moto_url, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    cloud = Cloud(moto_url, tmp_path, steps=50, step_s=0.01)
    app = cloud.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pick_types(pilot)
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), 60)
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, SetupScreen) and app.launch is None
        assert not app.session.board.entries
        await app.workers.wait_for_complete()
        await pilot.press("q")
    cloud.stop()
    assert our_instances(cloud.ec2, cloud.before) == []
