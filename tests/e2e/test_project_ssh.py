"""The project ships itself and is set up once per host: real OpenSSH servers on loopback, remote
users with fresh, empty homes, a script that exists only in a local git repository, and
`probecast probe --config ... --headless` as a user runs it."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import sshd as sshd_mod
from conftest import ROOT
from probecast.core.model.events import End, Step, read_log

pytestmark = pytest.mark.skipif(sshd_mod.available() is not None,
                                reason=sshd_mod.available() or "")

# Fresh users, empty homes with nothing of probecast in them; named for this process, so that
# another suite on this machine, making and removing its own, never removes ours.
USERS = (f"pcproja{os.getpid()}", f"pcprojb{os.getpid()}")
SECRET = "s3cret-token-value"

TRAIN = """
import argparse, os, sys, time
from probecast_agent import StepTimer
from helpers import work              # a module of the project: found only in its copy

p = argparse.ArgumentParser()
p.add_argument("--batch-size", type=int, required=True)
args = p.parse_args()
print("greeting:", os.environ["GREETING"], "token:", os.environ["TOKEN"], flush=True)
rows = open("data/points.csv").read().splitlines()   # project data, relative to the copy
timer = StepTimer(steps_per_epoch=len(rows), batch_size=args.batch_size, epochs=3,
                  framework="plain")
for epoch in timer.epochs(range(3)):
    for row in timer.steps(rows, epoch):
        work(row, args.batch_size)
    timer.epoch_end(epoch, {})
timer.finish()
"""
HELPERS = "import time\n\ndef work(row, batch_size):\n    time.sleep(0.002)\n"
SETUP = """#!/bin/sh
# what a real setup does: an environment, here a venv (no pip: seconds matter), and a record
set -e
echo "setup in $(pwd) as $(id -un); token=$TOKEN greeting=$GREETING"
echo ran >> "$HOME/setup-count"
if [ "$(id -un)" = {user_b} ] && [ -e "$HOME/break-setup" ]; then
    echo "ERROR: libfoo-dev is not installed on this host" >&2
    exit 3
