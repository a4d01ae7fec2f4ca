"""SkyPilot as a provider, with SkyPilot's real SDK and no cloud.

- SkyPilot's catalog is seeded from small CSVs in its own format (``vms.csv`` per cloud,
  ``common/accelerators.csv``) in a temporary ``$SKY_RUNTIME_DIR/.sky/catalogs/<schema>/``: where
  0.14 looks for them. Files with no ``.meta`` md5 count as edited by the user, so SkyPilot never
  downloads over them.
- ``sky.Task`` / ``sky.Resources`` are built from the config for real.
- A real ``sky.launch`` with no cloud enabled (SkyPilot's local API server starts for it: ~15-40 s
  here, so the test is marked ``slow``) ends in one line telling the user to run ``sky check``.
- launch -> SSH -> probe -> down: ``skypilot.launch_cluster`` (the one seam) is replaced by a
  loopback sshd "cluster" that SkyPilot's own ``SSHConfigHelper`` writes the SSH entry for, and
  returns a real ``CloudVmRayResourceHandle``; ``down`` is recorded on success, failure, cancel.
  The probe job (core/run/job.py) runs it, as `probe --headless` and the app do; the app's own
  path (pick, confirm, probe, quit) is driven through Pilot with the same seam.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest

sky = pytest.importorskip("sky")

import sshd as sshd_mod  # noqa: E402

from probecast.core.cloud import sky_launch, skypilot  # noqa: E402
from probecast.core.model.pricing import Catalog  # noqa: E402
from probecast.core.model.rank.ranking import Pricing  # noqa: E402
from probecast.core.run.board import Board  # noqa: E402
from probecast.core.run.config import ProbeSettings  # noqa: E402
from probecast.core.run.job import ProbeJob  # noqa: E402
from probecast.core.run.session import Session  # noqa: E402
from probecast.core.run.sky_settings import SkyPilotSettings, check_skypilot  # noqa: E402

GPU = "{'Gpus': [{'Name': '%s', 'Manufacturer': 'NVIDIA', 'Count': 1, 'MemoryInfo': {'SizeInMiB': %d}}], 'TotalGpuMemoryInMiB': %d}"  # noqa: E501
AWS_COLUMNS = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,"
               "SpotPrice,Region,AvailabilityZone,Arch,LocalDiskType,NVMeSupported,LocalDiskSize,"
               "LocalDiskCount,MaximumEfaInterfaces")


def _aws_row(itype: str, gpu: str, mib: int, price: float, spot: float, region: str, az: str) -> str:
    info = GPU % (gpu, mib, mib)
    return f'{itype},{gpu},1.0,4.0,16.0,"{info}",{price},{spot},{region},{az},x86_64,ssd,True,250,1,0'


CATALOGS = {
    "aws/vms.csv": "\n".join([
        AWS_COLUMNS,
        _aws_row("g5.xlarge", "A10G", 24576, 1.006, 0.40, "us-east-1", "use1-az1"),
        _aws_row("g5.xlarge", "A10G", 24576, 1.006, 0.42, "us-east-1", "use1-az2"),
        _aws_row("g5.xlarge", "A10G", 24576, 1.258, 0.50, "eu-west-1", "euw1-az1"),
        _aws_row("g6.xlarge", "L4", 22888, 0.8048, 0.30, "us-east-1", "use1-az1"),
        "m6i.large,,,2.0,8.0,,0.096,0.04,us-east-1,use1-az1,x86_64,,False,,,0",
    ]) + "\n",
    "lambda/vms.csv": "\n".join([
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice",
        f'gpu_1x_h100_pcie,H100,1.0,26.0,200.0,2.49,us-east-1,"{GPU % ("H100", 81920, 81920)}",',
    ]) + "\n",
    "common/accelerators.csv": "AcceleratorName,Clouds\nA10G,\"['AWS']\"\nL4,\"['AWS']\"\n"
                               "H100,\"['AWS', 'Lambda']\"\n",
    "common/metadata.csv": "GPU,MemoryGB,Manufacturer\nA10G,24,NVIDIA\nL4,24,NVIDIA\nH100,80,NVIDIA\n",
}


@pytest.fixture(scope="module")
def sky_home():  # type: ignore[no-untyped-def]
    """SkyPilot's runtime directory (catalogs, API server state) in a temporary place."""
    from sky.catalog import common as catalog_common
    from sky.server import common as server_common
    from sky.skylet import constants

    runtime = Path(tempfile.mkdtemp(prefix="probecast-sky-"))
    versioned = runtime / ".sky" / "catalogs" / constants.CATALOG_SCHEMA_VERSION
    for name, text in CATALOGS.items():
        (versioned / name).parent.mkdir(parents=True, exist_ok=True)
        (versioned / name).write_text(text)
    saved = {k: os.environ.get(k) for k in ("SKY_RUNTIME_DIR", "SKYPILOT_API_SERVER_LOCAL_PORT")}
    os.environ["SKY_RUNTIME_DIR"] = str(runtime)
    # the local API server on a free port, not SkyPilot's fixed 46580: another suite on this
    # machine starts (and stops) its own
    os.environ["SKYPILOT_API_SERVER_LOCAL_PORT"] = str(sshd_mod.free_port("127.0.0.1"))
    server_common.get_server_url.cache_clear()  # the URL is cached at its first use
    # the directory is read once, when sky.catalog.common is first imported
    old_dir = catalog_common._ABSOLUTE_VERSIONED_CATALOG_DIR
    catalog_common._ABSOLUTE_VERSIONED_CATALOG_DIR = str(versioned)
    yield runtime
    catalog_common._ABSOLUTE_VERSIONED_CATALOG_DIR = old_dir
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    server_common.get_server_url.cache_clear()
    shutil.rmtree(runtime, ignore_errors=True)


