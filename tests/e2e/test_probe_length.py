"""The default probe's length on a program of short steps, end to end: `probecast probe --local
-- COMMAND` as a user runs it, the runner passing the floor to the agent. 30 steps of 2 ms are
60 ms of evidence: the default goes on until its steady steps add up to a second (or 100x the
steps); a step count given on the command line is kept exactly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from probecast.core.model.events import Done, Step, read_log

pytestmark = pytest.mark.e2e

TRAINER = """
import time
from probecast_agent import StepTimer
probe = StepTimer(steps_per_epoch=20000, epochs=3, batch_size=8, framework="plain")
for epoch in range(3):  # an epoch of 40 s: beyond the probe's budget for a boundary
    for _ in probe.steps(range(20000), epoch):
        time.sleep(0.002)
    if probe.stopped:
        break
probe.finish()
"""


def probe_steps(tmp: Path, *extra: str) -> tuple[list[float], str]:
    (tmp / "train.py").write_text(TRAINER)
    out = tmp / "logs"
    r = subprocess.run([sys.executable, "-m", "probecast.tui", "probe", "--local", "--headless",
                        "--json", "--out", str(out), *extra, "--", sys.executable, "train.py"],
                       cwd=tmp, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert json.loads(r.stdout)[0]["runtime_s"] > 0
    events, _ = read_log(next(out.glob("*.jsonl")))
    done = next(e for e in events if isinstance(e, Done))
    return [e.dt for e in events if isinstance(e, Step)], done.reason


def test_the_default_goes_on_to_a_second_of_short_steps(tmp_path: Path) -> None:
    dts, reason = probe_steps(tmp_path)
    assert 30 <= len(dts) <= 3000
    assert sum(dts[1:]) >= 1.0 or len(dts) == 3000  # the floor reached, or the cap
    if sum(dts[1:30]) < 1.0:  # 30 steps of ~2 ms: it went on (a host 17x slower would not need to)
        assert len(dts) > 30
        assert reason.startswith("max-steps 30; went on to") and f"{len(dts)} steps" in reason


def test_a_given_step_count_is_kept_exactly(tmp_path: Path) -> None:
    dts, reason = probe_steps(tmp_path, "--max-steps", "30")
    assert len(dts) == 30 and reason == "max-steps 30"
