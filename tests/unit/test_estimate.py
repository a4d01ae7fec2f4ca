from __future__ import annotations

import math

import pytest

from probecast.core.model.estimate.runtime import NoEstimate, eq_5_1, eq_5_3, eq_5_4, estimate_runtime, parse_horizons
from probecast.core.model.estimate.epoch_work import EpochWork
from probecast.core.model.state import fold_all
from probecast.core.model.events import EventReader


def state_of(builder):  # type: ignore[no-untyped-def]
    reader = EventReader()
    import json
    return fold_all(list(reader.read(json.dumps(e) for e in builder.events)))


# Malta 2021, Table 5.2: batch, first epoch, average epoch, init, epochs, "Estimated time (s)"
TABLE_5_2 = [
    (256, 13.69, 11.05, 0.18, 13, 146.47),
    (512, 14.22, 9.96, 0.19, 11, 114.01),
    (1024, 18.95, 10.05, 0.20, 12, 129.70),
    (2048, 33.06, 15.6, 0.19, 16, 267.25),
]


@pytest.mark.parametrize("batch,ep1,ep2,init,n_ep,expected", TABLE_5_2)
def test_eq_5_1_reproduces_table_5_2(batch, ep1, ep2, init, n_ep, expected):  # type: ignore[no-untyped-def]
    assert eq_5_1(init, ep1, ep2, n_ep) == pytest.approx(expected, abs=0.005)


@pytest.mark.parametrize("batch,ep1,ep2,init,n_ep,expected", TABLE_5_2)
def test_eq_5_1_from_a_log_with_two_whole_epochs(log_builder, batch, ep1, ep2, init, n_ep, expected):  # type: ignore[no-untyped-def]
    n_it = 4
    b = log_builder(steps_per_epoch=n_it, val_steps=1, epochs=n_ep).init(init)
    b.steps(0, [ep1 - 3 * 0.5 - 0.2, 0.5, 0.5, 0.5]).val(0, 0.2, 1).epoch(0)
    b.steps(1, [ep2 - 3 * 0.5 - 0.2, 0.5, 0.5, 0.5]).val(1, 0.2, 1).epoch(1)
    est = estimate_runtime(state_of(b), n_ep, equation="5.1")  # auto wants three whole epochs
    assert est.equation == "5.1"
    assert est.runtime_s == pytest.approx(expected, abs=0.005)
    assert est.terms.t_ep1 == pytest.approx(ep1) and est.terms.t_ep2 == pytest.approx(ep2)


def test_eq_5_3_hand_computed() -> None:
    # T_init 2, T_it1 5, N_it 100, T_it 0.1, T_val1 3, T_val 1, 10 epochs:
    # 2 + 5 + 99*0.1 + 3 + 9*(100*0.1 + 1) = 2 + 5 + 9.9 + 3 + 99 = 118.9
    assert eq_5_3(2, 5, 0.1, 100, 10, 3, 1) == pytest.approx(118.9)
    # without validation (Eq. 5.4): 2 + 5 + 9.9 + 9*10 = 106.9
    assert eq_5_4(2, 5, 0.1, 100, 10) == pytest.approx(106.9)
    # with an epoch-boundary cost of 4 s: + 9*4
    assert eq_5_3(2, 5, 0.1, 100, 10, 3, 1, t_ep=4) == pytest.approx(154.9)


def test_estimate_from_probe_log_uses_eq_5_3_with_steady_step(log_builder) -> None:  # type: ignore[no-untyped-def]
    b = log_builder(steps_per_epoch=100, val_steps=10, epochs=10).init(2.0)
    b.steps(0, [5.0] + [0.1] * 29).val(0, 3.0, 10).val(0, 1.0, 10).end()
    est = estimate_runtime(state_of(b), 10)
    assert est.equation == "5.3"
    assert est.terms.t_it == pytest.approx(0.1)
    assert est.terms.t_val1 == pytest.approx(3.0) and est.terms.t_val == pytest.approx(1.0)
    assert est.runtime_s == pytest.approx(118.9)
    assert any("epoch boundaries (none seen)" in n for n in est.notes)
    no_val = estimate_runtime(state_of(b), 10, use_validation=False)
    assert no_val.equation == "5.4" and no_val.runtime_s == pytest.approx(106.9)