fi
/usr/bin/python3 -m venv --without-pip .venv
""".replace("{user_b}", USERS[1])


def _fresh_user(name: str) -> Path:
    subprocess.run(["pkill", "-KILL", "-u", name], capture_output=True)
    subprocess.run(["userdel", "-r", name], capture_output=True)
    subprocess.run(["useradd", "-m", "-s", "/bin/sh", name], check=True)
    subprocess.run(["usermod", "-p", "*", name], check=True)
    home = Path(pwd.getpwnam(name).pw_dir)
    assert sorted(p.name for p in home.iterdir() if not p.name.startswith(".")) == []
    return home


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                   check=True, capture_output=True)


@pytest.fixture(scope="module")
def world():  # type: ignore[no-untyped-def]
    base = Path(tempfile.mkdtemp(prefix="probecast-project-", dir="/tmp"))
    os.chmod(base, 0o755)
    homes = {u: _fresh_user(u) for u in USERS}
    client = sshd_mod.keygen(base / "client_ed25519")
    ak = client.with_suffix(".pub").read_text()
    a = sshd_mod.start_sshd(base / "a", "127.0.0.7", None, ak)
    b = sshd_mod.start_sshd(base / "b", "127.0.0.8", None, ak)
    known = base / "known_hosts"
    known.write_text(a.known_hosts_line() + b.known_hosts_line())
    yield {"base": base, "homes": homes, "client": client, "known": known, "a": a, "b": b}
    a.stop()
    b.stop()
    for u in USERS:
        subprocess.run(["pkill", "-KILL", "-u", u], capture_output=True)
        subprocess.run(["userdel", "-r", u], capture_output=True)
    shutil.rmtree(base, ignore_errors=True)


def make_repo(path: Path) -> Path:
    """A local git repository: the only place train.py exists."""
    (path / "data").mkdir(parents=True)
    (path / "train.py").write_text(TRAIN)
    (path / "helpers.py").write_text(HELPERS)
    (path / "setup.sh").write_text(SETUP)
    (path / "data" / "points.csv").write_text("".join(f"{i},{i * i}\n" for i in range(40)))
    (path / ".gitignore").write_text("*.ckpt\nwandb/\n")
    (path / "model.ckpt").write_bytes(b"\0" * 300_000)  # ignored by git: never goes
    (path / "wandb").mkdir()
    (path / "wandb" / "run.log").write_text("ignored\n")
    _git(path, "init", "-q")
    _git(path, "add", "-A")
    _git(path, "commit", "-q", "-m", "job")
    (path / "notes.txt").write_text("untracked, not ignored: goes\n")
    return path


def write_config(world, tmp: Path, repo: Path, **probe: str) -> Path:  # type: ignore[no-untyped-def]
    hosts = ""
    for name, user in {"a": USERS[0], "b": USERS[1]}.items():
        address, port = world[name].address, world[name].port
        hosts += (f'[[hosts]]\nname = "{name}"\ninstance = "g5.xlarge"\naddress = "{address}"\n'
                  f'port = {port}\nuser = "{user}"\nidentity_file = "{world["client"]}"\n'
                  f'known_hosts = "{world["known"]}"\npython = "/usr/bin/python3"\n')
    settings = {"project": json.dumps(str(repo)), "setup": '"sh setup.sh"',
                "command": '".venv/bin/python train.py --batch-size {batch_size}"',
                "batch_sizes": "[8, 16]", "max_steps": "12", "boundary_budget": "0",
                "adaptive_budget": "0", **probe}
    cfg = tmp / "probecast.toml"
    cfg.write_text(hosts + "[probe]\n" + "".join(f"{k} = {v}\n" for k, v in settings.items())
                   + '[probe.env]\nGREETING = "hello"\nTOKEN = {from_env = "PC_TEST_TOKEN"}\n')
    return cfg


def probe(cfg: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PC_TEST_TOKEN": SECRET}
    return subprocess.run([sys.executable, "-m", "probecast.tui", "probe", "--config", str(cfg),
                           "--headless", "--out", str(out), *extra], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def copies(home: Path) -> list[Path]:
    root = home / ".cache" / "probecast" / "projects"
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.endswith(".leases")) \
        if root.exists() else []


def test_project_is_copied_set_up_once_per_host_and_sent_again_only_when_changed(world, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo(tmp_path / "job")
    for home in world["homes"].values():
        (home / "setup-count").unlink(missing_ok=True)
    cfg = write_config(world, tmp_path, repo, keep_project="true")

    first = probe(cfg, tmp_path / "run1")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "project " in first.stdout and "6 files" in first.stdout  # said before it goes
    logs = tmp_path / "run1"
    for host in ("a", "b"):
        for b in (8, 16):
            events, report = read_log(logs / f"{host}-b{b}.jsonl")
            assert isinstance(events[-1], End) and events[-1].status == "probe-done", events[-1]
            assert len([e for e in events if isinstance(e, Step)]) == 12
            output = (logs / f"{host}-b{b}.output").read_text()
            assert "greeting: hello token: ***" in output  # env reached the command, masked
        # setup: once per host for its two batch sizes, in the copy, recorded beside the logs
        home = world["homes"][USERS["ab".index(host)]]
        assert (home / "setup-count").read_text() == "ran\n"
        setup = json.loads((logs / f"{host}.setup.json").read_text())
        assert setup["exit_status"] == 0 and setup["seconds"] > 0
        assert setup["env"] == ["GREETING", "TOKEN"] and setup["command"] == "sh setup.sh"
        assert "token=*** greeting=hello" in (logs / f"{host}.setup.output").read_text()
        shipped = json.loads((logs / f"{host}.project.json").read_text())
        assert shipped["source"] == "git" and shipped["files"] == 6
        assert shipped["sent_files"] == 6 and shipped["sent_bytes"] > 0
        # what git would track went (untracked-but-not-ignored included), the ignored did not
        [copy] = copies(home)
        assert copy.name.startswith("job-") and str(copy) == shipped["remote_dir"]
        assert sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*")
                      if p.is_file() and not {".venv", "__pycache__"} & set(p.parts)) == [
            ".gitignore", ".probecast-manifest.json", "data/points.csv", "helpers.py",
            "notes.txt", "setup.sh", "train.py"]
    for f in logs.rglob("*"):  # the secret is nowhere beside the logs
        assert SECRET not in f.read_text(errors="replace"), f
    sent_first = json.loads((logs / "a.project.json").read_text())["sent_bytes"]

    # the same project again: kept on the host, so nothing is sent; setup runs again (a session)
    second = probe(cfg, tmp_path / "run2")
    assert second.returncode == 0, second.stdout + second.stderr
    again = json.loads((tmp_path / "run2" / "a.project.json").read_text())
    assert (again["sent_files"], again["sent_bytes"]) == (0, 0)
    assert "nothing sent" in second.stdout
    assert (world["homes"][USERS[0]] / "setup-count").read_text() == "ran\nran\n"

    # one file changed, one removed: only the change goes, into the same (renamed) copy
    (repo / "helpers.py").write_text(HELPERS + "# tuned\n")
    (repo / "notes.txt").unlink()
    third = probe(cfg, tmp_path / "run3", "--batch-size", "8")
    assert third.returncode == 0, third.stdout + third.stderr
    delta = json.loads((tmp_path / "run3" / "a.project.json").read_text())
    assert (delta["sent_files"], delta["removed_files"], delta["files"]) == (1, 1, 5)
    assert 0 < delta["sent_bytes"] < sent_first
    [copy] = copies(world["homes"][USERS[0]])
    assert copy.name == f"job-{delta['digest']}" and not (copy / "notes.txt").exists()
    assert (copy / "helpers.py").read_text().endswith("# tuned\n")
    assert (copy / ".venv").is_dir()  # what setup made in the copy stays with it (kept)
    print(f"\nbytes sent: first run {sent_first}, second run {again['sent_bytes']}, "
          f"after one change {delta['sent_bytes']}")

    # without keep_project the copy is removed at the end
    cfg = write_config(world, tmp_path, repo, keep_project="false")
    fourth = probe(cfg, tmp_path / "run4", "--batch-size", "8")
    assert fourth.returncode == 0, fourth.stdout + fourth.stderr
    assert copies(world["homes"][USERS[0]]) == [] and copies(world["homes"][USERS[1]]) == []


@pytest.mark.faults("setup fails on one host",
                    checks="that host's probes fail with setup's last lines; the other host probes")
def test_a_failing_setup_fails_only_that_hosts_probes(world, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo(tmp_path / "job")
    broken = world["homes"][USERS[1]] / "break-setup"
    broken.touch()
    try:
        cfg = write_config(world, tmp_path, repo)
        r = probe(cfg, tmp_path / "logs")
    finally:
        broken.unlink()
    assert r.returncode == 0, r.stdout + r.stderr  # host a's probes estimated
    logs = tmp_path / "logs"
    assert sorted(p.name for p in logs.glob("*.jsonl")) == ["a-b16.jsonl", "a-b8.jsonl"]
    for b in (8, 16):
        line = next(ln for ln in r.stderr.splitlines() if f"b b{b}: failed" in ln)
        assert "setup failed on b (exit 3" in line
        assert "libfoo-dev is not installed" in line and "b.setup.output" in line
    setup = json.loads((logs / "b.setup.json").read_text())
    assert setup["exit_status"] == 3
    assert "libfoo-dev" in (logs / "b.setup.output").read_text()
    assert "Ranking" in r.stdout and "prepared b: " in r.stdout
    assert copies(world["homes"][USERS[1]]) == []  # removed at the end, failure or not


def test_a_project_over_the_limit_is_refused_before_anything_starts(world, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo(tmp_path / "job")
    (repo / "weights.bin").write_bytes(os.urandom(1_200_000))  # untracked, not ignored
    cfg = write_config(world, tmp_path, repo, project_limit_mb="1")
    r = probe(cfg, tmp_path / "logs")
    assert r.returncode != 0
    assert "over the limit of 1 MB" in r.stderr and "weights.bin 1.2 MB" in r.stderr
    assert not list((tmp_path / "logs").glob("*.jsonl"))
