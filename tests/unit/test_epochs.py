"""Stabilisation and its prediction, on real full runs recorded here (sample_logs/cpu-keras).

The curves (val_accuracy per epoch, 4 000 validation samples):
  b64:   .754 .787 .789 .805 .814 .796 .799 .814 .813 .807 .805 .808 .809 .814 .817
  b256:  .274 .587 .758 .773 .783 .790 .781 .797 .802 .814 .797 .808 .798 .797 .796
  b1024: .118 .132 .145 .173 .280 .322 .551 .655 .573 .741 .742 .765 .769 .794 .786
By inspection: b64 is flat within 0.02 from epoch 2 and stops improving by 0.005 after epoch 5;
b256 is within 0.02 from epoch 4 and its best (0.814) is epoch 10; b1024 still climbs at 15.
"""

from __future__ import annotations

import json

import pytest

from conftest import SAMPLE_LOGS
from probecast.core.model.epochs import (epochs_from_runs, metric_curve, patience_rule, plateau_rule,
                         predict_stabilisation)
from probecast.core.model.logstore import load_probe

FULL = SAMPLE_LOGS / "cpu-keras" / "full-runs"


def curve(batch: int) -> list[float]:
    return metric_curve(load_probe(FULL / f"full-mnist-cnn-b{batch}-15ep.jsonl").state, "val_accuracy")


def test_patience_and_plateau_on_real_runs() -> None:
    assert patience_rule(curve(64), patience=3, min_delta=0.005).epoch == 5
    assert patience_rule(curve(256), patience=3, min_delta=0.005).epoch == 10
    assert plateau_rule(curve(64), window=3, threshold=0.02).epoch == 2
    assert plateau_rule(curve(256), window=3, threshold=0.02).epoch == 4
    slow = curve(1024)
    assert patience_rule(slow).epoch is None and "still improving" in patience_rule(slow).reason
    assert plateau_rule(slow).epoch is None
    # the rules are configurable: a stricter plateau never comes earlier
    strict = plateau_rule(curve(256), window=4, threshold=0.015).epoch
    assert strict is not None and strict > 4


def test_larger_batches_need_more_epochs_as_in_the_dissertation() -> None:
    """As in Malta (*Selecting Efficient Virtual Machines for Training Deep Learning Models on
    the Cloud*, UNICAMP 2021, Table 4.3): the larger the batch, the more epochs to stabilise."""
    e64 = plateau_rule(curve(64)).epoch
    e256 = plateau_rule(curve(256)).epoch
    assert e64 is not None and e256 is not None and e64 < e256
    p1024 = predict_stabilisation(curve(1024), 8, cap=1.0)
    assert p1024.epoch is not None and p1024.epoch > 15  # not stable within the 15 epochs run


@pytest.mark.parametrize("batch,k", [(64, 4), (64, 5), (64, 6), (256, 4), (256, 5), (256, 6)])
def test_prediction_from_the_first_epochs_matches_the_full_run(batch: int, k: int) -> None:
    truth = plateau_rule(curve(batch)).epoch
    pred = predict_stabilisation(curve(batch), k, cap=1.0)
    assert truth is not None and pred.epoch is not None
    assert abs(pred.epoch - truth) <= 0.6
    assert pred.low is not None and pred.high is not None
    assert pred.low <= pred.epoch <= pred.high


def test_too_little_data_is_said() -> None:
    p = predict_stabilisation(curve(64), 3)
    assert p.epoch is None and "too little data" in p.reason
    flat = predict_stabilisation([0.5, 0.49, 0.5, 0.49, 0.5], cap=1.0)
    assert flat.epoch is None or flat.epoch <= 2


def test_methodology_1_epochs_per_batch_size() -> None:
    states = [load_probe(FULL / f"full-mnist-cnn-b{b}-15ep.jsonl").state for b in (64, 256, 1024)]
    plan = epochs_from_runs(states)
    assert plan[("mnist-cnn", 64)].n_ep == 2 and plan[("mnist-cnn", 64)].source.startswith("full run")
    assert plan[("mnist-cnn", 256)].n_ep == 4
    assert abs(plan[("mnist-cnn", 64)].accuracy - 0.787) < 0.001  # type: ignore[operator]
    assert plan[("mnist-cnn", 1024)].source.startswith("predicted")
    assert plan[("mnist-cnn", 1024)].n_ep > 15


def test_stabilize_cli_and_epochs_from_in_rank(run_cli) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run_cli("stabilize", str(FULL / "full-mnist-cnn-b64-15ep.jsonl"), "--json",
                           "--predict-from", "5")
    (r,) = json.loads(out)
    assert r["patience"]["epoch"] == 5 and r["plateau"]["epoch"] == 2
    assert 1.5 < r["prediction"]["epoch"] < 3
    probes = SAMPLE_LOGS / "cpu-keras" / "probes"
    long_runs = [str(p) for p in sorted(FULL.glob("*-15ep.jsonl"))]
    code, out, err = run_cli("rank", str(probes), "--epochs-from", *long_runs, "--json")
    rows = [x for x in json.loads(out) if x["workload"] == "mnist-cnn"]
    b64 = [x for x in rows if x["batch_size"] == 64]
    assert b64 and all(x["epochs"] == 2 and "full run" in x["epochs_source"] for x in b64)
    code, out, err = run_cli("rank", str(probes), "--epochs-from", *long_runs, "--min-accuracy",
                             "0.9", "--json")
    assert "left out" in err
