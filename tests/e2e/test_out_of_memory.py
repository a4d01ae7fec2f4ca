"""Out of memory for real, on CPU: the probe's process runs under a memory limit (``prlimit
--as``, and a cgroup's where this machine lets us make one) so that the framework's own
allocator fails at a real batch size - through the local runner and the SSH runner - and ends
the probe `does-not-fit`, while the other probes go on and the ranking ranks the rest.

No limit here is a number tuned on one machine: each is set from a baseline measured in the test
(the same job at a small batch size, without a limit), and every probe runs pinned - one thread
per library, one malloc arena - so that the baseline and the limited run map memory alike. (An
arena is 64 MB of address space, and each thread may get one: unpinned, the floor moves with the
number of cores.) The tests pass pinned to one core (``taskset -c 0``) as on many.
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
from probecast.core.model.memory.batch_search import Search
from probecast.core.model.memory.forecast import HEADROOM
from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing, RankOptions
from probecast.core.run.board import Board
from probecast.core.run.config import Host, ProbeSettings
from probecast.core.run.probe_plan import plan_probes, run_plan

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
# One thread per library and one malloc arena, in the agent and the program it starts. TensorFlow's
# own CPU kernels, not oneDNN's: pinned to one core, oneDNN's convolution failed its allocation as
# "could not create a primitive" (exit 1, peak at the limit) or crashed - not an out-of-memory
# error the agent recognises (the agent's gap, not this test's); TensorFlow's allocator says
# "OOM when allocating tensor" on any number of cores.
PINNED = {"MALLOC_ARENA_MAX": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
          "OPENBLAS_NUM_THREADS": "1", "TF_NUM_INTRAOP_THREADS": "1", "TF_NUM_INTEROP_THREADS": "1",
          "TF_ENABLE_ONEDNN_OPTS": "0"}


def limited_python(tmp: Path, limit_mb: int | None, python: str = PY) -> str:
    """A pinned `python` for the host, under an address-space limit (None: none): the agent
    and the program it starts inherit both, as on a host with `ulimit -v`."""
    env = " ".join(f"{k}={v}" for k, v in PINNED.items())
    limit = f"{PRLIMIT} --as={limit_mb * 2**20} -- " if limit_mb else ""
    wrapper = tmp / f"python-{limit_mb or 'unlimited'}mb"
    wrapper.write_text(f"#!/bin/sh\nexec env {env} {limit}{python} \"$@\"\n")
    wrapper.chmod(0o755)
    return str(wrapper)


def last_memory(log: Path) -> Memory | None:
    mem = [e for e in read_log(log)[0] if isinstance(e, Memory)]
    return mem[-1] if mem else None


def baseline(tmp: Path, settings: ProbeSettings, batch_size: int) -> Memory:
    """What the job maps and holds at a small batch size, pinned, without a limit: the floor
    the limits here are set from."""
    host = Host(name="baseline", instance="local", kind="local", python=limited_python(tmp, None))
    settings = settings.copy()
    settings.batch_sizes = [batch_size]
    board = Board(Pricing(Catalog.embedded()))
    asyncio.run(asyncio.wait_for(run_plan(board, plan_probes([host], settings, tmp / "base")), 240))
    (entry,) = board.entries.values()
    assert entry.status == "done" and entry.log_path is not None, (entry.status, entry.detail)
    mem = last_memory(entry.log_path)
    assert mem is not None and mem.host_vm_peak_mb and mem.host_peak_mb, mem
    return mem


@pytest.fixture(scope="module")
def torch_floor(tmp_path_factory: pytest.TempPathFactory) -> Memory:
    """The hungry trainer at b16."""
    pytest.importorskip("torch")
    tmp = tmp_path_factory.mktemp("torch-floor")
    return baseline(tmp, torch_settings(trainer(tmp), [16]), 16)


def twice(floor: Memory) -> int:
    """The address-space limit for the trainer's tests: twice b16's peak, so b16 fits with
    room to spare and b4096 (~2 MB a sample, several GB more) does not, on any machine."""
    assert floor.host_vm_peak_mb is not None
    return int(2 * floor.host_vm_peak_mb)


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
    assert ranked.memory is not None and ranked.memory.peak_mb and not ranked.memory.ran_out


@pytest.mark.torch
@pytest.mark.timeout(300)
async def test_local_probe_out_of_memory_under_a_real_limit_does_not_fit_and_the_next_goes_on(
        tmp_path: Path, torch_floor: Memory) -> None:
    limit = twice(torch_floor)
    host = Host(name="small", instance="g5.xlarge", kind="local",
                python=limited_python(tmp_path, limit))
    board = Board(Pricing(Catalog.embedded()))
    plan = plan_probes([host], torch_settings(trainer(tmp_path), [4096, 16]), tmp_path / "logs")
    await asyncio.wait_for(run_plan(board, plan), 240)
    check_does_not_fit(board, "small-b4096", limit)
    assert board.entries["small-b16"].status == "done"  # probed after it, on the same host
    check_ranking(board, "small-b16", "small-b4096")


def keras_settings(batch_sizes: list[int]) -> ProbeSettings:
    return ProbeSettings(workload="mnist-cnn", batch_sizes=batch_sizes, max_steps=5,
                         boundary_budget=0, workload_args=["--train-size", "20000",
                                                           "--val-size", "1000"])


@pytest.fixture
def keras_floor(tmp_path_factory: pytest.TempPathFactory) -> Memory:
    """The Keras workload at b64 (TensorFlow maps 1.5-2.5 GB of address space before it
    trains, more with more threads)."""
    pytest.importorskip("tensorflow")
    return baseline(tmp_path_factory.mktemp("keras-floor"), keras_settings([64]), 64)


@pytest.mark.tensorflow
@pytest.mark.timeout(400)
async def test_keras_out_of_memory_under_a_real_limit(tmp_path: Path, keras_floor: Memory) -> None:
    """TensorFlow's CPU allocator under an address-space limit: a ResourceExhaustedError ("OOM
    when allocating tensor"), or a crash where a thread's allocation fails first - either way
    the probe ends does-not-fit. The limit is twice b64's peak: b16384 needs ~10 GB more."""
    assert keras_floor.host_vm_peak_mb is not None
    limit = int(2 * keras_floor.host_vm_peak_mb)
    host = Host(name="small", instance="local", kind="local",
                python=limited_python(tmp_path, limit))
    settings = keras_settings([16384, 64])
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
async def test_the_oom_killer_in_a_cgroup_ends_the_probe_does_not_fit(
        tmp_path: Path, torch_floor: Memory) -> None:
    """The cgroup's limit counts memory held, not mapped: twice what b16 held (the agent and
    the trainer together); b2048 needs ~4 GB."""
    assert torch_floor.host_peak_mb is not None
    limit = int(2 * torch_floor.host_peak_mb)
    cgroup = memory_cgroup(limit)
    if cgroup is None:
        pytest.skip("cannot make a memory cgroup here (needs root and a writable cgroup fs)")
    try:
        wrapper = tmp_path / "python-in-cgroup"
        env = " ".join(f"{k}={v}" for k, v in PINNED.items())
        wrapper.write_text(f"#!/bin/sh\necho $$ > {cgroup}/cgroup.procs\n"
                           f"exec env {env} {PY} \"$@\"\n")
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
        assert end.reason.startswith(f"b2048 does not fit on cpu (limit {limit} MB): killed by "
                                     "SIGKILL"), end.reason
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
    shutil.rmtree(base, ignore_errors=True)


