"""A loop of runs of the training (an Optuna study's trials), the plan's ``repeats``: the
bounds allow the runs the probe did not see to differ from the one it timed; and one that
starts none after a time limit (the study's ``timeout``), the plan's ``time_limit_s``, counted
by the estimate (estimate/repeats.py) - on the recorded probe of Optuna's PyTorch example (100 trials of 10
epochs, a MedianPruner; its program says ``timeout=600``), its plan as the agent writes it now."""

from __future__ import annotations

import math
from pathlib import Path

import msgspec
import pytest

from probecast.core.model.estimate.runtime import estimate_runtime
from probecast.core.model.estimate.repeats import (DRAW_HIGH, DRAW_LOW, expected, least, most,
                                                   runs_started)
from probecast.core.model.events import Plan, read_log
from probecast.core.model.state import fold_all

ROOT = Path(__file__).resolve().parents[2]
OPTUNA = ROOT / "benchmarks/corpus/runs-public/probe-optuna-pytorch_simple.jsonl.gz"


def study(**plan: object):  # type: ignore[no-untyped-def]
    """The recorded probe, its plan's fields replaced by ``plan``."""
    events, _ = read_log(OPTUNA)
    return fold_all([msgspec.structs.replace(e, **plan) if isinstance(e, Plan) else e
                     for e in events])


def test_runs_start_until_the_limit_and_the_last_one_ends_past_it() -> None:
    # 100 runs of 12 s (1 200 s) under a 600 s limit: 50 start, the 50th at 588 s
    assert runs_started(1200.0, 100, 600.0) == 50 and expected(1200.0, 100, 600.0) == 600.0
    assert runs_started(1230.0, 100, 600.0) == 49  # 12.3 s each: the 49th starts at 590.4 s
    assert expected(1230.0, 100, 600.0) == pytest.approx(49 * 12.3)
    assert expected(300.0, 100, 600.0) == 300.0  # all 100 end before the limit
    # no count: the plan is one run's, and runs start until the limit
    assert runs_started(7.0, None, 60.0) == 9 and expected(7.0, None, 60.0) == 63.0
    assert runs_started(90.0, None, 60.0) == 1 and expected(90.0, None, 60.0) == 90.0
    # the loop lasts at least the limit once its runs reach it, at most a run past it
    assert least(1230.0, 100, 600.0) == 600.0 and most(1230.0, 100, 600.0) == 612.3
    assert least(300.0, 100, 600.0) == most(300.0, 100, 600.0) == 300.0
    assert least(90.0, None, 60.0) == most(90.0, None, 60.0) == 90.0


def test_the_probed_trial_is_one_draw_and_the_bounds_allow_the_others_to_differ() -> None:
    """One trial's model stands for the study's 100: the bounds allow their mean from half to
    twice its time (Optuna's Keras example on one core: its probed trial 2.0 s, the study's
    mean 4.9 s)."""
    one = estimate_runtime(study(repeats=None), 1000)  # the plan as before: no count said
    drawn = estimate_runtime(study(repeats=100), 1000)
    s = drawn.terms.fit_s
    assert s is not None and drawn.runtime_s == pytest.approx(one.runtime_s)
    rest = drawn.runtime_s - s
    assert drawn.high_s == pytest.approx(rest + DRAW_HIGH * s) and drawn.high_s > one.high_s
    assert drawn.low_s <= min(one.low_s, rest + DRAW_LOW * s)
    assert any("one draw of 100" in n for n in drawn.notes)


def test_a_study_whose_trials_end_before_its_timeout_keeps_its_point() -> None:
    """timeout=600 against ~500 s of trials: the point is the 100 trials'; the high bound, which
    twice the probed trial's time would put at ~1 000 s, stops at the limit and a trial begun
    just before it."""
    free = estimate_runtime(study(repeats=100), 1000)
    timed = estimate_runtime(study(repeats=100, time_limit_s=600.0), 1000)
    assert (timed.runtime_s, timed.low_s) == pytest.approx((free.runtime_s, free.low_s))
    assert timed.terms.fit_s is not None and free.terms.fit_s is not None
    rest = timed.runtime_s - timed.terms.fit_s
    assert 600.0 < timed.high_s - rest <= 600.0 + DRAW_HIGH * free.terms.fit_s / 100 + 1e-9
    assert timed.terms.limited_runs == 100 and timed.terms.time_limit_s == 600.0
    assert any("all 100 runs" in n for n in timed.notes)


def test_a_timeout_that_comes_first_ends_the_estimate_there() -> None:
    """timeout=200: the 100 trials (~4.5 s each here) would take ~450 s; those that start in
    the first 200 s run: the estimate is the start-up, about 200 s of trials and the rest."""
    free = estimate_runtime(study(repeats=100), 1000)
    timed = estimate_runtime(study(repeats=100, time_limit_s=200.0), 1000)
    assert free.terms.fit_s is not None and timed.terms.fit_s is not None
    run = free.terms.fit_s / 100
    k = timed.terms.limited_runs
    assert k == math.ceil(200.0 / run) and k < 100
    assert timed.terms.fit_s == pytest.approx(k * run)
    rest = free.runtime_s - free.terms.fit_s  # start-up, the end, post-training: as before
    assert timed.runtime_s == pytest.approx(rest + k * run)
    assert 200.0 <= timed.runtime_s - rest < 200.0 + run
    assert timed.low_s <= timed.runtime_s <= timed.high_s
    # the high bound: a trial begun just before the limit, the trials' mean twice the probed one
    assert timed.high_s - rest <= 200.0 + DRAW_HIGH * run + 1e-9
    assert timed.high_s < free.high_s and timed.low_s <= free.low_s + 1e-9
    assert any(f"{k} of 100 start by then" in n for n in timed.notes)
    assert f"its training counted as the {k} runs that start within 200 s" in timed.formula()


def test_a_study_with_no_trial_count_runs_trials_until_its_timeout() -> None:
    """study.optimize(objective, timeout=120): the plan is one trial's (10 epochs, no
    repeats), and trials start until 120 s - not one trial's few seconds."""
    one = estimate_runtime(study(repeats=None, epochs=10, steps=300, earliest_epochs=None), 10)
    timed = estimate_runtime(study(repeats=None, epochs=10, steps=300, earliest_epochs=None,
                                   time_limit_s=120.0), 10)
    assert one.terms.fit_s is not None and timed.terms.fit_s is not None
    k = timed.terms.limited_runs
    assert k is not None and k == math.ceil(120.0 / one.terms.fit_s) > 1
    assert timed.runtime_s == pytest.approx(one.runtime_s + (k - 1) * one.terms.fit_s)
    assert any("no count: runs start until the limit" in n for n in timed.notes)
