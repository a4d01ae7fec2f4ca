"""Decisions from the difference: P(the leader is ahead) from two probes jointly, per-mechanism
bounds, and the words the CLI and the app say."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from conftest import SAMPLE_LOGS
from probecast.core.model.estimate.bounds import OTHER, TF, TORCH, Calibration, mechanism
from probecast.core.model.rank.decisions import (PairConstants, decision_lines, fmt_p, p_ahead,
                                            verdict)
from probecast.core.model.estimate.runtime import estimate_runtime
from probecast.core.model.events import EventReader
from probecast.core.model.logstore import load_probe
from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing, RankOptions, build_ranking
from probecast.core.model.state import fold_all
from probecast.core.report.table import print_ranking

PC = PairConstants(rho_same_host=0.3, rho_other_host=0.0, kappa=0.55, threshold=0.95)


def test_equal_estimates_are_a_coin_toss() -> None:
    assert p_ahead((100, 80, 130), (100, 80, 130), True, PC) == pytest.approx(0.5)


def test_a_larger_gap_is_surer_and_the_order_is_symmetric() -> None:
    near = p_ahead((100, 80, 130), (110, 88, 143), True, PC)
    far = p_ahead((100, 80, 130), (170, 136, 221), True, PC)
    assert 0.5 < near < far
    back = p_ahead((170, 136, 221), (100, 80, 130), True, PC)
    assert back == pytest.approx(1 - far, abs=1e-9)


def test_errors_that_move_together_make_the_difference_surer() -> None:
    a, b = (100, 70, 140), (130, 91, 182)
    apart = p_ahead(a, b, True, PairConstants(rho_same_host=0.0, kappa=1.0))
    together = p_ahead(a, b, True, PairConstants(rho_same_host=0.8, kappa=1.0))
    assert together > apart


def test_the_issue_case_wide_bounds_1_7x_apart_is_decided() -> None:
    """#20: b256 at 2m24s [2m12s-4m00s] and b64 at 4m08s [3m43s-6m43s] on one host: the bounds
    overlap, yet with the shipped constants the leader is named."""
    lead, other = (144.0, 132.0, 240.0), (248.0, 223.0, 403.0)
    assert lead[2] > other[1]  # the intervals overlap
    assert p_ahead(lead, other, True) >= PairConstants.load().threshold


def test_fmt_p_never_says_certain() -> None:
    assert fmt_p(0.9999) == ">99 %" and fmt_p(0.0001) == "<1 %" and fmt_p(0.7) == "70 %"


def _torch_state(path: Path):  # type: ignore[no-untyped-def]
    return load_probe(path).state


def test_mechanism_from_the_log() -> None:
    torch = load_probe(SAMPLE_LOGS / "cpu-torch" / "probe-torch_mnist-b64-e3-c2.jsonl").state
    keras = load_probe(SAMPLE_LOGS / "cpu-keras-v2" / "probe-mnist_convnet-b64-e5-c2.jsonl").state
    assert mechanism(torch) == TORCH
    assert mechanism(keras) == TF
    bare = fold_all(list(EventReader().read([json.dumps(
        {"ev": "start", "t": 0, "v": 2, "probe": "p", "time": "2026-11-23T00:00:00+00:00",
         "instance": "i", "host": "h", "batch_size": 8, "workload": "w", "steps_per_epoch": 10,
         "val_steps": 0, "framework": "", "devices": []})])))
    assert mechanism(bare) == OTHER  # no recorded runs of its own: the cautious set


def test_a_torch_probe_is_not_given_keras_stalls() -> None:
    """Its boundaries were all cheap: the PyTorch constants, not Keras' tf.data teardown."""
    state = load_probe(SAMPLE_LOGS / "cpu-torch" / "probe-torch_mnist-b256-e5-c2.jsonl").state
    own = estimate_runtime(state, 20)
    from probecast.core.model.estimate.runtime import training_estimate, whole_process
    keras = whole_process(state, training_estimate(state, 20, use_validation=True,
                                                   equation="auto", statistic="trimmed"),
                          20, Calibration.load(TF))
    assert own.terms.p_stall is None and keras.terms.p_stall is not None
    assert own.runtime_s < keras.runtime_s  # Keras' constants expect tf.data stalls
    assert own.uncertainty["boundaries"] < 0.2 * keras.uncertainty["boundaries"]
    assert own.high_s < keras.high_s


def _ranking(paths: list[Path], by: str = "time"):  # type: ignore[no-untyped-def]
    candidates = [load_probe(p).candidate() for p in paths]
    return build_ranking(candidates, Pricing(Catalog.embedded()), RankOptions(epochs=20, by=by))


def test_rows_carry_the_probability_against_the_leader_and_say_it() -> None:
    paths = [SAMPLE_LOGS / "cpu-torch" / "probe-torch_mnist-b64-e3-c2.jsonl",
             SAMPLE_LOGS / "cpu-torch" / "probe-torch_mnist-b256-e5-c2.jsonl"]
    rows = next(iter(_ranking(paths).groups.values()))
    lead, other = rows
    assert lead.p_faster is None and other.p_faster is not None
    assert other.undecided == (other.p_faster < PairConstants.load().threshold)
    assert lead.undecided == other.undecided
    line = decision_lines(rows, "time")[0]
    assert lead.name in line and other.name in line and "%" in line
    said = verdict(rows, "time")
    assert (said.startswith("undecided") if other.undecided else "is fastest" in said)
    as_json = other.as_json()
    assert as_json["p_faster"] == other.p_faster and "undecided" in as_json
    out = io.StringIO()
    print_ranking(rows, RankOptions(epochs=20), out)
    assert said in out.getvalue()


def test_undecided_marks_only_rows_below_the_threshold() -> None:
    paths = sorted((SAMPLE_LOGS / "reconstructed-dissertation").glob("seismic-fcn-*"))
    for rows in _ranking(paths).groups.values():
        for r in rows[1:]:
            assert r.undecided == (r.p_faster is not None
                                   and r.p_faster < PairConstants.load().threshold)
        assert rows[0].undecided == any(r.undecided for r in rows[1:])


def test_the_verdict_waits_for_probes_still_running() -> None:
    paths = [SAMPLE_LOGS / "cpu-torch" / "probe-torch_mnist-b64-e3-c2.jsonl"]
    rows = next(iter(_ranking(paths).groups.values()))
    assert verdict(rows, "time", running=1).startswith(f"only {rows[0].name} has an estimate")
    assert "1 probe still running" in verdict(rows, "time", running=1)
    assert verdict(rows, "time", running=0) == f"{rows[0].name} is the only candidate"
    assert verdict(rows, "weighted") == ""
