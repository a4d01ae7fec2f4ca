"""Programs that train in phases, one loop after another, on real recorded probe logs
(tests/data/phases/): how the state folds a later phase apart from the first, how the estimate
adds every phase (estimate/phases.py), and what it says where a later phase went unseen."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from probecast.core.agent.steady import DEFAULT_STATISTIC
from probecast.core.model.estimate.phases import estimate_phase, with_phases
from probecast.core.model.estimate.bounds import Calibration
from probecast.core.model.estimate.runtime import estimate_runtime, whole_process
from probecast.core.model.estimate.training import Estimate, training_estimate
from probecast.core.model.events import Done, EventReader, Log, Phase, Plan, Step, Val, read_log
from probecast.core.model.state import ProbeState, fold_all, fold_lines

pytestmark = pytest.mark.unit

DATA = Path(__file__).resolve().parents[1] / "data" / "phases"
TWO_PHASE_PROBES = ("torch_pretrain_finetune.probe.jsonl", "keras_two_tapes.probe.jsonl",
                    "keras_fit_twice.probe.jsonl")


def events_of(name: str) -> list[object]:
    events, report = read_log(DATA / name)
    assert not report.malformed
    return list(events)


def state_of(name: str) -> ProbeState:
    return fold_all(events_of(name))  # type: ignore[arg-type]


def n_ep(state: ProbeState) -> float:
    plan = state.plan
    if plan is not None and plan.epochs:
        return float(plan.epochs)
    if state.start is not None and state.start.epochs:
        return float(state.start.epochs)
    return 1.0  # a loop of steps: one pass


def first_phase(state: ProbeState, epochs: float) -> Estimate:
    """The first phase as a one-loop log is estimated (runtime.py, before the phases)."""
    est = training_estimate(state, epochs, use_validation=True, equation="auto",
                            statistic=DEFAULT_STATISTIC)
    return whole_process(state, est, epochs)


@pytest.mark.parametrize("name", TWO_PHASE_PROBES)
def test_a_later_phase_is_folded_apart_from_the_first(name: str) -> None:
    events = events_of(name)
    at = next(i for i, ev in enumerate(events) if isinstance(ev, Phase))
    first = [ev for ev in events[:at] if isinstance(ev, Step)]
    later = [ev for ev in events[at:] if isinstance(ev, Step)]
    assert first and later and all(ev.phase == 2 for ev in later)
    state = state_of(name)
    assert state.steps == len(first)  # the first phase's steps only
    assert len(state.phases) == 1
    phase = state.phases[0]
    assert phase.index == 2 and phase.steps == len(later)
    # its start-up: the last loop's teardown (fit()'s `done`), the gap and its first step
    done = [ev.dt for ev in events[:at] if isinstance(ev, Done) and ev.t > first[-1].t]
    assert phase.start_s == pytest.approx(later[0].dt + sum(done))
    assert bool(done) == name.startswith("keras_fit")
    assert phase.stopped and state.first_phase_stopped
    assert phase.vals == [ev.dt for ev in events[at:] if isinstance(ev, Val)]
    # the later phase's plan is its own; the first phase's stays as the program said it
    later_plans = [ev for ev in events[at:] if isinstance(ev, Plan)]
    assert phase.plan is not None and phase.plan.epochs == later_plans[-1].epochs
    assert state.plan is None or state.plan.t < events[at].t  # type: ignore[attr-defined]
    # the streaming reader's short path folds the same
    streamed = ProbeState()
    fold_lines((DATA / name).read_text().splitlines(), streamed, EventReader())
    assert streamed.steps == state.steps and streamed.phases[0].steps == phase.steps
    assert streamed.phases[0].steady.mean() == phase.steady.mean()


@pytest.mark.parametrize("name", TWO_PHASE_PROBES)
def test_the_estimate_adds_every_phase(name: str) -> None:
    state = state_of(name)
    epochs = n_ep(state)
    first = first_phase(state, epochs)
    est = estimate_runtime(state, epochs)
    phase = estimate_phase(state.phases[0], Calibration.for_state(state), state)
    assert phase.how == "extrapolated" and phase.steps == state.phases[0].planned_steps
    assert math.isclose(est.runtime_s, first.runtime_s + phase.seconds, rel_tol=1e-9)
    assert est.terms.phases == 2
    shares = [float(s) for s in est.terms.phase_s.split(",")]
    assert shares == pytest.approx([first.runtime_s, phase.seconds], abs=1e-3)
    # the later phase's own terms: its start-up, then its steps at its own steady step
    p = state.phases[0]
    assert phase.steps is not None
    assert phase.seconds >= (p.start_s or 0.0) + (phase.steps - 1) * p.steady.mean() * 0.5
    # bounds widen by the later phase's spread, never narrow
    assert est.high_s - est.runtime_s >= first.high_s - first.runtime_s
    assert est.runtime_s - est.low_s >= first.runtime_s - first.low_s
    assert est.uncertainty["phases"] > 0
    assert any("trains in 2 phases" in note for note in est.notes)


def test_a_phase_seen_to_its_end_is_measured() -> None:
    """The whole run (--full): the second loop ran to its end under the probe - its time is
    what the log measured, every step of it."""
    state = state_of("torch_pretrain_finetune.full.jsonl")
    phase = state.phases[0]
    assert not phase.stopped and phase.planned_steps == phase.steps == 450
    assert state.steps == 400  # the first loop's every step, none of the second's
    est = estimate_phase(phase, Calibration.for_state(state), state)
    assert est.how == "measured" and est.seconds == pytest.approx(phase.seconds)
    events = events_of("torch_pretrain_finetune.full.jsonl")
    at = next(i for i, ev in enumerate(events) if isinstance(ev, Phase))
    assert events[at].previous == "complete"  # type: ignore[attr-defined]
    timed = sum(ev.dt for ev in events[at:] if isinstance(ev, (Step, Val)))
    assert phase.seconds == pytest.approx(timed)


def test_a_phase_of_unknown_length_is_counted_as_seen_and_widens_the_high_bound() -> None:
    events = [ev for ev in events_of("torch_pretrain_finetune.probe.jsonl")
              if not (isinstance(ev, Plan) and ev.t > next(
                  e.t for e in events_of("torch_pretrain_finetune.probe.jsonl")
                  if isinstance(e, Phase)))]
    state = fold_all(events)  # type: ignore[arg-type]
    assert state.phases[0].planned_steps is None
    est = estimate_phase(state.phases[0], Calibration.for_state(state), state)
    assert est.how == "as seen" and est.seconds == pytest.approx(state.phases[0].seconds)
    assert est.unseen_high == pytest.approx(est.seconds)
    whole = estimate_runtime(state, n_ep(state))
    assert any("phase 2's length is unknown" in note for note in whole.notes)


def test_a_loop_only_unwound_says_the_estimate_covers_the_first_phase() -> None:
    """No loader to run dry: the probe unwound the loop; the source trains on after it."""
    events = events_of("torch_unwound.probe.jsonl")
    assert any(isinstance(ev, Log) and ev.code == "more-phases" for ev in events)
    state = fold_all(events)  # type: ignore[arg-type]
    assert not state.phases
    est = estimate_runtime(state, n_ep(state))
    without = fold_all([ev for ev in events  # type: ignore[arg-type]
                        if not (isinstance(ev, Log) and ev.code == "more-phases")])
    alone = estimate_runtime(without, n_ep(without))
    assert est.runtime_s == pytest.approx(alone.runtime_s)  # nothing seen, nothing added
    assert est.high_s > alone.high_s  # ... but the high bound allows one more phase
    assert est.terms.fit_s is not None
    assert est.high_s - alone.high_s == pytest.approx(est.terms.fit_s)
    assert any("covers phase 1 of at least 2" in note for note in est.notes)


def test_a_one_loop_log_is_left_as_it_was() -> None:
    events = events_of("torch_pretrain_finetune.probe.jsonl")
    at = next(i for i, ev in enumerate(events) if isinstance(ev, Phase))
    state = fold_all(events[:at])  # type: ignore[arg-type]
    est = first_phase(state, n_ep(state))
    assert with_phases(state, est) is est


@pytest.mark.parametrize("name", TWO_PHASE_PROBES)
def test_a_job_ranked_per_steps_says_the_rate_is_the_first_phases(name: str) -> None:
    """Its length unknown, a phased job is ranked per 1 000 steps at phase 1's step; the
    estimate says so, with each later phase's own step time."""
    from probecast.core.model.estimate.runtime import per_steps_estimate

    state = state_of(name)
    est = per_steps_estimate(state, 1000)
    note = next(n for n in est.notes if "trains in 2 phases" in n)
    t2 = state.phases[0].steady.interval(DEFAULT_STATISTIC)[0]
    assert f"phase 2 {t2 * 1e3:.3g} ms" in note
    assert est.terms.t_it == state.step_time(DEFAULT_STATISTIC)[0]  # phase 1's rate