def settings(**kw: Any) -> SkyPilotSettings:
    base: dict[str, Any] = {"accelerators": ["A10G:1", "L4:1"], "infra": "aws/us-east-1",
                            "python": "/usr/bin/python3", "max_spend": 10}
    base.update(kw)
    return SkyPilotSettings(**base)


def test_tasks_and_resources_are_skypilots_own(sky_home) -> None:  # type: ignore[no-untyped-def]
    s = settings(use_spot=True, disk_size=64)
    task = skypilot.build_task(s, "A10G:1")
    assert isinstance(task, sky.Task)
    (res,) = task.resources
    assert isinstance(res, sky.Resources)
    assert str(res.cloud) == "AWS" and res.region == "us-east-1" and res.use_spot
    assert res.accelerators == {"A10G": 1} and res.disk_size == 64
    any_cloud = skypilot.build_task(settings(infra=None), "H100:1")
    (res,) = any_cloud.resources
    assert res.cloud is None and res.accelerators == {"H100": 1}
    with pytest.raises(skypilot.SkyPilotError, match="skypilot: A10G:1"):
        skypilot.build_task(settings(infra="nosuchcloud/x"), "A10G:1")
    assert check_skypilot(SkyPilotSettings()) is not None
    assert "NAME:COUNT" in (check_skypilot(SkyPilotSettings(accelerators=["A10G:x"])) or "")
    assert check_skypilot(settings()) is None


def test_prices_and_gpu_facts_come_from_skypilots_catalog_per_cloud_and_region(sky_home) -> None:  # type: ignore[no-untyped-def]
    offers, failed = skypilot.catalog_offers(settings(infra="aws"), "A10G:1")
    by_name = {r.instance: r for r in offers}
    assert set(by_name) == {"g5.xlarge@aws/us-east-1", "g5.xlarge@aws/eu-west-1"} and not failed
    us = by_name["g5.xlarge@aws/us-east-1"]
    assert us.price_per_hour == 1.006 and us.gpu_model == "A10G" and us.gpu_memory_gb == 24
    assert us.provider == "aws" and us.region == "us-east-1" and us.vcpus == 4
    assert by_name["g5.xlarge@aws/eu-west-1"].price_per_hour == 1.258
    spot, _ = skypilot.catalog_offers(settings(infra="aws/us-east-1", use_spot=True), "A10G:1")
    assert [r.price_per_hour for r in spot] == [0.40]  # the cheapest zone's spot price
    # no infra: every listed cloud's catalog; one that cannot be read (not seeded, offline) is
    # named, the others still price
    h100, failed = skypilot.catalog_offers(settings(infra=None, clouds=["aws", "lambda", "gcp"]),
                                           "H100:1")
    assert [r.instance for r in h100] == ["gpu_1x_h100_pcie@lambda/us-east-1"] and failed == ["gcp"]
    s = settings(accelerators=["A10G:1", "H100:1"], infra="aws", autodown_minutes=30)
    total, unknown = skypilot.worst_case(s, {"A10G:1": offers, "H100:1": []})
    assert total == pytest.approx(1.258 / 2) and unknown == ["H100:1"]


