"""A probe of a fit() with an EarlyStopping goes on for the program's own end where the early
stop's soonest end (its patience) comes within a few boundary budgets: the run may end there, and
a run seen whole is its own answer where the planned epochs' is only an upper bound. The session
driven as the Keras adapter drives it, on a fake clock, with keras.io's anomaly detector's shape
(69 steps an epoch, 50 epochs, EarlyStopping(patience=5): its soonest end after 6 epochs)."""

from __future__ import annotations

import io
import json
import math
import time

import pytest

from probecast.core.agent.emit import Emitter
from probecast.core.agent.policy import StopPolicy
from probecast.core.agent.probe_session import ProbeSession
from test_wait_for_end import Clock

pytestmark = pytest.mark.unit


def session(monkeypatch: pytest.MonkeyPatch, *, budget: float, epochs: int, soonest: int | None,
            n_it: int = 69) -> tuple[ProbeSession, io.StringIO, Clock]:
    clock = Clock()
    monkeypatch.setattr(time, "monotonic", clock)
    out = io.StringIO()
    s = ProbeSession(Emitter(out=out, t0=clock.now - 4.0, strict=True),
                     StopPolicy(max_steps=30, boundary_budget=budget), sample_interval=None,
                     under_agent=True)
    s.plan(epochs=epochs, source=f"fit(epochs={epochs})",
           **({"earliest_epochs": soonest} if soonest else {}))
    s.begin(steps_per_epoch=n_it, epochs=epochs)
    return s, out, clock