@pytest.mark.parametrize("name", TWO_PHASE_PROBES)
def test_a_length_given_by_the_user_is_said_to_be_the_first_phases(name: str) -> None:
    from probecast.core.model.pricing import Catalog
    from probecast.core.model.rank.ranking import Pricing, RankOptions, estimate_row
    from probecast.core.model.rows import Candidate

    state = state_of(name)
    pricing = Pricing(Catalog.embedded())
    said = "the length given is phase 1's; the 1 later phase(s) keep"
    given = estimate_row(Candidate("c", "c", state), pricing, RankOptions(epochs=3))
    assert any(said in note for note in given.notes)
    own = estimate_row(Candidate("c", "c", state), pricing, RankOptions())
    assert not any(said in note for note in own.notes)


def test_a_later_fit_forecasts_its_boundary_stalls_as_the_first_does() -> None:
    """keras.io's autoencoder fits twice; its tf.data epoch boundaries stall on the autotuner's
    wake-up with odds about one in two. The probe saw two of the second fit's boundaries cost
    0.016 s above a step; its whole run's cost 0.067 s. The second phase's 99 boundaries are
    forecast as the first's are (stalls.py), not taken from those two: 56.6 s against the 60.7 s
    the whole run spent in it (the two seen alone gave 52.2 s, -14 %; what is left is the step
    time, 7 % slower over the whole second fit than over its probe)."""
    state = state_of("keras_autoencoder.probe.jsonl")
    whole = fold_all(events_of("keras_autoencoder.full.jsonl.gz"))  # type: ignore[arg-type]
    truth = whole.phases[0].seconds
    assert 58 < truth < 63  # its steps and validation passes
    cal = Calibration.for_state(state)
    assert cal.stalls  # tf.data's mechanism
    phase = state.phases[0]
    later = estimate_phase(phase, cal, state)
    assert later.how == "extrapolated" and later.steps == 1200
    t_it = phase.steady.interval(DEFAULT_STATISTIC)[0]
    seen = sum(b - t_it for b in phase.boundary_steps) / len(phase.boundary_steps)
    assert seen < 0.02  # the two boundaries the probe saw in this phase: no stall
    assert later.seconds > 52.2 + 3  # the stalls those two did not show
    assert abs(later.seconds - truth) / truth < 0.08, (later.seconds, truth)


@pytest.mark.parametrize("name", TWO_PHASE_PROBES)
def test_the_rows_length_says_it_is_phase_ones_and_counts_the_later_phases(name: str) -> None:
    """What the ranking's header and the views print: the length read is phase 1's."""
    from probecast.core.model.pricing import Catalog
    from probecast.core.model.rank.ranking import Pricing, RankOptions, estimate_row
    from probecast.core.model.rows import Candidate

    row = estimate_row(Candidate("c", "c", state_of(name)), Pricing(Catalog.embedded()),
                       RankOptions())
    assert row.length.endswith(" in phase 1, + 1 later phase")
