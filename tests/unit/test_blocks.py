"""Runs timed in blocks (imported MLPerf results): the estimate from a run's start, the run's
own answer when it reached its target, the length from complete runs, and the CLI from
`probecast import mlperf` to `probecast rank` - on real result excerpts (tests/data/mlperf)."""

from __future__ import annotations

import io
import json
import statistics
from pathlib import Path

import pytest

from probecast.core.cli.main import main
from probecast.core.model.estimate.blocks import (BLOCKS_EQUATION, block_estimate, length_of, own_length,
                                         reached,
                                         run_lengths)
from probecast.core.model.mlperf.runs import read_run, to_events
from probecast.core.model.mlperf.cut import Cut, cut_run, parse_cut
from probecast.core.model.pricing import Catalog
from probecast.core.model.state import fold_all

pytestmark = pytest.mark.unit

DATA = Path(__file__).resolve().parents[1] / "data" / "mlperf"
LLAMA = DATA / "v4.0/Oracle/results/1xBM.GPU.H100.8/llama2_70b_lora/result_1.txt"
SSD = DATA / "v4.0/Oracle/results/1xBM.GPU.H100.8/ssd/result_1.txt"


def _events(path: Path) -> list:
    return to_events(read_run(path), Catalog.embedded())


@pytest.mark.parametrize("path", [LLAMA, SSD], ids=["llama2_70b_lora", "ssd"])
def test_a_cut_start_with_the_runs_own_length_brackets_the_real_run(path: Path) -> None:
    events = _events(path)
    whole = fold_all(events)
    assert reached(whole) and whole.end is not None
    truth = whole.end.t
    second_block = [e.t for e in events if type(e).__name__ == "Block"][1]
    for cut in (Cut(first_eval=True), Cut(seconds=second_block + 1.0)):
        state = fold_all(cut_run(list(events), cut))
        assert state.end is not None and state.end.status == "probe-done"
        assert state.end.t < truth
        est = block_estimate(state, own_length(whole))
        assert est.equation == BLOCKS_EQUATION
        assert est.low_s <= truth <= est.high_s, (cut, est.low_s, truth, est.high_s)
        assert abs(est.runtime_s - truth) / truth < 0.10
        # the arithmetic a user can redo: what was seen plus the rest at the steady rate
        t = est.terms
        assert t.progress_total == whole.blocks[-1].progress
        assert t.progress_seen == state.blocks[-1].progress
        assert f"= {est.runtime_s:.0f} s" in est.formula()


def test_the_rate_of_one_block_carries_its_warm_up_and_the_bounds_say_so() -> None:
    events = _events(LLAMA)
    whole = fold_all(events)
    state = fold_all(cut_run(list(events), Cut(first_eval=True)))
    assert len(state.blocks) == 1
    est = block_estimate(state, own_length(whole))
    assert any("one block seen" in n for n in est.notes)
    assert est.low_s < est.runtime_s < est.high_s


def test_the_length_of_complete_runs_and_its_spread() -> None:
    whole = fold_all(_events(LLAMA))
    lengths = run_lengths([whole, whole])
    key = (whole.start.workload, whole.start.batch_size)
    length = lengths[key]
    assert length.progress == whole.blocks[-1].progress
    assert length.evals == len(whole.vals)
    assert length.runs == 2
    assert run_lengths([fold_all(cut_run(_events(LLAMA), Cut(fraction=0.5)))]) == {}


def test_parse_cut() -> None:
    assert parse_cut("first-eval").first_eval
    assert parse_cut("0.1").fraction == pytest.approx(0.1)
    assert parse_cut("20%").fraction == pytest.approx(0.2)
    assert parse_cut("600s").seconds == 600
    with pytest.raises(ValueError, match="between 0 and 1"):
        parse_cut("3")


def _run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(out):
        code = main(argv)
    return code, out.getvalue()


def test_import_then_rank_names_systems_by_time_and_cost(tmp_path: Path) -> None:
    code, text = _run(["import", "mlperf", str(DATA), "--out", str(tmp_path / "runs")])
    assert code == 0 and "imported" in text
    llama = tmp_path / "runs" / "llama2_70b_lora"
    logs = sorted(llama.glob("*.jsonl"))
    assert len(logs) == 1
    # the same run twice (as two results of one system): one row, their median
    second = llama / "again.jsonl"
    second.write_text(logs[0].read_text())
    code, text = _run(["rank", str(llama), "--by", "cost", "--json"])
    assert code == 0
    rows = json.loads(text)
    assert len(rows) == 1
    row = rows[0]
    truth = fold_all(_events(LLAMA)).end.t
    assert row["equation"] == "measured"
    assert row["runtime_s"] == pytest.approx(truth)
    assert row["price_per_hour"] == pytest.approx(80.0)  # 1 x BM.GPU.H100.8 from the catalog
    assert row["cost_usd"] == pytest.approx(80.0 * truth / 3600, rel=0.01)
    assert any("median of 2 complete runs" in n for n in row["notes"])


def test_a_cut_run_ranks_with_the_length_of_the_complete_runs_beside_it(tmp_path: Path) -> None:
    _run(["import", "mlperf", str(LLAMA), "--out", str(tmp_path / "whole")])
    code, text = _run(["import", "mlperf", str(LLAMA), "--out", str(tmp_path / "cut"),
                       "--cut", "first-eval"])
    assert code == 0
    code, text = _run(["rank", str(tmp_path / "cut"), "--json"])
    assert code == 1  # alone, a cut run's length to target is unknown: it says how to give it
    code, text = _run(["rank", str(tmp_path / "cut"), str(tmp_path / "whole"), "--json"])
    assert code == 0
    rows = {r["equation"]: r for r in json.loads(text)}
    assert set(rows) == {"blocks", "measured"}
    blocks = rows["blocks"]
    truth = rows["measured"]["runtime_s"]
    assert blocks["runtime_low_s"] <= truth <= blocks["runtime_high_s"]
    assert blocks["epochs_source"].startswith("complete runs of it")


def test_one_block_is_scaled_by_the_warm_up_complete_runs_show() -> None:
    events = _events(LLAMA)
    whole = fold_all(events)
    state = fold_all(cut_run(list(events), Cut(first_eval=True)))
    length = length_of([whole])
    rates = [b.dt / (b.progress - p) for b, p in
             zip(whole.blocks, [0.0] + [b.progress for b in whole.blocks[:-1]])]
    assert length.warm_ratio == pytest.approx(rates[0] / statistics.median(rates[1:]))
    est = block_estimate(state, length)
    assert any("later ones taken as" in n for n in est.notes)
    truth = whole.end.t
    assert est.low_s <= truth <= est.high_s
    # nearer the truth than the first block's own rate (which carries the warm-up)
    assert abs(est.runtime_s - truth) <= abs(block_estimate(state, own_length(whole)).runtime_s - truth)
