"""A run with no training step to time that the probe saw to its exit: its run is the answer
(core/model/estimate/seen_whole.py: ``untimed_run``), on a recorded probe of a public script."""

from __future__ import annotations

import json

import pytest

from conftest import ROOT

from probecast.core.model.estimate.runtime import ran_untimed
from probecast.core.model.logstore import load_probe
from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing, RankOptions, estimate_row, horizons_for
from probecast.core.model.rows import Candidate

RUNS = ROOT / "benchmarks" / "corpus" / "runs-public"


def test_hand_written_updates_with_no_step_are_answered_by_the_run_itself() -> None:
    """pytorch/tutorials' 'PyTorch: Tensors' (2 000 hand-written updates, no backward pass, no
    optimizer): its probe found no step to time; it said 'failed' of a program that ran to its
    exit under it. Now the run, launch to exit, is the answer; the plain run falls inside."""
    st = load_probe(RUNS / "probe-tut-polynomial_tensor.jsonl.gz").state
    assert ran_untimed(st) and st.end is not None
    candidate = Candidate("poly", "poly", st)
    pricing = Pricing(Catalog.embedded())
    row = estimate_row(candidate, pricing, RankOptions())
    # the run, launch to exit, less the agent's own start-up (its launcher, the hook's set-up)
    assert 0 < st.end.agent_s < st.end.t
    assert row.equation == "measured" and row.runtime_s == pytest.approx(st.end.t - st.end.agent_s)
    assert any(n.startswith("no training step was found to time") for n in row.notes)
    assert any("the agent's own" in n and "taken off" in n for n in row.notes)
    truth = json.loads((RUNS / "tut-polynomial_tensor.truth.json").read_text())["wall_s"]
    assert row.runtime_low_s < truth < row.runtime_high_s
    # no length to extrapolate to: no horizon is made up
    assert horizons_for(candidate, pricing, RankOptions(), [5, 10]) == []


def test_a_run_that_trained_or_failed_is_not_taken_for_one_with_no_step() -> None:
    trained = load_probe(RUNS / "probe-tut-polynomial_nn.jsonl.gz").state
    assert trained.steps > 0 and not ran_untimed(trained)
