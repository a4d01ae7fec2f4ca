"""A later phase's epoch boundaries forecast from its own (core/model/estimate/stalls.py,
phases.py), on recorded probes of public scripts: the boundaries the probe saw in that phase say
what the ones to come cost, where so many came out alike that chance is unlikely; fewer leave
the stall odds to speak."""

from __future__ import annotations

import json

from conftest import ROOT

from probecast.core.model.estimate.bounds import Calibration
from probecast.core.model.estimate.phases import estimate_phase
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