def test_the_ssh_entry_skypilot_writes_becomes_a_host(sky_home, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from sky.backends.cloud_vm_ray_backend import CloudVmRayResourceHandle
    from sky.utils.cluster_utils import SSHConfigHelper

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    key = tmp_path / "home" / "sky-key"
    key.write_text("not a key")
    name = skypilot.cluster_name("abc123", 0, "A10G:1")
    assert name.startswith(skypilot.cluster_prefix()) and name.endswith("-0-a10g1")
    SSHConfigHelper.add_cluster(name, name, ["203.0.113.7"], {"ssh_user": "ubuntu",
                                "ssh_private_key": str(key)}, [2202])
    assert f"Include ~/.sky/generated/ssh/*" in (tmp_path / "home/.ssh/config").read_text()
    entry = skypilot.read_ssh_entry(name)
    assert entry is not None and (entry.host, entry.port, entry.user) == ("203.0.113.7", 2202, "ubuntu")
    assert entry.identity_file == str(key) and entry.proxy_command is None
    handle = CloudVmRayResourceHandle(
        cluster_name=name, cluster_name_on_cloud=name, cluster_yaml=None, launched_nodes=1,
        launched_resources=sky.Resources(infra="aws/us-east-1", instance_type="g5.xlarge",
                                         accelerators="A10G:1"))
    offers, _ = skypilot.catalog_offers(settings(infra="aws"), "A10G:1")
    host = sky_launch.host_for("A10G:1", name, "A10G:1", handle, settings(),
                               tmp_path / "known_hosts", offers)
    assert host.name == "A10G:1" and host.instance == "g5.xlarge@aws/us-east-1" and host.price_per_hour == 1.006
    assert (host.address, host.port, host.user) == ("203.0.113.7", 2202, "ubuntu")
    assert host.accept_new_host_key and host.known_hosts == str(tmp_path / "known_hosts")


@pytest.mark.slow
def test_a_real_launch_with_no_cloud_enabled_is_one_line(sky_home, run_cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The real SDK, the real API server (started locally for it), no cloud credentials."""
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the API server's ~/.sky goes there too
    cfg = tmp_path / "probecast.toml"
    cfg.write_text('[skypilot]\naccelerators = ["A10G:1"]\ninfra = "aws/us-east-1"\n'
                   'max_spend = 5\n\n[probe]\ncommand = "python3 train.py"\nbatch_sizes = [8]\n')
    started = time.monotonic()
    try:
        code, out, err = run_cli("probe", "--config", str(cfg), "--headless", "--yes",
                                 "--out", str(tmp_path / "logs"))
        took = time.monotonic() - started
        assert code == 1, out + err
        lines = [line for line in err.splitlines() if line.startswith("probecast:")]
        assert lines == ["probecast: no cloud enabled for SkyPilot: run `sky check` (and set up a "
                         "cloud's credentials) - nothing was launched"], err
        assert "will launch 1 SkyPilot cluster(s)" in out and "torn down" in out
        # nothing left: sky status knows no probecast cluster; cleanup says so
        code, out, err = run_cli("cleanup", "--skypilot", "--dry-run")
        assert code == 0 and "no SkyPilot clusters named probecast-" in out, err
        print(f"\nreal sky.launch without a cloud: {took:.1f}s (API server start included)")
    finally:
        try:
            sky.api_stop()
        except Exception:  # noqa: BLE001
            pass


# ---- launch -> SSH -> probe -> down, with a loopback sshd as the cluster ----------------------

TRAINER = """import time
from probecast_agent import StepTimer
p = StepTimer(steps_per_epoch=50, batch_size=8)
for _ in p.epochs(range(1)):
    for _ in p.steps(range(50)):
        time.sleep(%s)
"""


@pytest.fixture
def loopback(sky_home, tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    """A fake cloud behind the seam: each launch starts an sshd on 127.0.0.<n> and has
    SkyPilot's SSHConfigHelper write its SSH entry; down is recorded (and stops the sshd)."""
    if sshd_mod.available():
        pytest.skip(sshd_mod.available())
    from sky.backends.cloud_vm_ray_backend import CloudVmRayResourceHandle
    from sky.utils.cluster_utils import SSHConfigHelper

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    base = Path(tempfile.mkdtemp(prefix="probecast-sky-ssh-", dir="/tmp"))
    os.chmod(base, 0o755)
    key = sshd_mod.keygen(base / "sky-key")
    pub = key.with_suffix(".pub").read_text()
    state: dict[str, Any] = {"launched": [], "downed": [], "servers": {}, "fail": set(),
                             "lock": threading.Lock(), "base": base}
    instance_for = {"A10G": ("g5.xlarge", "A10G:1"), "L4": ("g6.xlarge", "L4:1")}

    def launch(task, name, minutes):  # type: ignore[no-untyped-def]
        (res,) = task.resources
        acc = next(iter(res.accelerators))
        assert minutes == 30
        with state["lock"]:
            state["launched"].append(name)
            n = len(state["launched"])
        if acc in state["fail"]:
            raise sky.exceptions.ResourcesUnavailableError(f"no {acc} capacity (simulated)")
        address = f"127.0.0.{20 + n}"
        server = sshd_mod.start_sshd(base / name, address, None, pub)
        state["servers"][name] = server
        SSHConfigHelper.add_cluster(name, name, [address], {"ssh_user": "root",
                                    "ssh_private_key": str(key)}, [server.port])
        itype, accs = instance_for[acc]
        return CloudVmRayResourceHandle(
            cluster_name=name, cluster_name_on_cloud=name, cluster_yaml=None, launched_nodes=1,
            launched_resources=sky.Resources(infra="aws/us-east-1", instance_type=itype,
                                             accelerators=accs),
            stable_internal_external_ips=[(address, address)], stable_ssh_ports=[server.port])

    def down(name):  # type: ignore[no-untyped-def]
        state["downed"].append(name)
        server = state["servers"].pop(name, None)
        if server is not None:
            server.stop()

    monkeypatch.setattr(skypilot, "launch_cluster", launch)
    monkeypatch.setattr(skypilot, "down_cluster", down)
    yield state
    for server in state["servers"].values():
        server.stop()
    shutil.rmtree(base, ignore_errors=True)


def _offers(s: SkyPilotSettings) -> dict[str, Any]:
    return {acc: skypilot.catalog_offers(s, acc)[0] for acc in s.accelerators}


def _probe(base: Path, sleep: float = 0.01) -> ProbeSettings:
    trainer = base / "trainer.py"
    trainer.write_text(TRAINER % sleep)
    os.chmod(trainer, 0o644)
    return ProbeSettings(command=f"python3 {trainer}", batch_sizes=[8], max_steps=10,
                         boundary_budget=0, adaptive_budget=0, timeout=120)


def _job(s: SkyPilotSettings, probe: ProbeSettings, log_dir: Path) -> ProbeJob:
    """The probe job on [skypilot] alone, as `probe --headless` makes it."""
    provider = sky_launch.SkyProvider(s, ssh_timeout=20, offers=_offers(s))
    session = Session(Board(Pricing(Catalog.embedded())), settings=probe)
    return ProbeJob(session, [], log_dir, [(provider, list(s.accelerators))])


def test_launch_probe_and_down_on_success(loopback, tmp_path) -> None:  # type: ignore[no-untyped-def]
    s = settings()
    job = _job(s, _probe(loopback["base"]), tmp_path / "logs")
    asyncio.run(job.run())
    board = job.session.board
    entries = {e.instance: e for e in board.entries.values()}
    assert set(entries) == {"g5.xlarge@aws/us-east-1", "g6.xlarge@aws/us-east-1"}
    for e in entries.values():
        assert e.status == "done", e.detail
        assert e.state.steps == 10
    assert entries["g6.xlarge@aws/us-east-1"].state.start.price_per_hour == 0.8048  # type: ignore[union-attr]
    launch = job.launch
    assert isinstance(launch, sky_launch.SkyLaunch)
    assert sorted(loopback["downed"]) == sorted(loopback["launched"]) == sorted(launch.asked)
    assert all(n.startswith(skypilot.cluster_prefix()) for n in launch.asked)
    assert job.session.adaptive is not None  # the session's run: the adaptive probe too
    assert f"torn down 2 SkyPilot cluster(s) of session {launch.session}" in job.summary()
    known = (tmp_path / "logs" / "known_hosts").read_text()
    assert known.count("ssh-ed25519") == 2  # trusted on first use, in the session's file only


def test_a_failed_launch_fails_alone_and_everything_is_downed(loopback, tmp_path) -> None:  # type: ignore[no-untyped-def]
    loopback["fail"].add("L4")
    job = _job(settings(), _probe(loopback["base"]), tmp_path / "logs")
    asyncio.run(job.run())
    status = {e.spec.key: (e.status, e.detail) for e in job.session.board.entries.values()}
    assert status["A10G:1-b8"][0] == "done", status
    assert status["L4:1-b8"][0] == "failed" and "launch failed" in status["L4:1-b8"][1]
    failed = next(lh for lh in job.launch.hosts if lh.host.name == "L4:1")  # type: ignore[union-attr]
    assert "no cloud could provide it now" in failed.error and "simulated" in failed.error
    # the one that never came up is downed too (SkyPilot keeps a failed launch for debugging)
    assert sorted(loopback["downed"]) == sorted(loopback["launched"]) and len(loopback["downed"]) == 2


def test_every_launch_failing_is_one_error_and_nothing_is_left(loopback, tmp_path) -> None:  # type: ignore[no-untyped-def]
    loopback["fail"].update({"A10G", "L4"})
    job = _job(settings(), _probe(loopback["base"]), tmp_path / "logs")
    with pytest.raises(skypilot.SkyPilotError, match="no cloud could provide it now"):
        asyncio.run(job.run())
    assert sorted(loopback["downed"]) == sorted(loopback["launched"]) and len(loopback["downed"]) == 2


def test_cancel_while_probing_downs_every_cluster(loopback, tmp_path) -> None:  # type: ignore[no-untyped-def]
    job = _job(settings(), _probe(loopback["base"], sleep=1.0), tmp_path / "logs")
    board = job.session.board

    async def main() -> None:
        task = asyncio.create_task(job.run())
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(
                e.state.steps for e in board.entries.values()):
            await asyncio.sleep(0.2)
        assert any(e.state.steps for e in board.entries.values()), "no probe got going"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert len(loopback["launched"]) == 2
    assert sorted(loopback["downed"]) == sorted(loopback["launched"])


def test_cancel_while_skypilot_provisions_downs_after_the_launch_ends(loopback, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Ctrl-C while sky.launch is still provisioning: the SDK call cannot be stopped from
    here, so the teardown waits for it and downs the cluster it made - never before."""
    s = settings(accelerators=["A10G:1"])
    inner = skypilot.launch_cluster  # the loopback launch
    order: list[str] = []
    provisioning = threading.Event()

    def slow_launch(task, name, minutes):  # type: ignore[no-untyped-def]
        provisioning.set()
        time.sleep(2)
        handle = inner(task, name, minutes)
        order.append("launched")
        return handle

    skypilot.launch_cluster = slow_launch  # restored by monkeypatch (the fixture set it)
    real_down = skypilot.down_cluster

    def down(name):  # type: ignore[no-untyped-def]
        order.append("down")
        real_down(name)

    skypilot.down_cluster = down
    job = _job(s, _probe(loopback["base"]), tmp_path / "logs")

    async def main() -> None:
        task = asyncio.create_task(job.run())
        assert await asyncio.to_thread(provisioning.wait, 30), "sky.launch was never called"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert order == ["launched", "down"] and loopback["servers"] == {}


# ---- the app: [skypilot] candidates picked, confirmed, probed live, downed --------------------


def _sky_app(loopback, tmp_path):  # type: ignore[no-untyped-def]
    from probecast.tui.main import make_live_app

    s = settings()
    probe = _probe(loopback["base"], sleep=0.2)  # the probes outlast the test's checks
    cfg = tmp_path / "probecast.toml"
    cfg.write_text('[skypilot]\naccelerators = ["A10G:1", "L4:1"]\ninfra = "aws/us-east-1"\n'
                   'python = "/usr/bin/python3"\nmax_spend = 10\n\n'
                   f'[probe]\ncommand = "{probe.command}"\nbatch_sizes = [8]\n'
                   'max_steps = 100000\n'
                   'boundary_budget = 0\nadaptive_budget = 0\n')
    return make_live_app(str(cfg), sky=sky_launch.SkyProvider(s, ssh_timeout=20,
                                                              offers=_offers(s)))


async def _pick_and_launch(app, pilot, loopback) -> None:  # type: ignore[no-untyped-def]
    from probecast.tui.screens.dialogs import ConfirmScreen

    rows = [str(k.value) for k in app.screen.query_one("#instances").rows]
    assert rows[:2] == ["A10G:1", "L4:1"]  # the candidates first (no [[hosts]]), to launch
    await pilot.press("space", "down", "space")
    assert app.screen.selected_sky == ["A10G:1", "L4:1"]
    assert "2 to launch" in str(app.screen.query_one("#summary").render())
    await pilot.press("s")
    await _wait(pilot, lambda: isinstance(app.screen, ConfirmScreen))
    question = str(app.screen.query_one("#question").render())
    assert "will launch 2 SkyPilot cluster(s) on aws/us-east-1: A10G:1, L4:1" in question
    assert "cap $10.00" in question and "sky down" in question
    assert loopback["launched"] == []  # nothing before the answer
    await pilot.press("y")


async def _wait(pilot, ok, seconds: float = 60) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not ok():
        assert time.monotonic() < deadline, "timed out"
        await pilot.pause(0.1)


async def test_the_app_launches_probes_ranks_and_downs_skypilot_candidates(loopback, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The app's start path, through the seam the headless tests use: [skypilot] candidates
    listed and picked, the confirm, the clusters probed live (the ranking fills in as they
    probe), and every cluster downed when the app quits mid-probe (the end of the probes downs
    them as the headless tests show: the same LaunchedHosts.run)."""
    from probecast.tui.screens.dialogs import ConfirmScreen

    monkeypatch.chdir(tmp_path)
    app = _sky_app(loopback, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await _pick_and_launch(app, pilot, loopback)
        board = app.session.board
        await _wait(pilot, lambda: app.launch is not None and len(board.entries) == 2
                    and all(e.state.steps >= 2 for e in board.entries.values()))
        assert {e.instance for e in board.entries.values()} == {"g5.xlarge@aws/us-east-1",
                                                               "g6.xlarge@aws/us-east-1"}
        assert loopback["downed"] == [] and len(loopback["launched"]) == 2
        caption = app.launch.caption("L4:1-b8")
        assert caption is not None and "g6.xlarge@aws/us-east-1" in caption
        assert "probing" in caption and "$" in caption  # priced from SkyPilot's catalog
        app.screen.refresh_view(force=True)  # type: ignore[attr-defined]
        await pilot.pause()
        ranked = app.screen._rows  # type: ignore[attr-defined]
        assert {r.instance for r in ranked.values()} == {"g5.xlarge@aws/us-east-1",
                                                         "g6.xlarge@aws/us-east-1"}
        await pilot.press("q")
        await _wait(pilot, lambda: isinstance(app.screen, ConfirmScreen), 10)
        assert "sky down" in str(app.screen.query_one("#question").render())
        await pilot.press("y")
        await _wait(pilot, lambda: not app.is_running, 30)
    assert sorted(loopback["downed"]) == sorted(loopback["launched"])
    assert len(loopback["downed"]) == 2