def _every_tenth(log_builder, vals: dict[int, float], epochs: int = 3,  # type: ignore[no-untyped-def]
                 total: int = 40, **plan: object):
    """``total`` epochs of 10 steps, evaluated `if epoch % 10 == 0` (the plan says so, and
    what ``plan`` adds); the probe saw ``epochs`` epochs, a validation pass after those in
    ``vals``."""
    b = log_builder(steps_per_epoch=10, val_steps=5, epochs=total).init(2.0)
    b.events.append({"ev": "plan", "t": b.t, "epochs": total, "steps": 10 * total,
                     "every_epochs": 10, "every_epochs_at": 0,
                     "every_source": "if epoch % 10 == 0 (train.py:9)", **plan})
    for e in range(epochs):
        b.steps(e, [1.0 if e == 0 else 0.1] + [0.1] * 9)
        if e in vals:
            b.val(e, vals[e], 5)
    return b


def test_validation_every_kth_epoch_is_counted_after_those_epochs(log_builder) -> None:  # type: ignore[no-untyped-def]
    """`if epoch % 10 == 0: evaluate()` over 40 epochs: 4 passes, not 40 (a pass after epoch 0
    was counted at every epoch: +104 % on such a job)."""
    b = _every_tenth(log_builder, {0: 3.0})
    est = estimate_runtime(state_of(b), 40)
    assert est.equation == "5.3" and est.terms.n_val == 4
    # 2 + 1 + 9 x 0.1 + 39 x (10 x 0.1) + 3 + 3 x 3: its one pass stands for the later ones
    assert est.terms.t_val1 == pytest.approx(3.0) and est.terms.t_val == pytest.approx(3.0)
    assert est.runtime_s == pytest.approx(2 + 1 + 0.9 + 39 * 1.0 + 3 + 3 * 3.0, rel=0.02)
    assert any("after epochs 1, 11, 21, ... (4 of 40)" in n for n in est.notes)
    assert "+ (4-1) x 3.000" in est.formula()


def test_work_after_every_kth_epoch_lands_on_those_boundaries_only(log_builder) -> None:  # type: ignore[no-untyped-def]
    """`if epoch % 10 == 0: save()` (no pass over a loader): the boundary after epoch 0 carried
    2 s of it, the next none - 4 of the 39 boundaries carry it, the others cost the plain one's
    (a DataLoader's first boundary's excess had been taken as one-off work: none counted)."""
    b = log_builder(steps_per_epoch=10, val_steps=0, epochs=40, framework="torch 2.13.0")
    b.init(2.0)
    b.events.append({"ev": "plan", "t": b.t, "epochs": 40, "steps": 400, "every_epochs": 10,
                     "every_epochs_at": 0, "every_source": "if epoch % 10 == 0 (train.py:9)"})
    b.steps(0, [1.0] + [0.1] * 9).steps(1, [2.15] + [0.1] * 9).steps(2, [0.15] + [0.1] * 9)
    est = estimate_runtime(state_of(b), 40)
    t = est.terms
    assert (t.n_per, t.every) == (4, 100) and t.t_per == pytest.approx(2.0, abs=0.01)
    assert t.t_ep == pytest.approx(0.05, abs=0.01)
    assert any("after epochs 1, 11, 21, ... (4 of 40)" in n for n in est.notes)
    assert "+ 4 x 2.000" in est.formula()


def test_validation_every_kth_epoch_and_the_last_counts_the_last(log_builder) -> None:  # type: ignore[no-untyped-def]
    """`if epoch % 10 == 0 or epoch == args.epochs - 1:` over 45 epochs: after epochs 1, 11,
    21, 31, 41 and 45 - 6 passes."""
    b = _every_tenth(log_builder, {0: 3.0}, total=45, every_epochs_last=True)
    est = estimate_runtime(state_of(b), 45)
    assert est.equation == "5.3" and est.terms.n_val == 6
    assert any("after epochs 1, 11, 21, ... and the last (6 of 45)" in n for n in est.notes)
    assert estimate_runtime(state_of(b), 41).terms.n_val == 5  # its 41st is named already


