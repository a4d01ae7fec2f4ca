"""Faults a user's worst day brings, injected for real: a disk that fills mid-probe (tmpfs), ...

Each test asserts what the user sees (message, exit status), that every event received is in a
log that ends in `end`, and that nothing is left running.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from probecast.core.model.events import End, Step, read_log

PY = sys.executable


@pytest.fixture
def small_disk(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A real filesystem of 52 MB (tmpfs): room for the pre-flight check (50 MB), not much more."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=52m", "tmpfs", str(mnt)],
                       capture_output=True, text=True)
    if r.returncode:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {r.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


FILLS_THE_DISK = """
import os, sys, time
from probecast_agent import StepTimer

fill = sys.argv[1]
p = StepTimer(steps_per_epoch=400, batch_size=8)
for _ in p.epochs(range(3)):
    for i in p.steps(range(400)):
        time.sleep(0.004)
        if i == 30 and not os.path.exists(fill):  # a checkpoint, another job: the disk is full
            fd = os.open(fill, os.O_WRONLY | os.O_CREAT, 0o644)
            try:
                while True:
                    os.write(fd, b"\\0" * 65536)
            except OSError:
                os.close(fd)
"""


@pytest.mark.faults('log disk fills mid-probe (tmpfs)',
                    checks='file named; exit non-zero; whole lines + end; program stopped')
def test_disk_full_mid_probe_stops_it_says_which_file_and_the_log_still_ends(tmp_path: Path, small_disk: Path) -> None:
    script = tmp_path / "fills.py"
    script.write_text(textwrap.dedent(FILLS_THE_DISK))
    out = small_disk / "logs"
    cfg = tmp_path / "probecast.toml"
    cfg.write_text(f"[probe]\ncommand = {json.dumps(f'{PY} {script} {small_disk}/filler')}\n"
                   "batch_sizes = [8]\nmax_steps = 300\n")
    r = subprocess.run([PY, "-m", "probecast.tui", "probe", "--config", str(cfg), "--headless",
                        "--out", str(out)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    said = r.stdout + r.stderr
    assert r.returncode != 0, said  # the only probe failed
    (log,) = sorted(out.glob("*.jsonl"))
    assert f"cannot write {log}" in said and "No space left" in said, said
    events, report = read_log(log)
    assert report.malformed == [] and not report.truncated  # whole lines only
    end = events[-1]
    assert isinstance(end, End) and end.status == "failed" and "No space left" in end.reason
    steps = [e for e in events if isinstance(e, Step)]
    assert 30 <= len(steps) < 300  # what came before the disk filled is kept
    assert f"the {len(events) - 1} line(s) before it are kept" in said
    assert not (out / ".probecast-reserve").exists()
    left = subprocess.run(["pgrep", "-f", str(script)], capture_output=True, text=True).stdout
    assert not left.strip(), f"program still running: {left}"
