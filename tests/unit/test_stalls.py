"""The tf.data autotuner's clock (core/model/estimate/stalls.py) against real recorded runs: a Keras
boundary waits for the autotuner's next wake-up, and the forecast learns from the boundaries a
probe saw whether this run's boundaries stall."""

from __future__ import annotations

import pytest

from probecast.core.model.estimate.bounds import TF, TORCH, Calibration, mechanism
from probecast.core.model.logstore import load_probe
from probecast.core.model.estimate.stalls import (cores_usable, epoch_lifetimes, forecast, next_wakeup,
                                         observe, stall_after, stall_length)
from conftest import ROOT

CORPUS = ROOT / "benchmarks" / "corpus"


def test_the_wakeups_double_from_10_ms_then_come_every_minute() -> None:
    assert next_wakeup(0.005) == pytest.approx(0.01)
    assert next_wakeup(5.9) == pytest.approx(10.23)
    assert next_wakeup(10.3) == pytest.approx(20.47)
    assert next_wakeup(80.0) == pytest.approx(81.91)
    assert next_wakeup(82.0) == pytest.approx(141.91)
    assert next_wakeup(150.0) == pytest.approx(201.91)
    assert stall_after(10.23) == pytest.approx(0.0, abs=1e-9)


def test_every_boundary_of_a_long_keras_run_waited_for_the_next_wakeup() -> None:
    """mnist_convnet on NumPy arrays, one core, 10 epochs of ~114 s: each boundary stalled for
    the time to the 141.91 s wake-up of the iterator it tore down (18-35 s), as predicted."""
    st = load_probe(CORPUS / "runs-long" / "mnist_convnet-b64-e10-c1-long.jsonl.gz").state
    t_it = st.step_time("trimmed")[0]
    seen = epoch_lifetimes(st, t_it)
    assert len(seen) == 9
    for lifetime, cost, _gap in seen:
        assert cost > 10.0
        assert cost == pytest.approx(stall_after(lifetime), abs=0.25)
    assert observe(st, t_it, stalls=True).stalled == 9


def test_a_run_whose_epochs_straddle_a_wakeup_stalls_a_moment_or_a_minute() -> None:
    """cifar_tfdata, batch 256, one core: epochs of 72-88 s, around the 81.91 s wake-up - a
    shorter epoch waited seconds, a longer one for the 141.91 s wake-up, ~55 s."""
    st = load_probe(CORPUS / "runs-long" / "cifar_tfdata-b256-e10-c1-long.jsonl.gz").state
    t_it = st.step_time("trimmed")[0]
    for lifetime, cost, _gap in epoch_lifetimes(st, t_it):
        assert cost == pytest.approx(stall_after(lifetime), abs=0.5)
        assert (cost > 40) == (lifetime > 81.91)
    # around 80 s, a few percent of spread from epoch to epoch puts both outcomes in the mean
    length = stall_length(80.0, 0.0, 0.05)
    assert 5.0 < length.mean < 40.0 and length.most > 55.0


def test_the_odds_follow_what_the_probe_saw() -> None:
    cal = Calibration.load(TF)
    # one core, its boundary stalled as predicted: most boundaries to come will
    one = load_probe(CORPUS / "runs" / "probe-mnist_convnet-b64-e5-c1.jsonl.gz").state
    assert cores_usable(one) == 1 and mechanism(one) == TF
    t_it = one.step_time("trimmed")[0]
    fc = forecast(one, t_it, one.steps_per_epoch * t_it, 4, cal)
    assert fc.observed.stalled >= 1 and fc.p_stall > 0.8
    assert fc.stall_s > 3.0 and fc.per_boundary > 0.8 * 3.0
    # two cores, its boundaries cheap where a stall was due: the odds drop below even
    two = load_probe(CORPUS / "runs" / "probe-mnist_convnet-b256-e8-c2.jsonl.gz").state
    t_it = two.step_time("trimmed")[0]
    fc2 = forecast(two, t_it, two.steps_per_epoch * t_it, 7, cal)
    assert cores_usable(two) == 2 and fc2.observed.cheap == 2
    assert fc2.p_stall < 0.5 and fc2.least < fc2.per_boundary * 8 < fc2.most


def test_a_dataloader_never_stalls() -> None:
    st = load_probe(CORPUS / "runs-torch" / "probe-torch_mnist-b64-e3-c1.jsonl.gz").state
    cal = Calibration.load(TORCH)
    assert mechanism(st) == TORCH and not cal.stalls
    t_it = st.step_time("trimmed")[0]
    fc = forecast(st, t_it, st.steps_per_epoch * t_it, 9, cal)
    assert fc.p_stall == 0.0 and fc.per_boundary < 0.05