@pytest.mark.parametrize(("work", "epochs", "of", "n"), [
    (EpochWork(10, 9, first=True, last=True), 45, 45, 6),  # 1, 10, 20, 30, 40, 45 (from 1)
    (EpochWork(10, 9, first=True, last=True), 44, 45, 5),  # the boundaries: not the last
    (EpochWork(10, 9, last=True), 40, 40, 4),  # the last is the 40th: named already
    (EpochWork(10, 0, first=True), 40, 40, 4),  # the first: named already
    (EpochWork(10, 3, last=True), 1, 1, 1),  # a job of one epoch: its last
    (EpochWork(10, 0), 40, 40, 4),
    (EpochWork(10, 0, start=6), 40, 40, 3),  # `epoch > 5 and epoch % 10 == 0`: 10, 20, 30
    (EpochWork(10, 0, start=12, last=True), 40, 40, 3),  # 20, 30 and the last
    (EpochWork(10, 0, start=41), 40, 40, 0),
])
def test_the_epochs_work_follows_are_counted_once(work: EpochWork, epochs: int, of: int,
                                                  n: int) -> None:
    assert work.after(epochs, of) == n
    assert sum(work.named(j, of) for j in range(epochs)) == n
    assert work.first_named == next((j for j in range(200) if work.named(j)), None)


@pytest.mark.parametrize("vals,epochs", [
    ({0: 3.0, 1: 3.0}, 3),  # a pass after an epoch the plan does not name: one every epoch
    ({0: 3.0}, 1),  # no epoch the plan does not name ended: nothing says the others have none
])
def test_validation_stays_one_an_epoch_unless_the_probe_saw_an_epoch_end_without(
        log_builder, vals, epochs) -> None:  # type: ignore[no-untyped-def]
    est = estimate_runtime(state_of(_every_tenth(log_builder, vals, epochs)), 40)
    assert est.terms.n_val is None
    assert not any("after epochs" in n for n in est.notes)


def test_partial_validation_is_scaled_and_first_pass_overhead_added_once(log_builder) -> None:  # type: ignore[no-untyped-def]
    # 2 of 10 batches timed: first pass 0.9 s (0.5 s one-off + 2 x 0.2), second 0.4 s (2 x 0.2).
    b = log_builder(steps_per_epoch=100, val_steps=10).init(2.0)
    b.steps(0, [5.0] + [0.1] * 29).val(0, 0.9, 2).val(0, 0.4, 2).end()
    st = state_of(b)
    t_val1, t_val, partial = st.validation_times()
    assert partial
    assert t_val == pytest.approx(0.4 * 5)  # 10 batches x 0.2 s
    assert t_val1 == pytest.approx(2.0 + 0.5)  # full pass + the one-off 0.5 s, not 0.9 x 5
    # a single partial pass can only be scaled as a whole
    b1 = log_builder(steps_per_epoch=100, val_steps=10).init(2.0)
    b1.steps(0, [5.0] + [0.1] * 29).val(0, 0.6, 3).end()
    t_val1, t_val, _ = state_of(b1).validation_times()
    assert t_val1 == pytest.approx(2.0) and t_val == pytest.approx(2.0)


def test_partial_passes_of_two_lengths_separate_fixed_and_per_batch_cost(log_builder) -> None:  # type: ignore[no-untyped-def]
    # Each pass costs 0.3 s fixed + 0.05 s per batch; the first also 1.0 s of tracing.
    b = log_builder(steps_per_epoch=100, val_steps=40).init(2.0)
    b.steps(0, [5.0] + [0.1] * 29).val(0, 1.0 + 0.3 + 0.25, 5).val(0, 0.3 + 0.25, 5).val(0, 0.3 + 0.5, 10).end()
    t_val1, t_val, partial = state_of(b).validation_times()
    assert partial
    assert t_val == pytest.approx(0.3 + 0.05 * 40)
    assert t_val1 == pytest.approx(0.3 + 0.05 * 40 + 1.0)


