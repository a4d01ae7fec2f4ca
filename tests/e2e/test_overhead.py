"""The probe's own cost on the job (benchmarks/overhead.py), run on a tiny real PyTorch job: the
plain run and the agent variants asked for complete, each agent log's dts add up to its `end`, and the
report has every column and the client's CPU. No timing is asserted: on a shared machine the
figures are whatever the load makes them; the lead runs the measure itself on a quiet one.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytestmark = pytest.mark.torch

ROOT = Path(__file__).resolve().parents[2]


def test_the_overhead_measure_runs_plain_and_under_the_agent_with_and_without_its_parts(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import overhead
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    out = tmp_path / "overhead.json"
    # the plain run, the agent, and the agent with its three parts off at once (each part's own
    # switch is an environment variable of the same kind): three of its six processes, the
    # suite's time in mind
    variants = ["plain", "agent", "agent, none of the three"]
    assert set(variants) <= set(overhead.VARIANTS)
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "overhead.py"), "--steps", "12",
                        "--batch-size", "16", "--reps", "1", "--variants", *variants,
                        "--json", str(out)],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["logs_add_up"] is True and result["every_step_logged"] is True
    runs = result["runs"]
    assert {run["variant"] for run in runs} == set(variants)
    for run in runs:  # every agent log checked, none of the plain run's (it has none)
        assert run["log_ok"] is (None if run["variant"] == "plain" else True)
        assert run["steps_logged"] == (None if run["variant"] == "plain" else 12)
    for run in runs:  # the program's own marks were read: launch < first step < last < exit
        assert 0 < run["first_s"] < run["total_s"] and run["step_ms"] > 0 and run["end_s"] > 0
    for run in runs:  # the agent's own start-up (its launcher, the hook's set-up) is in its log,
        if run["variant"] != "plain":  # and inside the time to the program's first mark
            assert 0 < run["agent_init_s"] < run["first_s"], run
    rows = result["rows"]
    assert [row["variant"] for row in rows] == variants
    assert all(set(overhead.COLUMNS) <= set(row) for row in rows)
    assert rows[0]["d_total_s"] == 0 and rows[0]["d_step_pct"] == 0  # plain: the reference
    client = result["client"]
    assert client["code"] == 0 and 0 < client["probe_cpu_s"] <= client["cpu_s"]
    assert 0 < client["probe_wall_s"] <= client["wall_s"]
    header = "| " + " | ".join(overhead.COLUMNS) + " |"
    assert header in r.stdout and "of a core" in r.stdout


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="no CUDA device here")
def test_on_cuda_the_agent_logs_every_step_and_its_dts_add_up(tmp_path: Path) -> None:
    """The device clock (CUDA events) on a real GPU: every step the program ran is logged once,
    in a log whose dts add up to the run, and its steps are the device's."""
    out = tmp_path / "overhead.json"
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "overhead.py"), "--device",
                        "cuda", "--steps", "300", "--reps", "1", "--variants", "agent",
                        "--no-client", "--json", str(out)],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["logs_add_up"] is True and result["every_step_logged"] is True
    (agent,) = [run for run in result["runs"] if run["variant"] == "agent"]
    assert agent["agent_step_ms"] == pytest.approx(agent["step_ms"], rel=0.25)
