"""The dead-man timer's own script, run for real with the shutdown command replaced."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from probecast.core.cloud.deadman import deadman_script, extend_command


def start(tmp: Path, seconds: int) -> tuple[Path, Path]:
    deadline = tmp / "deadline"
    fired = tmp / "fired"
    script = tmp / "user-data.sh"
    script.write_text(deadman_script(seconds, str(deadline), f"touch {fired}", interval=0.2))
    subprocess.run(["bash", str(script)], check=True, timeout=10)
    return deadline, fired


def wait_for(path: Path, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if path.exists():
            return True
        time.sleep(0.1)
    return False


@pytest.fixture(autouse=True)
def _stop_loops(tmp_path):  # type: ignore[no-untyped-def]
    yield
    subprocess.run(["pkill", "-f", str(tmp_path)], check=False)


@pytest.mark.faults('dead-man deadline reached',
                    checks='shuts down on time; file 0600')
def test_fires_on_time_and_the_file_is_roots_alone(tmp_path: Path) -> None:
    # deadlines are whole seconds of `date +%s`: one of N seconds falls N-1 to N seconds on
    deadline, fired = start(tmp_path, 3)
    assert oct(deadline.stat().st_mode & 0o777) == "0o600"
    assert not fired.exists()
    assert wait_for(fired, 60)  # 60 s bounds a loaded machine, not the timer


@pytest.mark.faults('dead-man deadline pushed back',
                    checks='waits')
def test_pushed_back_it_waits(tmp_path: Path) -> None:
    # the first deadline lies 4-5 s on (whole seconds of `date +%s`), time enough for the push
    # on a loaded machine: a deadline of 1 s can fall due a few ms after the start
    deadline, fired = start(tmp_path, 5)
    subprocess.run(["bash", "-c", extend_command(1, str(deadline))], check=True)  # +60 s
    assert int(deadline.read_text()) >= time.time() + 50
    assert oct(deadline.stat().st_mode & 0o777) == "0o600"
    assert not wait_for(fired, 6.5)  # past the first deadline (<= 5 s) and a loop turn


@pytest.mark.faults('dead-man file empty / truncated / not a number / missing',
                    checks='last good deadline kept; still fires')
@pytest.mark.parametrize("damage", ["missing", "empty", "truncated", "garbage"])
def test_an_unreadable_deadline_keeps_the_last_good_one(tmp_path: Path, damage: str) -> None:
    deadline, fired = start(tmp_path, 2)
    time.sleep(0.5)  # the loop has read the good deadline once
    if damage == "missing":
        deadline.unlink()
    else:
        deadline.write_text({"empty": "", "truncated": "17", "garbage": "soon\n"}[damage])
    # "17" is a deadline long past: it fires at once; the others keep the last good one
    assert wait_for(fired, 60)


def test_extend_writes_atomically_with_sudo_for_other_users() -> None:
    cmd = extend_command(45, "/var/run/x")
    assert "mv -f" in cmd and "sudo -n" in cmd and "chmod 600" in cmd
    assert os.path.basename("/var/run/x") in cmd