def test_whole_validation_passes_win_over_partial_ones(log_builder) -> None:  # type: ignore[no-untyped-def]
    b = log_builder(steps_per_epoch=5, val_steps=10).init(1.0)
    b.steps(0, [2.0, 0.1, 0.1, 0.1, 0.1]).val(0, 0.8, 10).epoch(0).steps(1, [3.0])
    b.val(1, 0.5, 2).val(1, 0.4, 2).val(1, 0.6, 4).end()
    t_val1, t_val, _ = state_of(b).validation_times()
    assert t_val1 == pytest.approx(0.8)  # the whole pass as measured
    # the partial passes' line (a=0.2, b=0.1) extrapolates to 1.2 s for 10 batches; a later pass
    # has no tracing, so it cannot cost more than the whole first one: bounded at 0.8
    assert t_val == pytest.approx(0.8)


def test_epoch_boundary_cost_is_measured_and_added_per_later_epoch(log_builder) -> None:  # type: ignore[no-untyped-def]
    b = log_builder(steps_per_epoch=5, val_steps=0).init(1.0)
    b.steps(0, [3.0, 0.1, 0.1, 0.1, 0.1]).epoch(0)
    b.steps(1, [4.1, 0.1, 0.1]).end()  # 4.0 s boundary cost, epoch 1 not whole
    est = estimate_runtime(state_of(b), 10)
    assert est.equation == "5.4"
    assert est.terms.t_ep == pytest.approx(4.0)
    assert est.terms.boundaries_seen == 1
    assert est.runtime_s == pytest.approx(eq_5_4(1.0, 3.0, 0.1, 5, 10, t_ep=4.0))
    assert "t_ep" in est.formula() or "+ 4.000" in est.formula()


def test_bounds_bracket_the_estimate_and_allow_for_what_was_not_seen(log_builder) -> None:  # type: ignore[no-untyped-def]
    import random

    from probecast.core.model.estimate.bounds import OTHER, mechanism

    rnd = random.Random(1)
    b = log_builder(steps_per_epoch=200).init(1.0)
    b.steps(0, [2.0] + [0.1 + rnd.gauss(0, 0.01) for _ in range(40)]).end()
    st = state_of(b)
    assert mechanism(st) == OTHER  # no framework named: no recorded runs of its mechanism
    est = estimate_runtime(st, 20)
    assert est.low_s < est.runtime_s < est.high_s
    # no boundary seen: the point leaves them out; the high side allows a Keras-like stall at
    # each of the 19 to come and the end of training
    assert est.terms.t_ep == 0.0
    assert est.uncertainty["unseen_high"] > 0
    assert est.high_s - est.runtime_s >= est.uncertainty["unseen_high"]
    assert any("no recorded runs" in n for n in est.notes)
    # two boundaries seen (3 s each): in the point, and the bounds say their cost varies both ways
    b2 = log_builder(steps_per_epoch=40).init(1.0)
    b2.steps(0, [2.0] + [0.1] * 39).steps(1, [3.1] + [0.1] * 39).steps(2, [3.1]).end()
    est2 = estimate_runtime(state_of(b2), 20)
    assert est2.terms.t_ep == pytest.approx(3.0, abs=0.01) and est2.terms.boundaries_seen == 2
    assert est2.low_s < est2.runtime_s - 19 * 1.0 and est2.high_s > est2.runtime_s + 19 * 1.0


def test_no_estimate_reasons(log_builder) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(NoEstimate, match="no training steps"):
        estimate_runtime(state_of(log_builder().init(1.0).end("failed")), 10)
    with pytest.raises(NoEstimate, match="steps in an epoch are unknown"):
        estimate_runtime(state_of(log_builder(steps_per_epoch=0).init(1.0).steps(0, [1, 1])), 10)
    with pytest.raises(NoEstimate, match="positive"):
        estimate_runtime(state_of(log_builder().init(1.0).steps(0, [1, 1])), 0)


def test_horizon_parsing() -> None:
    assert parse_horizons("5,10,20,25") == (5, 10, 20, 25)
    with pytest.raises(ValueError):
        parse_horizons("5,ten")
    with pytest.raises(ValueError):
        parse_horizons("0")