@pytest.mark.torch
@pytest.mark.timeout(300)
async def test_ssh_probe_out_of_memory_under_a_real_limit(sshd_host, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                          torch_floor: Memory) -> None:
    limit = twice(torch_floor)
    base, server, client, known = sshd_host
    from probecast.core.run.ssh import SshRunner

    host = Host(name="remote", instance="g5.xlarge", address=server.address, port=server.port,
                user="root", identity_file=str(client), known_hosts=str(known),
                python=limited_python(base, limit), keepalive_interval=1.0,
                connect_timeout=5.0)
    board = Board(Pricing(Catalog.embedded()))
    plan = plan_probes([host], torch_settings(trainer(base), [4096, 16]), tmp_path / "logs")
    await asyncio.wait_for(
        run_plan(board, plan, factory=lambda h, spec, p: SshRunner(h, spec, p, {h.name: h})), 240)
    check_does_not_fit(board, "remote-b4096", limit)
    assert board.entries["remote-b16"].status == "done"
    check_ranking(board, "remote-b16", "remote-b4096")


# ---- probe --find-batch-size under a real limit ------------------------------------------------

FIND_ROOM_MB = 400  # above torch-cnn's floor: its answer is ~300-400 (0.5-0.7 MB a sample), far under the cap


def cnn_settings(batch_sizes: list[int]) -> ProbeSettings:
    return ProbeSettings(workload="torch-cnn", batch_sizes=batch_sizes, max_steps=3,
                         boundary_budget=0, adaptive_budget=0)