def run(s: ProbeSession, clock: Clock, n: int, dt: float) -> list[bool]:
    """``n`` more steps of ``dt`` s, epochs of the session's N_it; the stops asked for."""
    stops = []
    for _ in range(n):
        clock.now += dt
        i = s.total_steps
        stops.append(s.step(i // s.steps_per_epoch, i % s.steps_per_epoch))
        if stops[-1]:
            break
    return stops


def said(out: io.StringIO) -> list[str]:
    return [e["msg"] for e in map(json.loads, out.getvalue().splitlines()) if e["ev"] == "log"]


def test_an_early_stop_within_reach_is_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    s, out, clock = session(monkeypatch, budget=30.0, epochs=50, soonest=6)
    stops = run(s, clock, 69 * 8, dt=0.015)  # 8 epochs of 15 ms steps: about 8 s
    assert not any(stops)  # past 30 steps and two boundaries, the run may still end itself
    assert any("an early stop can end training from epoch 6 of 50: going on up to 120 s" in m
               for m in said(out))
    clock.now += 112.5  # 120 s after it began going on, at its 30th step
    assert run(s, clock, 1, dt=0.015) == [True]
    assert s.policy.reason.startswith("max-steps 30")
    assert "went on for an early stop, which did not come" in s.policy.reason


def test_an_early_stop_out_of_reach_is_not(monkeypatch: pytest.MonkeyPatch) -> None:
    """keras.io's weather forecaster's shape at its own 10 epochs: 1 172 steps of 50 ms an epoch,
    soonest end after 6 epochs - 350 s away, past four budgets of 30 s: the probe stops as
    without the EarlyStopping (here at its 30 steps, an epoch being too far to reach)."""
    s, out, clock = session(monkeypatch, budget=30.0, epochs=10, soonest=6, n_it=1172)
    stops = run(s, clock, 40, dt=0.05)
    assert stops[-1] is True and len(stops) == 30
    assert not any("early stop" in m for m in said(out))


def test_no_early_stop_or_one_past_the_planned_epochs_stops_as_before(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for soonest, epochs in ((None, 50), (6, 1), (6, 6)):  # (its patience outlasts the epochs)
        s, out, clock = session(monkeypatch, budget=30.0, epochs=epochs, soonest=soonest)
        stops = run(s, clock, 69 * 8, dt=0.015)
        assert stops[-1] is True and len(stops) < 69 * 3, (soonest, epochs)
        assert not any("early stop" in m for m in said(out))


def test_no_budget_no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    s, _, clock = session(monkeypatch, budget=0.0, epochs=50, soonest=6)
    assert run(s, clock, 40, dt=0.015)[-1] is True


def test_a_limit_in_steps_before_the_soonest_stop_is_the_end(monkeypatch: pytest.MonkeyPatch,
                                                               ) -> None:
    """A trainer's max_steps ends the job where it comes first: 300 steps, before the early
    stop's soonest (6 epochs of 69: 414), is not waited past; 600 is."""
    s, out, clock = session(monkeypatch, budget=30.0, epochs=50, soonest=6)
    s.plan(steps=300, source="max_steps")
    stops = run(s, clock, 69 * 8, dt=0.015)
    assert stops[-1] is True and len(stops) < 69 * 3
    assert not any("early stop" in m for m in said(out))
    s, out, clock = session(monkeypatch, budget=30.0, epochs=50, soonest=6)
    s.plan(steps=600, source="max_steps")
    assert not any(run(s, clock, 69 * 8, dt=0.015))
    assert any("an early stop can end training from epoch 6 of 50" in m for m in said(out))


def test_an_early_stop_whose_patience_outlasts_the_epochs_is_no_upper_bound() -> None:
    """keras.io's weather forecaster, at its own one epoch with EarlyStopping(patience=5): its
    soonest stop (6 epochs) comes after the job's end, so the one epoch is the length, not an
    upper bound; the anomaly detector's 50 epochs (patience 5) are one (recorded probes)."""
    from conftest import ROOT

    from probecast.core.model.estimate.runtime import estimate_runtime
    from probecast.core.model.logstore import load_probe

    public = ROOT / "benchmarks" / "corpus" / "runs-public"
    weather = load_probe(public / "probe-keras-timeseries_weather_forecasting.jsonl.gz").state
    assert weather.plan is not None and weather.plan.earliest_epochs == 6
    assert not any("upper bound" in n for n in estimate_runtime(weather, 1).notes)
    assert any("upper bound" in n for n in estimate_runtime(weather, 10).notes)
    anomaly = load_probe(public / "probe-keras-ts_anomaly.jsonl.gz").state
    assert any("upper bound" in n for n in estimate_runtime(anomaly, 50).notes)


def test_a_run_an_early_stop_ended_is_measured_and_its_bounds_reach_other_stop_epochs() -> None:
    """keras.io's graph attention network (100 epochs planned, EarlyStopping(patience=5)): the
    probe went on and saw it stop after 6 epochs - its measured time is the answer; a repeat may
    stop at any epoch up to the 100th, at this run's ~2 s an epoch after the first (whose first
    step traced the model for 16 s): the high bound reaches that run, the low bound this one's
    (recorded probe)."""
    from conftest import ROOT

    from probecast.core.model.pricing import Catalog
    from probecast.core.model.rank.ranking import Pricing, RankOptions, estimate_row
    from probecast.core.model.rows import Candidate
    from probecast.core.model.logstore import load_probe

    st = load_probe(ROOT / "benchmarks" / "corpus" / "runs-public"
                    / "probe-keras-gat.jsonl.gz").state
    assert st.done is not None and st.done.status == "complete"
    assert len(set(st.epochs_done)) == 6 and st.start is not None and st.start.epochs == 100
    row = estimate_row(Candidate("gat", "gat", st), Pricing(Catalog.embedded()), RankOptions())
    assert row.equation == "measured"
    assert any("an early stop ended this run after 6 of 100 epochs" in n for n in row.notes)
    later = [st.time_by_epoch[e] for e in range(1, 6)]
    assert max(later) < 3.0 < st.time_by_epoch[0]
    assert row.runtime_high_s > row.runtime_s + 94 * min(later)
    assert row.runtime_high_s < row.runtime_s + 94 * max(later) + 0.5 * row.runtime_s
    assert row.runtime_low_s > 0.5 * row.runtime_s  # it stopped at the soonest: none sooner


def test_a_lightning_run_an_early_stop_ended_counts_its_epochs_from_its_steps() -> None:
    """pytorch-forecasting's N-BEATS (Lightning, 100 epochs, EarlyStopping(patience=10)): the
    probe's run stopped after 16 epochs; Lightning writes no `epoch` event, so the epochs are
    the ones whose steps the probe saw (recorded probe)."""
    from conftest import ROOT

    from probecast.core.model.pricing import Catalog
    from probecast.core.model.rank.ranking import Pricing, RankOptions, estimate_row
    from probecast.core.model.rows import Candidate
    from probecast.core.model.logstore import load_probe

    st = load_probe(ROOT / "benchmarks" / "corpus" / "runs-public"
                    / "probe-pf-nbeats.jsonl.gz").state
    assert not st.epochs_done and len(st.steps_by_epoch) == 16
    row = estimate_row(Candidate("nb", "nb", st), Pricing(Catalog.embedded()), RankOptions())
    assert row.equation == "measured"
    assert any("an early stop ended this run after 16 of 100 epochs" in n for n in row.notes)
    assert row.runtime_high_s > row.runtime_s + 84 * 2.0  # ~2.5 s an epoch


def test_a_run_that_drew_no_early_stop_reaches_a_repeat_that_does() -> None:
    """pytorch-forecasting's DeepAR example (Lightning, 10 epochs, EarlyStopping(patience=5):
    soonest after 6): its probe went on for the stop and saw the whole run train all 10 epochs -
    no stop came; its plain run stopped after 7 (60.7 s against the probe's 76.1). A run that
    drew no stop is one draw too: its measured time stays the answer, the low bound reaches a
    repeat stopping at the soonest, the high bound nothing past the planned length (recorded
    probe)."""
    from conftest import ROOT

    from probecast.core.model.estimate.early_stop import NONE_CAME
    from probecast.core.model.logstore import load_probe
    from probecast.core.model.pricing import Catalog
    from probecast.core.model.rank.ranking import Pricing, RankOptions, estimate_row
    from probecast.core.model.rows import Candidate

    st = load_probe(ROOT / "benchmarks" / "corpus" / "runs-public" / "probe-pf-ar.jsonl.gz").state
    assert st.plan is not None and (st.plan.epochs, st.plan.earliest_epochs) == (10, 6)
    assert len(st.steps_by_epoch) == 10
    row = estimate_row(Candidate("ar", "ar", st), Pricing(Catalog.embedded()), RankOptions())
    assert row.equation == "measured"
    assert any(n.startswith(NONE_CAME) and "from epoch 6 of 10" in n for n in row.notes)
    per_epoch = min(st.time_by_epoch[e] for e in range(1, 10))
    assert row.runtime_low_s < row.runtime_s - 4 * per_epoch < 60.7 < row.runtime_s
    assert row.uncertainty["unseen_high"] == 0.0


def test_a_later_phases_early_stop_is_not_the_first_phases_upper_bound() -> None:
    """tensorflow/docs' imbalanced-data tutorial: six fit() calls, the first two of 20 epochs
    with no early stop, the third to sixth with EarlyStopping(patience=10). The first phase's
    estimate is no upper bound - it said 'an early stop may end training sooner: this is an
    upper bound for 20 epochs' of a fit() that had none (recorded probe)."""
    from conftest import ROOT

    from probecast.core.model.estimate.early_stop import UPPER_BOUND
    from probecast.core.model.logstore import load_probe
    from probecast.core.model.pricing import Catalog
    from probecast.core.model.rank.ranking import Pricing, RankOptions, estimate_row
    from probecast.core.model.rows import Candidate

    st = load_probe(ROOT / "benchmarks" / "corpus" / "runs-public"
                    / "probe-tf-imbalanced.jsonl.gz").state
    assert [p.plan.earliest_epochs for p in st.phases if p.plan] == [None, 11, 11, 11, 11]
    row = estimate_row(Candidate("imb", "imb", st), Pricing(Catalog.embedded()), RankOptions())
    assert not any(n.startswith(UPPER_BOUND) for n in row.notes), row.notes
    assert any("trains in 6 phases" in n for n in row.notes)


def test_a_later_phase_an_early_stop_ends_reaches_other_stops_in_the_bounds() -> None:
    """The same tutorial's third to sixth fit() calls each stopped early under the probe (after
    17, 17, 12 and 24 of 100, 100, 100 and 1 000 epochs; its plain run after 20, 13, 11, 16):
    each stop is one draw, so the bounds reach a repeat stopping at the soonest (epoch 11) and
    one training every planned epoch, as a whole run's do - the phases' reaches added in
    quadrature, as independent draws are (recorded probe)."""
    from conftest import ROOT

    from probecast.core.model.estimate.phases import estimate_phase
    from probecast.core.model.estimate.bounds import Calibration
    from probecast.core.model.logstore import load_probe
    from probecast.core.model.pricing import Catalog
    from probecast.core.model.rank.ranking import Pricing, RankOptions, estimate_row
    from probecast.core.model.rows import Candidate

    st = load_probe(ROOT / "benchmarks" / "corpus" / "runs-public"
                    / "probe-tf-imbalanced.jsonl.gz").state
    cal = Calibration.for_state(st)
    phases = {p.index: estimate_phase(p, cal, st) for p in st.phases}
    assert phases[2].unseen_low == phases[2].unseen_high == 0.0  # no early stop in it
    five = phases[5]  # 12 epochs of 98 steps ran; soonest 11, planned 100
    per_epoch = (st.phases[3].seconds - (st.phases[3].start_s or 0.0)) / 12
    assert five.how == "measured"
    assert five.unseen_low == pytest.approx(per_epoch) and five.unseen_high == pytest.approx(
        88 * per_epoch)
    row = estimate_row(Candidate("imb", "imb", st), Pricing(Catalog.embedded()), RankOptions())
    # the phases' draws independent: their reaches in quadrature (stop_reach), not summed
    reach_low = math.hypot(*(p.unseen_low for p in phases.values()))
    reach_high = math.hypot(*(p.unseen_high for p in phases.values()))
    assert row.runtime_low_s < row.runtime_s - reach_low
    assert row.runtime_high_s > row.runtime_s + reach_high
    assert any(n.startswith("phase 3, 4, 5, 6: an early stop ends each") for n in row.notes)