def test_statistic_second_iteration_matches_dissertation_baseline(log_builder) -> None:  # type: ignore[no-untyped-def]
    b = log_builder(steps_per_epoch=100).init(1.0).steps(0, [5.0, 0.3, 0.1, 0.1, 0.1]).end()
    st = state_of(b)
    assert estimate_runtime(st, 1, statistic="second").terms.t_it == pytest.approx(0.3)
    assert estimate_runtime(st, 1, statistic="median").terms.t_it == pytest.approx(0.1)
    assert not math.isnan(estimate_runtime(st, 1, statistic="trimmed").terms.t_it)


def test_large_series_trimmed_mean_matches_the_exact_one() -> None:
    import random

    from probecast.core.agent.steady import TRIM, StepSeries, trimmed_interval, trimmed_interval_large

    rnd = random.Random(3)
    s = StepSeries()
    for _ in range(20_000):
        s.add(0.05 + rnd.random() * 0.01 + (0.5 if rnd.random() < 0.01 else 0.0))
    exact = trimmed_interval(sorted(s.values), TRIM)
    assert trimmed_interval_large(s.values, TRIM) == pytest.approx(exact, rel=1e-12)
    assert s.interval("trimmed") == pytest.approx(exact, rel=1e-12)  # the large-n path is used


def test_line_fold_equals_event_fold(log_builder) -> None:  # type: ignore[no-untyped-def]
    import json

    from probecast.core.model.events import EventReader
    from probecast.core.model.state import ProbeState, fold_lines

    b = log_builder(steps_per_epoch=5, val_steps=2).init(1.0)
    b.steps(0, [3.0, 0.1, 0.12, 0.1, 0.11]).val(0, 0.5, 2).epoch(0, val_accuracy=0.5)
    b.steps(1, [4.1, 0.1]).end()
    lines = [json.dumps(e, separators=(",", ":")) for e in b.events] + ["{bad"]
    a = ProbeState()
    fold_lines(lines, a, ra := EventReader())
    e = state_of(b)
    assert (a.steps, a.t_it1, a.boundary_steps, list(a.steady.values), a.elapsed) == \
        (e.steps, e.t_it1, e.boundary_steps, list(e.steady.values), e.elapsed)
    assert ra.report.lines == len(lines) and len(ra.report.malformed) == 1


def test_the_whole_process_adds_start_up_the_end_of_fit_and_post_work(log_builder) -> None:  # type: ignore[no-untyped-def]
    b = log_builder(steps_per_epoch=40).init(5.0)
    b.steps(0, [1.0] + [0.1] * 39).timed("done", 2.5, status="probe-done")
    b.timed("end", 3.0, status="probe-done", exit_code=0)
    st = state_of(b)
    assert st.fit_end_time == 2.5 and st.post_time == 3.0
    est = estimate_runtime(st, 1)
    # 5 (start-up) + 1 + 39 x 0.1 (one epoch) + 2.5 (fit returns) + 3 (post-training work)
    assert est.runtime_s == pytest.approx(5 + 1 + 3.9 + 2.5 + 3.0)
    assert est.terms.fit_s == pytest.approx(4.9) and est.terms.t_post == 3.0
    assert est.low_s <= est.runtime_s <= est.high_s


def test_fit_in_a_loop_puts_each_calls_teardown_into_its_boundary(log_builder) -> None:  # type: ignore[no-untyped-def]
    b = log_builder(steps_per_epoch=20).init(1.0)
    for e in range(3):  # three fit(epochs=1) calls: done after each, then the next call
        b.steps(e, [0.5 if e == 0 else 1.1] + [0.1] * 19).timed("done", 0.8, status="complete")
    b.timed("end", 0.4, status="complete", exit_code=0)
    st = state_of(b)
    assert st.boundary_steps == pytest.approx([1.9, 1.9])  # 1.1 + the previous call's 0.8
    assert st.fit_end_time == pytest.approx(0.8) and st.post_time == 0.4


