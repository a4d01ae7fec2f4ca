"""LocalRunner and ReplayRunner behaviour that the app and the headless CLI rely on."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from conftest import SAMPLE_LOGS
from probecast.core.run.board import Board
from probecast.core.run.plan import run_runners
from probecast.core.model.pricing import Catalog
from probecast.core.model.ranking import Pricing
from probecast.core.run.runners import LocalRunner, ProbeSpec, ReplayRunner, RunnerStatus, _final_status


def test_missing_framework_is_explained() -> None:
    st = _final_status(False, 1, False, ["Traceback (most recent call last):",
                                         "ModuleNotFoundError: No module named 'tensorflow'"])
    assert st.status == "failed" and "probecast[agent]" in st.detail


def test_local_runner_reports_a_broken_python_as_failed(tmp_path: Path) -> None:
    spec = ProbeSpec(key="k", label="k", command=f"{sys.executable} -c 'raise SystemExit(3)'")
    runner = LocalRunner(spec, tmp_path / "k.jsonl", python=str(tmp_path / "no-such-python"))

    async def go() -> list:  # type: ignore[type-arg]
        return [item async for item in runner.stream()]

    items = asyncio.run(go())
    assert isinstance(items[-1], RunnerStatus) and items[-1].status == "failed"
    assert "cannot start the agent" in items[-1].detail
    assert not (tmp_path / "k.jsonl").exists()  # no empty log left behind


def test_instant_replay_folds_the_same_state_as_the_file() -> None:
    from probecast.core.model.logstore import load_probe

    path = SAMPLE_LOGS / "cpu-keras" / "probes" / "probe-mnist-cnn-b64-cpu-1core.jsonl"
    board = Board(Pricing(Catalog.embedded()))
    runner = ReplayRunner(ProbeSpec(key="p", label="p"), path, speed=0)
    asyncio.run(run_runners(board, [runner]))
    live = board.entries["p"]
    disk = load_probe(path).state
    assert live.status == "done"
    assert (live.state.steps, live.state.boundary_steps, live.state.elapsed) == \
        (disk.steps, disk.boundary_steps, disk.elapsed)
    assert live.state.step_time() == disk.step_time()
    assert list(live.recent)[0] == disk.t_it1  # the first (slow) step stays in the chart
