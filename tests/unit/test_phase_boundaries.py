"""A later phase's epoch boundaries forecast from its own (core/model/estimate/stalls.py,
phases.py), on recorded probes of public scripts: the boundaries the probe saw in that phase say
what the ones to come cost, where so many came out alike that chance is unlikely; fewer leave
the stall odds to speak. And a run seen whole whose phases an early stop each ended: its bounds
reach every phase's draw."""

from __future__ import annotations

import json
import math

import pytest
from conftest import ROOT

from probecast.core.model.estimate.bounds import Calibration
from probecast.core.model.estimate.early_stop import early_stopped
from probecast.core.model.estimate.phases import estimate_phase
from probecast.core.model.estimate.runtime import estimate_runtime, measured_run
from probecast.core.model.estimate.stalls import forecast
from probecast.core.model.estimate.wakeups import untold_alike
from probecast.core.model.logstore import load_probe
from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing, RankOptions, estimate_row
from probecast.core.model.rows import Candidate

RUNS = ROOT / "benchmarks" / "corpus" / "runs-public"


def _phase_forecast(name: str, own: bool) -> float:
    st = load_probe(RUNS / f"probe-{name}.jsonl.gz").state
    phase = st.phases[0]
    cal = Calibration.for_state(st)
    t_it = phase.steady.interval("trimmed")[0]
    n_it = phase.plan_steps_per_epoch
    fc = forecast(st, t_it, n_it * t_it, 100, cal, with_fit_end=False,
                  phase_steps=phase.boundary_steps if own else None)
    return fc.per_boundary


def test_six_alike_boundaries_of_a_later_phase_say_what_its_others_cost() -> None:
    """tensorflow/docs' custom training walkthrough: one demonstration step, then 201 epochs of
    9 eager steps. Its phase's six boundaries cost 6-10 ms each past a step; the stall odds said
    75 ms each (a 126 ms wait at 56 %), 15 s over the run: +52.6 % against its plain run."""
    st = load_probe(RUNS / "probe-tf-custom_training_walkthrough.jsonl.gz").state
    assert untold_alike(st, st.step_time("trimmed")[0]) == 6
    assert _phase_forecast("tf-custom_training_walkthrough", own=False) > 0.05
    assert _phase_forecast("tf-custom_training_walkthrough", own=True) < 0.015
    row = estimate_row(Candidate("w", "w", st), Pricing(Catalog.embedded()), RankOptions())
    truth = json.loads((RUNS / "tf-custom_training_walkthrough.truth.json").read_text())["wall_s"]
    assert abs(row.runtime_s / truth - 1) < 0.25
    assert row.runtime_low_s < truth < row.runtime_high_s


def test_a_few_alike_boundaries_leave_the_odds_to_speak() -> None:
    """keras.io's autoencoder: its second fit()'s two boundaries (13 and 19 ms) and the first's
    waited for no stall - three alike at odds of 43 % is a coin's luck (its 99 to come cost
    67 ms each in its plain run): the forecast keeps the odds."""
    st = load_probe(RUNS / "probe-keras-autoencoder.jsonl.gz").state
    assert untold_alike(st, st.step_time("trimmed")[0]) == 3
    assert _phase_forecast("keras-autoencoder", own=True) > 0.04
    cal = Calibration.for_state(st)
    assert estimate_phase(st.phases[0], cal, st).seconds > 0


def test_a_run_seen_whole_reaches_every_phases_early_stop_in_quadrature() -> None:
    """tensorflow/docs' time-series tutorial: thirteen fit()s, each with an early stop of
    patience 2, seen whole (the probe went on in case each stopped). Its plain run, another draw
    of thirteen stops, came 46 s longer (310 s against 264 s). Every phase's stop is a draw a
    repeat makes again: the bounds reach the later phases' too, not the first one's alone (it
    stopped after 19 of 20 epochs: +1 s) - added in quadrature, as independent draws are, not
    summed (a repeat stopping all thirteen at their last is no run to budget for)."""
    st = load_probe(RUNS / "probe-tf-time_series.jsonl.gz").state
    cal = Calibration.for_state(st)
    est = measured_run(st, estimate_runtime(st, 20))
    first = early_stopped(st, est.terms.n_ep, est.terms.n_it)
    later = [estimate_phase(p, cal, st) for p in st.phases]
    assert len(later) == 12 and all(p.how == "measured" for p in later)
    lows, highs = [p.unseen_low for p in later], [p.unseen_high for p in later]
    u = est.uncertainty
    assert u["unseen_low"] == pytest.approx(math.hypot(first[0], *lows))
    assert u["unseen_high"] == pytest.approx(math.hypot(first[1], *highs))
    assert u["unseen_high"] > 2 * first[1] and u["unseen_high"] < first[1] + sum(highs)
    assert est.low_s < 310.2 < est.high_s  # its plain run (runs-public/tf-time_series.truth)
    assert any("phase 2, 3," in n and "quadrature" in n for n in est.notes)