def test_start_up_varies_between_runs_and_the_bounds_allow_for_it(log_builder) -> None:  # type: ignore[no-untyped-def]
    """Imports and data loading measured once (20 s here) come back shorter or longer in the real
    run (the page cache, the disk): the low bound is not pinned to the probe's start-up."""
    from dataclasses import replace

    from probecast.core.model.estimate.bounds import Calibration
    from probecast.core.model.estimate.runtime import training_estimate, whole_process

    b = log_builder(steps_per_epoch=40).init(20.0)
    b.steps(0, [1.0] + [0.1] * 39).timed("done", 0.1, status="probe-done")
    b.timed("end", 0.1, status="probe-done", exit_code=0)
    st = state_of(b)
    cal = replace(Calibration.load(), init_rel=0.1, q=2.0)
    kw = {"use_validation": True, "equation": "auto", "statistic": "trimmed"}
    est = whole_process(st, training_estimate(st, 1, **kw), 1, cal)
    assert est.uncertainty["init"] == pytest.approx(2.0)
    assert est.low_s <= est.runtime_s - 0.2 * 20.0  # the run with a start-up 20 % shorter is inside
    assert est.high_s > est.runtime_s + 2 * 2.0 * 0.99
    none = whole_process(st, training_estimate(st, 1, **kw), 1, replace(cal, init_rel=0.0))
    assert none.low_s > est.runtime_s - 0.2 * 20.0  # without it: outside


def test_post_training_work_that_failed_is_a_lower_bound(log_builder) -> None:  # type: ignore[no-untyped-def]
    b = log_builder(steps_per_epoch=40).init(1.0)
    b.steps(0, [1.0] + [0.1] * 39).timed("done", 0.1, status="probe-done")
    b.timed("end", 2.0, status="probe-done", exit_code=1)
    est = estimate_runtime(state_of(b), 1)
    assert any("lower bound" in n for n in est.notes)
    assert est.high_s >= est.runtime_s + 2.0


def test_the_estimate_carries_the_drift_and_the_window() -> None:
    """A recorded GPU probe (torch.compile settling on an H200): the row a user gets from
    ``estimate --json`` names the trend, its size and the steady steps the step time came from;
    the same probe cut mid-settling says it ended while still speeding up."""
    import json
    from pathlib import Path

    from probecast.core.model.calibrate.runs import read
    from probecast.core.model.logstore import load_probe
    from probecast.core.model.pricing import Catalog
    from probecast.core.model.rank.ranking import Pricing, RankOptions, estimate_row
    from probecast.core.model.rows import Candidate

    root = Path(__file__).resolve().parents[2]
    record = load_probe(root / "sample_logs" / "gpu-h200" / "probe-gpt_loop_compile-b64.jsonl")
    row = estimate_row(Candidate("c", "c", record.state), Pricing(Catalog.embedded()),
                       RankOptions())
    terms = json.loads(json.dumps(row.terms))
    assert terms["drift"] == "speeding up"
    assert terms["drift_per_100"] < 0 and terms["drift_change"] < 0
    assert (terms["window_first"], terms["window_last"]) == (0, record.state.steady.n)
    assert terms["ended_moving"] in ("", "speeding up")

    full = read(root / "benchmarks" / "corpus" / "runs-gpu-h200" / "gpt_loop_compile-b64.jsonl.gz")
    steps = [e for e in full if type(e).__name__ == "Step"]
    cut = fold_all(_through(full, steps[401]))  # ~400 steady steps: mid-settling
    est = estimate_runtime(cut, 1.0, n_it=800)
    assert est.terms.ended_moving == "speeding up"
    assert any("still speeding up" in n for n in est.notes)


def _through(events, last):  # type: ignore[no-untyped-def]
    """The events up to and including ``last`` (a live probe's log, cut there)."""
    out = []
    for e in events:
        out.append(e)
        if e is last:
            break
    return out


