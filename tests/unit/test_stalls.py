"""The tf.data autotuner's clock (core/model/estimate/stalls.py) against real recorded runs: a Keras
boundary waits for the autotuner's next wake-up, and the forecast learns from the boundaries a
probe saw whether this run's boundaries stall."""

from __future__ import annotations

import pytest

from probecast.core.model.estimate.bounds import TF, TORCH, Calibration, mechanism
from probecast.core.model.logstore import load_probe
from probecast.core.model.estimate.stalls import cores_usable, forecast, stall_length
from probecast.core.model.estimate.wakeups import (epoch_lifetimes, next_wakeup, observe,
                                                   stall_after)
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


def test_a_tensorflow_loop_that_iterated_no_dataset_has_nothing_to_stall() -> None:
    """tensorflow/docs' optimizer guide updates one variable by hand, no tf.data anywhere: its
    agent says `no-tf-data`, and no teardown stall is forecast or allowed for - a TensorFlow
    loop's constants otherwise (before: a 56 % chance of a stall at its end)."""
    st = load_probe(CORPUS / "runs-public" / "probe-tf-optimizers_core.jsonl.gz").state
    assert mechanism(st) == TF and "no-tf-data" in st.codes
    assert Calibration.load(TF).stalls and not Calibration.for_state(st).stalls
    t_it = st.step_time("trimmed")[0]
    fc = forecast(st, t_it, 100 * t_it, 9, Calibration.for_state(st))
    assert fc.stall_s == 0.0 and fc.per_boundary == pytest.approx(fc.least / 10)


def test_a_custom_loops_own_work_between_epochs_recurs_at_each_boundary() -> None:
    """tensorflow/docs' CVAE: a GradientTape loop that, after each epoch's 188 steps, runs a
    test pass of 32 batches and saves a figure - its code, every epoch. Both boundaries its probe
    crossed cost 1.0 s (no stall told). Carried as fit()'s first boundaries' one-off work is
    (0.9 %: tracing), each to come cost 0.36 s, the odds of a stall alone: 37.1 s against its
    plain run's 44.3 s (-16 %). A loop of the program's own carries its later boundaries as they
    came, as a DataLoader's do."""
    st = load_probe(CORPUS / "runs-public" / "probe-tf-cvae.jsonl.gz").state
    cal = Calibration.for_state(st)
    assert mechanism(st) == TF and "custom-loop" in st.codes
    t_it = st.step_time("trimmed")[0]
    seen = observe(st, t_it, True)
    assert len(seen.plain) == 2 and min(seen.plain) > 0.9  # both boundaries ~1 s
    fc = forecast(st, t_it, st.steps_per_epoch * t_it, 9, cal)
    assert fc.per_boundary >= seen.plain[1]


def test_the_programs_work_between_two_fit_calls_is_not_read_as_a_stall() -> None:
    """keras.io's addition_rnn calls fit(epochs=1) 29 times in a loop, with 10 predict calls
    after each. The two boundaries its probe crossed cost 1.00 and 0.56 s, of which 0.74 and
    0.50 s were those predictions (the steps' `outside`). Read whole, both matched the stall its
    9 s epochs can wait (2.0 s): odds 72 %, 1.46 s a boundary, 330 s against its plain run's
    312 s (blind, before the field: +32.3 %). Without them, neither stalled: 309 s; and the
    predictions are counted once, in T_post, where the 27 rounds after the probe's stop ran."""
    import json

    import msgspec

    from probecast.core.model.estimate.runtime import estimate_runtime
    from probecast.core.model.events import Step, read_log
    from probecast.core.model.state import fold_all

    log = CORPUS / "runs-public" / "probe-keras-addition_rnn.jsonl.gz"
    truth = json.loads((CORPUS / "runs-public" / "keras-addition_rnn.truth.json").read_text())
    st = load_probe(log).state
    assert [round(s, 2) for s in st.boundary_outside] == [0.74, 0.50]
    t_it = st.step_time("trimmed")[0]
    seen = observe(st, t_it, stalls=True)
    assert (seen.stalled, seen.cheap) == (0, 2) and seen.outside == tuple(st.boundary_outside)
    est = estimate_runtime(st, 29)
    assert est.terms.t_post == pytest.approx(st.post_time + sum(st.boundary_outside))
    assert abs(est.runtime_s / truth["wall_s"] - 1) < 0.05
    assert est.low_s < truth["wall_s"] < est.high_s

    events, _ = read_log(log)  # the same probe as the agent wrote it before `outside`
    whole = fold_all([msgspec.structs.replace(e, outside=0.0) if type(e) is Step else e
                      for e in events])
    assert observe(whole, t_it, stalls=True).stalled == 2
    assert estimate_runtime(whole, 29).runtime_s > est.runtime_s + 15


def test_boundaries_too_short_to_tell_a_stall_cost_what_the_probes_cost() -> None:
    """keras.io's TF-NumPy example fits eight small models for 200 epochs of 13 steps (~37 ms).
    Each boundary its probe crossed waited 27-29 ms - the 70 ms wake-up's stall, too short to
    tell from a plain boundary (INFORMATIVE_S). The coin toss said 12 ms a boundary to come, and
    the estimate came out 56 s against the plain run's 80.7 s (-31 %, blind); all alike, they
    are what the boundaries to come cost."""
    import json

    from probecast.core.model.estimate.runtime import estimate_runtime

    log = CORPUS / "runs-public" / "probe-keras-tensorflow_numpy_models.jsonl.gz"
    truth = json.loads((CORPUS / "runs-public" / "keras-tensorflow_numpy_models.truth.json")
                       .read_text())["wall_s"]
    st = load_probe(log).state
    t_it = st.step_time("trimmed")[0]
    seen = observe(st, t_it, stalls=True)
    assert seen.untold >= 2 and all(0.02 < c < 0.035 for c in seen.untold_costs)
    fc = forecast(st, t_it, st.steps_per_epoch * t_it, 199, Calibration.load(TF))
    assert fc.per_boundary == pytest.approx(sum(seen.untold_costs) / len(seen.untold_costs))
    est = estimate_runtime(st, 200)  # each fit's 200 epochs; the later fits are its phases
    assert abs(est.runtime_s / truth - 1) < 0.10 and est.low_s <= truth <= est.high_s


def test_epochs_of_one_step_each_have_no_steady_step_and_still_an_answer() -> None:
    """keras.io's WGAN-GP (blind): one fit() of 3 epochs of one 10 s step each - no step but an
    epoch's first, so no steady step time (NaN), and the stall forecast took it for an epoch's
    lifetime: the estimate raised ValueError. The probe saw the run whole: that is the answer."""
    from probecast.core.model.estimate.runtime import estimate_runtime, measured_run

    state = load_probe(CORPUS / "runs-public" / "probe-keras-wgan-gp.jsonl.gz").state
    est = measured_run(state, estimate_runtime(state, 3))
    assert est.equation == "measured"
    assert est.runtime_s == pytest.approx(state.end.t - state.agent_init_s)  # type: ignore[union-attr]
