"""Your own command on the command line, end to end: `probecast probe [--local | --host ...]
-b N -b M -- COMMAND` started as a user starts it (the console script's module, in a directory
holding only the training script, no config file anywhere), on this machine and through a real
OpenSSH server reached the way ssh reaches it (~/.ssh/config, the default key, known_hosts)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

import sshd as sshd_mod

# A plain timed loop (no framework to start: seconds of CI, not minutes): argparse's
# --batch-size as public scripts take it, a step that takes longer for a larger batch.
TRAINER = """
import argparse, time
from probecast_agent import StepTimer
parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int, required=True)
args = parser.parse_args()
probe = StepTimer(steps_per_epoch=40, val_steps=2, batch_size=args.batch_size, epochs=3,
                  framework="plain")
for epoch in range(3):
    for _ in probe.steps(range(40), epoch):
        time.sleep(args.batch_size / 2000)
    if probe.stopped:
        break
    with probe.validation(epoch, steps=2):
        time.sleep(0.005)
    probe.epoch_end(epoch, {"val_accuracy": 0.5})
probe.finish()
"""
COMMAND = ["--", "python3", "train.py", "--batch-size", "{batch_size}"]


def probecast(args: list[str], cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """The console script as a user runs it, with a home of its own: no config, keys or known
    hosts of this machine's user are read."""
    env = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}  # no ssh-agent's keys
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return subprocess.run([sys.executable, "-m", "probecast.tui", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def ranked(r: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    assert r.returncode == 0, r.stderr[-3000:]
    rows: list[dict[str, Any]] = json.loads(r.stdout)  # --json: the ranking alone on stdout
    assert rows and all(row["runtime_s"] > 0 and row["runtime_low_s"] > 0 for row in rows), rows
    return rows


def test_local_command_two_batch_sizes_no_config_ranked(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    (work / "train.py").write_text(TRAINER)  # found relative to the working directory
    r = probecast(["probe", "--local", "--json", "-b", "8", "-b", "16", "--max-steps", "6",
                   "--save-config", "probecast-own.toml", *COMMAND], work, home)
    rows = ranked(r)
    assert sorted(row["batch_size"] for row in rows) == [8, 16]
    assert {row["instance"] for row in rows} == {"local"}
    assert "from the command line" in r.stderr
    # the default log directory, in the directory the command ran from
    logs = sorted(p.relative_to(work).parts for p in work.glob("probecast-logs/*/*.jsonl"))
    assert [(parts[0], parts[2]) for parts in logs] == [("probecast-logs", "local-b16.jsonl"),
                                                        ("probecast-logs", "local-b8.jsonl")]
    # --save-config wrote the config, then probed; nothing else was written or read
    assert sorted(p.name for p in work.iterdir()) == ["probecast-logs", "probecast-own.toml",
                                                       "train.py"]
    saved = (work / "probecast-own.toml").read_text()
    assert 'command = "python3 train.py --batch-size {batch_size}"' in saved
    assert "batch_sizes = [8, 16]" in saved and "max_steps = 6" in saved


def test_a_probe_that_stops_a_program_says_the_checkpoint_it_left_in_its_folder(
        tmp_path: Path) -> None:
    """The program saves a checkpoint after each epoch where it runs; its probes stop it after
    the first. The run's summary says, once for both batch sizes, what they left there - a
    user who trains next in that folder would resume from it - and the ranking's notes too."""
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    saves = TRAINER.replace('probe.epoch_end(epoch, {"val_accuracy": 0.5})',
                            'probe.epoch_end(epoch, {"val_accuracy": 0.5})\n'
                            '    open("last.ckpt", "w").write(str(epoch))')
    assert saves != TRAINER
    (work / "train.py").write_text(saves)
    r = probecast(["probe", "--local", "-b", "8", "-b", "16", "--max-steps", "6", *COMMAND],
                  work, home)
    assert r.returncode == 0, r.stderr[-3000:]
    said = [line for line in r.stdout.splitlines() if "left 1 file(s)" in line]
    assert len(said) == 1 and "last.ckpt" in said[0] and "b8" in said[0] and "b16" in said[0], \
        r.stdout
    assert (work / "last.ckpt").exists()  # said, never deleted


pytestmark_ssh = pytest.mark.skipif(sshd_mod.available() is not None,
                                    reason=sshd_mod.available() or "")


@pytest.fixture
def ssh_home():  # type: ignore[no-untyped-def]
    """A user's home as OpenSSH leaves it: ~/.ssh/id_ed25519 (the key ssh tries by default),
    known_hosts holding the server's key, and a config alias - and the server itself, letting
    that key in as root and as the test user."""
    sshd_mod.ensure_test_user()
    base = Path(tempfile.mkdtemp(prefix="probecast-own-", dir="/tmp"))
    os.chmod(base, 0o755)  # the test user's probes read the training script here
    home = base / "home"
    dot_ssh = home / ".ssh"
    dot_ssh.mkdir(parents=True)
    key = sshd_mod.keygen(dot_ssh / "id_ed25519")
    server = sshd_mod.start_sshd(base / "sshd", "127.0.0.11", None,
                                 key.with_suffix(".pub").read_text())
    (dot_ssh / "known_hosts").write_text(server.known_hosts_line())
    (dot_ssh / "config").write_text(f"Host trainbox\n  HostName {server.address}\n"
                                    f"  Port {server.port}\n  User {sshd_mod.TEST_USER}\n")
    work = base / "work"
    work.mkdir()
    (work / "train.py").write_text(TRAINER)
    os.chmod(work / "train.py", 0o644)
    yield {"home": home, "work": work, "server": server}
    server.stop()
    shutil.rmtree(base, ignore_errors=True)


@pytestmark_ssh
def test_ssh_hosts_as_ssh_finds_them_two_batch_sizes_ranked(ssh_home) -> None:  # type: ignore[no-untyped-def]
    server, work = ssh_home["server"], ssh_home["work"]
    # user@HOST:PORT, and an ~/.ssh/config alias (its HostName, Port and User); the command
    # runs in the login directory there, so it names the script by its path
    command = ["--", "python3", str(work / "train.py"), "--batch-size", "{batch_size}"]
    r = probecast(["probe", "--host", f"root@{server.address}:{server.port}", "--host",
                   "trainbox", "--json", "-b", "8", "-b", "16", "--max-steps", "6", *command],
                  work, ssh_home["home"])
    rows = ranked(r)
    by_host = sorted((row["instance"], row["batch_size"]) for row in rows)
    here = f"{server.address}:{server.port}"
    assert by_host == [(here, 8), (here, 16), ("trainbox", 8), ("trainbox", 16)]
    assert not (work / "probecast.toml").exists()
    # the alias logged in as its ~/.ssh/config User, the other as the user its spec names
    assert "Accepted publickey for root" in server.log
    assert f"Accepted publickey for {sshd_mod.TEST_USER}" in server.log