@pytest.mark.parametrize("name", ["probe-pt-reinforce", "probe-pt-actor_critic"])
def test_a_rate_over_an_unknown_length_has_a_low_bound_above_zero(name: str) -> None:
    """pytorch/examples' REINFORCE and actor-critic train until solved: ranked per 1 000 steps
    where a probe stops before they are (their recorded probes saw them whole), their step level's wander over a run of unknown length gave +-110 % and a low bound of 0.0 s.
    The wander is a factor: the low bound is 1/(1 + r) of the rate as the high one is 1 + r."""
    from conftest import ROOT

    from probecast.core.model.estimate.runtime import per_steps_estimate
    from probecast.core.model.logstore import load_probe

    state = load_probe(ROOT / "benchmarks" / "corpus" / "runs-public" / f"{name}.jsonl.gz").state
    est = per_steps_estimate(state, 1000)
    r = est.high_s / est.runtime_s - 1
    assert r > 1  # this wide: a straight half-width would reach below 0
    assert est.low_s == pytest.approx(est.runtime_s / (1 + r))


def test_a_run_seen_whole_varies_in_a_repeat_over_all_its_work_not_its_training_alone() -> None:
    """keras.io's char-LSTM (recorded): four one-epoch fits, and between them 1 600 predict()
    calls generating text - 80 % of the run. A repeat of it moves with the host over all of that:
    the measured answer's drift is over the work after start-up, not over the fits alone."""
    from conftest import ROOT

    from probecast.core.model.estimate.bounds import Calibration
    from probecast.core.model.estimate.runtime import measured_run
    from probecast.core.model.logstore import load_probe

    path = ROOT / "benchmarks" / "corpus" / "runs-public" / "probe-keras-char-lstm.jsonl.gz"
    state = load_probe(path).state
    est = measured_run(state, estimate_runtime(state, 1))
    assert est.equation == "measured"
    work = est.runtime_s - (state.t_init or 0.0)
    assert (est.terms.fit_s or 0.0) < 0.5 * work  # most of the run is not training
    cal = Calibration.for_state(state)
    rel = math.hypot(cal.drift_base, cal.drift_per_sqrt_s / math.sqrt(work))
    assert est.uncertainty["drift"] == pytest.approx(rel * work, rel=0.02)


def test_a_keras_run_seen_whole_allows_for_a_repeat_drawing_its_stalls_again() -> None:
    """keras.io's Siamese contrastive example, seen whole by its probe (42.0 s): its plain run,
    right after, waited 20.6 s for a tf.data wake-up between fit() and evaluate() that the
    probe's run did not (52.9 s). Each teardown is a draw of a stall; a repeat draws again, so
    the estimate takes each teardown's stall at its odds (this run's draw, none, left out) and
    the bounds allow for the rest - a PyTorch run seen whole (its DataLoader does not stall)
    keeps its measured time and the drift's bounds alone."""
    from conftest import ROOT

    from probecast.core.model.estimate.runtime import measured_run
    from probecast.core.model.logstore import load_probe

    public = ROOT / "benchmarks" / "corpus" / "runs-public"
    state = load_probe(public / "probe-keras-siamese-contrastive.jsonl.gz").state
    est = measured_run(state, estimate_runtime(state, float(len(state.epochs_done))))
    seen = state.end.t - state.agent_init_s - state.hook_s * state.steps  # type: ignore[union-attr]
    assert est.equation == "measured" and seen == pytest.approx(42.0, abs=0.1)
    # its one teardown was due a wait of ~13 s and did not pay it: a repeat pays it at its odds
    assert seen + 2.0 < est.runtime_s < 52.9 < est.high_s
    assert est.uncertainty["boundaries"] > 0 and est.low_s <= seen
    assert any("a repeat's" in n and "may stall" in n and "on average" in n for n in est.notes)
    torch_state = load_probe(public / "probe-tut-bow-classifier.jsonl.gz").state
    torch_est = measured_run(torch_state, estimate_runtime(torch_state, 100))
    assert torch_est.equation == "measured" and torch_est.uncertainty["boundaries"] == 0.0
    assert not any("may stall" in n for n in torch_est.notes)


def test_a_boundary_tells_a_stall_it_paid_one_it_did_not_or_neither() -> None:
    """After an iterator of 11.43 s the autotuner's next wake-up is at 20.47 s: a boundary of
    9.0 s paid that wait, one of 0.05 s did not (9.04 s were due); after one of 1.04 s the wait
    due (0.23 s) is too short to tell from a boundary's own cost."""
    from probecast.core.model.estimate.wakeups import told

    assert told(11.43, 9.0) == ("stalled", pytest.approx(20.47 - 11.43, abs=0.25))
    assert told(11.43, 0.05) == ("cheap", pytest.approx(9.04, abs=0.01))
    assert told(1.04, 0.02)[0] == "untold"


