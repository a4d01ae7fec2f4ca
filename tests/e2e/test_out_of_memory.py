"""Out of memory for real, on CPU: the probe's process runs under a memory limit (``prlimit
--as``, and a cgroup's where this machine lets us make one) so that the framework's own
allocator fails at a real batch size - through the local runner and the SSH runner - and ends
the probe `does-not-fit`, while the other probes go on and the ranking ranks the rest.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

import sshd as sshd_mod
from probecast.core.model.events import End, Log, Memory, read_log
from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing, RankOptions
from probecast.core.run.board import Board
from probecast.core.run.config import Host, ProbeSettings
from probecast.core.run.plan import plan_probes, run_plan

PY = sys.executable
PRLIMIT = shutil.which("prlimit")
pytestmark = [pytest.mark.skipif(PRLIMIT is None, reason="prlimit (util-linux) not installed")]

# A PyTorch CNN on 32x32 images, fed by a DataLoader: ~2 MB of activations and gradients a sample.
TRAINER = """
import sys, torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
bs = int(sys.argv[1])
torch.set_num_threads(1)
n = max(2 * bs, 256)
data = TensorDataset(torch.randn(n, 3, 32, 32), torch.randint(0, 10, (n,)))
model = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3, padding=1),
                      nn.ReLU(), nn.Flatten(), nn.Linear(64 * 32 * 32, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(50):
    for xb, yb in DataLoader(data, batch_size=bs, shuffle=True):
        opt.zero_grad()
        nn.functional.cross_entropy(model(xb), yb).backward()
        opt.step()
"""
LIMIT_MB = 3000  # address space: PyTorch itself needs ~1.1 GB of it, b16 ~1.2 GB, b4096 ~10 GB


def limited_python(tmp: Path, limit_mb: int = LIMIT_MB, python: str = PY) -> str:
    """A `python` for the host that runs under an address-space limit: the agent and the
    program it starts inherit it, as on a host with `ulimit -v`."""
    wrapper = tmp / f"python-{limit_mb}mb"
    wrapper.write_text(f"#!/bin/sh\nexec {PRLIMIT} --as={limit_mb * 2**20} -- {python} \"$@\"\n")
    wrapper.chmod(0o755)
    return str(wrapper)


def torch_settings(script: Path, batch_sizes: list[int]) -> ProbeSettings:
    return ProbeSettings(command=f"{PY} {script} {{batch_size}}", batch_sizes=batch_sizes,
                         max_steps=6, boundary_budget=0)


def trainer(tmp: Path) -> Path:
    script = tmp / "hungry.py"
    script.write_text(TRAINER)
    script.chmod(0o644)
    return script


def check_does_not_fit(board: Board, key: str, limit_mb: int) -> None:
    entry = board.entries[key]
    assert entry.status == "does-not-fit", (entry.status, entry.detail)
    assert entry.log_path is not None
    events, report = read_log(entry.log_path)
    assert not report.malformed and not report.truncated
    end = events[-1]
    assert isinstance(end, End) and end.status == "does-not-fit"  # the log ends with `end`
    assert end.reason.startswith(f"b{entry.batch_size} does not fit on cpu (address-space "
                                 f"limit {limit_mb} MB)"), end.reason
    assert "can't allocate memory" in end.reason or "out of memory" in end.reason.lower()
    assert any(isinstance(e, Log) and e.code == "out-of-memory" for e in events)
    mem = [e for e in events if isinstance(e, Memory)]
    assert mem and mem[-1].host_limit_mb == limit_mb and mem[-1].host_limit_kind == "address-space"
    assert mem[-1].host_vm_peak_mb is not None and mem[-1].host_vm_peak_mb > 0


def check_ranking(board: Board, fits: str, no_fit: str) -> None:
    ranking = board.ranking(RankOptions(epochs=3))
    assert [r.key for r in ranking.rows] == [fits]  # the one that fits is ranked
    (row,) = [r for rows in ranking.no_fit.values() for r in rows]
    assert row.key == no_fit and row.does_not_fit and row.memory is not None
    ranked = ranking.rows[0]
    assert ranked.memory is not None and ranked.memory.peak_mb and ranked.memory.fits


@pytest.mark.torch
@pytest.mark.timeout(300)
async def test_local_probe_out_of_memory_under_a_real_limit_does_not_fit_and_the_next_goes_on(
        tmp_path: Path) -> None:
    pytest.importorskip("torch")
    host = Host(name="small", instance="g5.xlarge", kind="local", python=limited_python(tmp_path))
    board = Board(Pricing(Catalog.embedded()))
    plan = plan_probes([host], torch_settings(trainer(tmp_path), [4096, 16]), tmp_path / "logs")
    await asyncio.wait_for(run_plan(board, plan), 240)
    check_does_not_fit(board, "small-b4096", LIMIT_MB)
    assert board.entries["small-b16"].status == "done"  # probed after it, on the same host
    check_ranking(board, "small-b16", "small-b4096")


@pytest.mark.tensorflow
@pytest.mark.timeout(300)
async def test_keras_out_of_memory_under_a_real_limit(tmp_path: Path) -> None:
    """TensorFlow's CPU allocator under an address-space limit: a ResourceExhaustedError ("OOM
    when allocating tensor"), or a crash where a thread's allocation fails first - either way
    the probe ends does-not-fit."""
    pytest.importorskip("tensorflow")
    limit = 4500  # TensorFlow maps ~2.5 GB of address space before it trains
    host = Host(name="small", instance="local", kind="local",
                python=limited_python(tmp_path, limit))
    settings = ProbeSettings(workload="mnist-cnn", batch_sizes=[16384, 64], max_steps=5,
                             boundary_budget=0, workload_args=["--train-size", "20000",
                                                               "--val-size", "1000"])
    board = Board(Pricing(Catalog.embedded()))
    await asyncio.wait_for(run_plan(board, plan_probes([host], settings, tmp_path / "logs")), 280)
    entry = board.entries["small-b16384"]
    assert entry.status == "does-not-fit", entry.detail
    assert entry.log_path is not None
    events, _ = read_log(entry.log_path)
    end = events[-1]
    assert isinstance(end, End) and end.status == "does-not-fit"
    assert end.reason.startswith(f"b16384 does not fit on cpu (address-space limit {limit} MB)")
    assert board.entries["small-b64"].status == "done"
    check_ranking(board, "small-b64", "small-b16384")


# ---- a cgroup's memory limit: the kernel's OOM killer -------------------------------------------

def memory_cgroup(limit_mb: int) -> Path | None:
    """A child memory cgroup of ours with a limit (v2 memory.max or v1 limit_in_bytes), or None
    where this machine does not let us make one."""
    from probecast.core.agent.limits import cgroup_dirs

    for version, here in cgroup_dirs():
        child = Path(here) / f"probecast-test-{uuid.uuid4().hex[:8]}"
        name = "memory.max" if version == 2 else "memory.limit_in_bytes"
        try:
            child.mkdir()
            (child / name).write_text(str(limit_mb * 2**20))
            return child
        except OSError:
            try:
                child.rmdir()
            except OSError:
                pass
            continue
    return None


@pytest.mark.torch
@pytest.mark.timeout(300)
async def test_the_oom_killer_in_a_cgroup_ends_the_probe_does_not_fit(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    cgroup = memory_cgroup(900)
    if cgroup is None:
        pytest.skip("cannot make a memory cgroup here (needs root and a writable cgroup fs)")
    try:
        wrapper = tmp_path / "python-in-cgroup"
        wrapper.write_text(f"#!/bin/sh\necho $$ > {cgroup}/cgroup.procs\nexec {PY} \"$@\"\n")
        wrapper.chmod(0o755)
        host = Host(name="box", instance="local", kind="local", python=str(wrapper))
        board = Board(Pricing(Catalog.embedded()))
        plan = plan_probes([host], torch_settings(trainer(tmp_path), [2048, 16]), tmp_path / "l")
        await asyncio.wait_for(run_plan(board, plan), 240)
        entry = board.entries["box-b2048"]
        assert entry.status == "does-not-fit", entry.detail
        assert entry.log_path is not None
        end = read_log(entry.log_path)[0][-1]
        assert isinstance(end, End) and end.status == "does-not-fit"
        assert end.reason.startswith("b2048 does not fit on cpu (limit 900 MB): killed by SIGKILL")
        assert end.exit_code == -9
        assert board.entries["box-b16"].status == "done"
    finally:
        for _ in range(50):  # its processes are gone once the probes ended
            try:
                cgroup.rmdir()
                break
            except OSError:
                await asyncio.sleep(0.1)


# ---- over SSH ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sshd_host():  # type: ignore[no-untyped-def]
    why = sshd_mod.available()
    if why is not None:
        pytest.skip(why)
    base = Path(tempfile.mkdtemp(prefix="probecast-mem-ssh-", dir="/tmp"))
    os.chmod(base, 0o755)
    client = sshd_mod.keygen(base / "client_ed25519")
    server = sshd_mod.start_sshd(base / "s", "127.0.0.9", None,
                                 client.with_suffix(".pub").read_text())
    known = base / "known_hosts"
    known.write_text(server.known_hosts_line())
    yield base, server, client, known
    server.stop()


@pytest.mark.torch
@pytest.mark.timeout(300)
async def test_ssh_probe_out_of_memory_under_a_real_limit(sshd_host, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("torch")
    base, server, client, known = sshd_host
    from probecast.core.run.ssh import SshRunner

    host = Host(name="remote", instance="g5.xlarge", address=server.address, port=server.port,
                user="root", identity_file=str(client), known_hosts=str(known),
                python=limited_python(base), keepalive_interval=1.0, connect_timeout=5.0)
    board = Board(Pricing(Catalog.embedded()))
    plan = plan_probes([host], torch_settings(trainer(base), [4096, 16]), tmp_path / "logs")
    await asyncio.wait_for(
        run_plan(board, plan, factory=lambda h, spec, p: SshRunner(h, spec, p, {h.name: h})), 240)
    check_does_not_fit(board, "remote-b4096", LIMIT_MB)
    assert board.entries["remote-b16"].status == "done"
    check_ranking(board, "remote-b16", "remote-b4096")


# ---- probe --find-batch-size under a real limit ------------------------------------------------

@pytest.mark.torch
@pytest.mark.timeout(600)
def test_find_batch_size_under_a_real_limit_finds_one_that_fits_whose_double_does_not(
        tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("torch")
    import re
    import subprocess

    python = limited_python(tmp_path, 2500)
    config = tmp_path / "probecast.toml"
    config.write_text(f'[[hosts]]\nname = "small"\nkind = "local"\npython = "{python}"\n\n'
                      '[probe]\nworkload = "torch-cnn"\nmax_steps = 3\nboundary_budget = 0\n'
                      'adaptive_budget = 0\n')  # memory, not timing: short probes
    out_dir = tmp_path / "logs"
    code, out, err = run_cli("probe", "--config", str(config), "--headless", "--find-batch-size",
                             "--out", str(out_dir))
    assert code == 0, out + err
    found = re.search(r"small: largest batch size that fits: b(\d+) - peak (\d+) MB of 2500 MB, "
                      r"margin (\d+)%.*; (\d+) probe\(s\)", out)
    assert found, out
    batch, probes = int(found[1]), int(found[4])
    assert int(found[3]) >= 10 and 2 <= probes <= 7  # the headroom kept, in few probes
    fit_log = out_dir / f"small-b{batch}.jsonl"
    end = read_log(fit_log)[0][-1]
    assert isinstance(end, End) and end.status == "probe-done"  # it fits: it trained
    assert "does not fit" in out or "forecast" in out  # the double's verdict is said
    # ... and its double does not: probed here under the same limit
    double = tmp_path / "double.jsonl"
    with open(double, "w") as fh:
        subprocess.run([python, "-m", "probecast.core.agent", "workload", "torch-cnn",
                        "--batch-size", str(2 * batch), "--max-steps", "3",
                        "--boundary-budget", "0"], stdout=fh, stderr=subprocess.DEVNULL,
                       timeout=300, check=False, cwd=tmp_path)
    end = read_log(double)[0][-1]
    assert isinstance(end, End) and end.status == "does-not-fit", end
