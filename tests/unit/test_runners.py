"""LocalRunner and ReplayRunner behaviour that the app and the headless CLI rely on."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from conftest import SAMPLE_LOGS
from probecast.core.run.board import Board
from probecast.core.run.probe_plan import run_runners
from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing
from probecast.core.run.runners import LocalRunner, ProbeSpec, ReplayRunner, RunnerStatus, _final_status


def test_missing_framework_is_explained() -> None:
    st = _final_status(False, 1, False, ["Traceback (most recent call last):",
                                         "ModuleNotFoundError: No module named 'tensorflow'"])
    assert st.status == "failed" and "probecast[agent]" in st.detail
    # an own command's missing torch names the Python that ran it, not a built-in workload
    st = _final_status(False, 1, False, ["ModuleNotFoundError: No module named 'torch'"])
    assert "pip install torch" in st.detail and "torch-cnn" not in st.detail


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


def test_runners_with_a_limit_each_play_once_never_more_at_a_time() -> None:
    """A replay of thousands of logs reads a few at a time (files, and the UI's share of the loop)."""
    path = SAMPLE_LOGS / "cpu-keras" / "probes" / "probe-mnist-cnn-b64-cpu-1core.jsonl"
    playing, most = 0, 0

    class Counting(ReplayRunner):
        async def stream(self):  # type: ignore[no-untyped-def]
            nonlocal playing, most
            playing += 1
            most = max(most, playing)
            try:
                async for item in super().stream():
                    yield item
                    await asyncio.sleep(0)
            finally:
                playing -= 1

    board = Board(Pricing(Catalog.embedded()))
    runners = [Counting(ProbeSpec(key=f"p{i}", label=f"p{i}"), path, speed=0) for i in range(23)]
    asyncio.run(run_runners(board, runners, limit=4))
    assert most == 4
    assert [e.status for e in board.entries.values()] == ["done"] * 23
    assert len({e.state.steps for e in board.entries.values()}) == 1


def test_board_estimates_again_only_what_changed() -> None:
    """The live ranking re-estimates a probe only when its state changed (10 000 replayed logs
    must not be re-estimated every redraw), and gives each ranking its own rows."""
    from probecast.core.model.rank import ranking as ranking_module
    from probecast.core.model.rank.ranking import RankOptions

    path = SAMPLE_LOGS / "cpu-keras" / "probes" / "probe-mnist-cnn-b64-cpu-1core.jsonl"
    board = Board(Pricing(Catalog.embedded()))
    runners = [ReplayRunner(ProbeSpec(key=f"p{i}", label=f"p{i}"), path, speed=0) for i in range(3)]
    asyncio.run(run_runners(board, runners))
    calls = 0
    real = ranking_module.estimate_row

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        return real(*args, **kwargs)

    ranking_module.estimate_row = counting  # type: ignore[assignment]
    try:
        first = board.ranking(RankOptions()).rows
        assert calls == 3
        again = board.ranking(RankOptions(by="cost")).rows  # the view changes no estimate
        assert calls == 3 and again[0] is not first[0]
        assert board.ranking(RankOptions(epochs=20)).rows[0].epochs == 20  # N_ep does
        assert calls == 6
        board.feed("p1", RunnerStatus("stopped", "by hand"))
        board.ranking(RankOptions(epochs=20))
        assert calls == 7
    finally:
        ranking_module.estimate_row = real  # type: ignore[assignment]