@pytest.mark.parametrize(("name", "way"), [("ap-tf_custom_fit", 1), ("keras-convmixer", -1)])
def test_a_run_seen_whole_pays_each_told_stall_at_its_odds(name: str, way: int) -> None:
    """Recorded probes that saw their whole run: aladdinpersson's custom fit() crossed its one
    boundary without the 9 s wait that was due (its plain run paid it: 38.8 s against the
    probe's 29.5 s), so a repeat is expected to pay more than this run did; keras.io's
    ConvMixer paid its waits, and a repeat, at odds under one, less. The estimate moves by the
    stalls redrawn, and by nothing else."""
    from conftest import ROOT

    from probecast.core.model.estimate.bounds import Calibration
    from probecast.core.model.estimate.runtime import measured_run
    from probecast.core.model.estimate.stalls import end_ratio, forecast, redrawn_stalls
    from probecast.core.model.logstore import load_probe

    state = load_probe(ROOT / "benchmarks" / "corpus" / "runs-public"
                       / f"probe-{name}.jsonl.gz").state
    n_ep = float(len(state.full_epochs()))
    est = measured_run(state, estimate_runtime(state, n_ep))
    seen = (state.end.t - state.agent_init_s  # type: ignore[union-attr]
            - state.hook_s * (state.steps + sum(p.steps for p in state.phases)))
    t = estimate_runtime(state, n_ep).terms
    cal = Calibration.for_state(state)
    fc = forecast(state, t.t_it, t.n_it * t.t_it + (t.t_val or 0.0), int(n_ep) - 1, cal,
                  train_s=n_ep * t.n_it * t.t_it)
    shift = redrawn_stalls(state, t.t_it, fc.p_stall, min(1.0, end_ratio(state, cal) * fc.p_stall),
                           fc.lifetime_s)
    assert est.equation == "measured" and way * shift > 1.0
    assert est.runtime_s == pytest.approx(seen + shift, abs=1e-6)
    assert est.low_s < est.runtime_s < est.high_s
    assert f"{seen:.2f} {shift:+.2f} (tf.data stalls at their odds" in est.formula()  # detail view


def test_work_every_few_steps_stays_in_the_step_time_whole() -> None:
    """MorvanZhou's regression tutorial plots and pauses 0.1 s every 5th of its 200 steps (its
    plan: every 5, `if t % 5 == 0`): a 10 %-trimmed mean over the steps cut half of those slow
    steps off (20 % of them, 10 % trimmed off the top) and the estimate came out 16 % under its
    plain run (8.1 s against 9.6). Trimmed over blocks of 5 steps, each block holds one plot:
    the step time is a whole period's mean (recorded probe)."""
    from conftest import ROOT

    from probecast.core.agent.steady import block_interval, trimmed_interval
    from probecast.core.model.logstore import load_probe

    st = load_probe(ROOT / "benchmarks" / "corpus" / "runs-public"
                    / "probe-morvan-regression.jsonl.gz").state
    assert st.plan is not None and st.plan.every == 5
    values = list(st.steady.values)
    per_period = sum(values[:len(values) // 5 * 5]) / (len(values) // 5 * 5)
    t_it = st.step_time()[0]
    assert t_it == pytest.approx(per_period, rel=0.15)
    assert t_it > 1.15 * trimmed_interval(sorted(values), 0.1)[0]  # what it was
    est = estimate_runtime(st, 1.0)
    assert est.runtime_s == pytest.approx(9.6, rel=0.1)  # the plain run: 9.6 s
    # a block of one outlier among steady blocks is trimmed off as a step was
    assert block_interval([1.0] * 40 + [50.0] + [1.0] * 9, 5)[0] == pytest.approx(1.0)
    assert block_interval([1.0] * 10, 5) is None  # fewer than three blocks: the steps' own