@pytest.fixture
def cnn_floor(tmp_path_factory: pytest.TempPathFactory) -> Memory:
    pytest.importorskip("torch")
    return baseline(tmp_path_factory.mktemp("cnn-floor"), cnn_settings([8]), 8)


def probe_sequence(logs: Path) -> str:
    """Each probe the search ran, in order: its batch size, how it ended, its peak - said when
    an assertion fails, so a search that went another way on another machine shows how."""
    lines = []
    for log in sorted(logs.glob("*.jsonl"), key=lambda p: p.stat().st_mtime_ns):
        events = read_log(log)[0]
        end, mem = events[-1], last_memory(log)
        status = end.status if isinstance(end, End) else "no end"
        peak = f"{mem.host_vm_peak_mb:.0f}" if mem is not None and mem.host_vm_peak_mb else "?"
        lines.append(f"  {log.stem}: {status}, address-space peak {peak} MB")
    return "probes, in order:\n" + "\n".join(lines)


def does_not_fit_with_the_headroom(log: Path, limit_mb: int) -> bool:
    """What the search means by not fitting: out of memory, or a peak over the limit less the
    headroom."""
    end, mem = read_log(log)[0][-1], last_memory(log)
    if isinstance(end, End) and end.status == "does-not-fit":
        return True
    peak = mem.host_vm_peak_mb if mem is not None else None
    return peak is not None and peak > limit_mb * (1 - HEADROOM)


@pytest.mark.torch
@pytest.mark.timeout(600)
def test_find_batch_size_under_a_real_limit_finds_one_that_fits_whose_double_does_not(
        tmp_path: Path, run_cli, cnn_floor: Memory) -> None:  # type: ignore[no-untyped-def]
    """The property, not one machine's path to it: the answer fits with the headroom, its
    double does not, within the search's own probe count. How many probes it takes depends
    on where the peaks land (they move in steps of an arena, larger than the search's aim)."""
    import re
    import subprocess

    assert cnn_floor.host_vm_peak_mb is not None
    limit = int(cnn_floor.host_vm_peak_mb) + FIND_ROOM_MB
    python = limited_python(tmp_path, limit)
    config = tmp_path / "probecast.toml"
    config.write_text(f'[[hosts]]\nname = "small"\nkind = "local"\npython = "{python}"\n\n'
                      '[probe]\nworkload = "torch-cnn"\nmax_steps = 3\nboundary_budget = 0\n'
                      'adaptive_budget = 0\n')  # memory, not timing: short probes
    out_dir = tmp_path / "logs"
    code, out, err = run_cli("probe", "--config", str(config), "--headless", "--find-batch-size",
                             "--out", str(out_dir))
    said = f"{out}{err}\n{probe_sequence(out_dir)}"
    assert code == 0, said
    found = re.search(rf"small: largest batch size that fits: b(\d+) - peak (\d+) MB of {limit} "
                      r"MB, margin (\d+)%.*; (\d+) probe\(s\)", out)
    assert found, said
    batch, peak, margin, probes = (int(g) for g in found.groups())
    assert 2 <= probes <= Search().max_probes, said  # within the search's own cap
    assert margin >= round(HEADROOM * 100) and peak <= limit * (1 - HEADROOM) + 1, said
    end = read_log(out_dir / f"small-b{batch}.jsonl")[0][-1]
    assert isinstance(end, End) and end.status == "probe-done", said  # it fits: it trained
    assert "does not fit" in out or "forecast" in out, said  # the double's verdict is said
    # ... and its double does not: probed here under the same limit
    double = tmp_path / "double.jsonl"
    with open(double, "w") as fh:
        subprocess.run([python, "-m", "probecast.core.agent", "workload", "torch-cnn",
                        "--batch-size", str(2 * batch), "--max-steps", "3",
                        "--boundary-budget", "0"], stdout=fh, stderr=subprocess.DEVNULL,
                       timeout=300, check=False, cwd=tmp_path)
    assert does_not_fit_with_the_headroom(double, limit), (
        f"b{2 * batch}: {read_log(double)[0][-1]}, {last_memory(double)}\n{said}")
