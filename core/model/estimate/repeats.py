"""A phase that runs the program's training again and again - an Optuna study's trials: the
plan's ``repeats`` (the runs it counts) and ``time_limit_s`` (no run starts after it: the
study's ``timeout``; with no ``repeats``, runs start until then and the plan is one run's).

**One run stands for all.** The probe timed one trial, one draw of the study's search space;
the others build other models (units, layers, strides: a convnet's trial took 2 s under the
probe and 4.9 s on average over its study). Nothing in one draw says how far the others are
from it, so the bounds allow the runs' mean from ``DRAW_LOW`` to ``DRAW_HIGH`` times the probed
run's - a prior, not a measurement, said in the notes (RESULTS §7: Optuna's two public examples
on two hosts each came at 0.62-1.78 times their estimates).

**A time limit.** Optuna checks the limit before each trial starts, so runs of ``r`` seconds that
would go on past it stop at ``k = ceil(T / r)`` of them (at most the ``n`` counted): ``k * r``
seconds, from the limit to one run past it. The phase's training terms ``S`` (its ``n`` runs)
give ``r = S / n``; the bounds' training terms likewise, the high one at most ``T + r`` - a run
begun just before the limit - and the low one at least the limit, once the runs reach it. A
study of 100 trials with a 600 s timeout whose trials take 12 s on one host and 3 s on another
runs 50 trials (600 s) on the first and all 100 (300 s) on the second: without the limit the
first read 1 200 s.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..events import Plan
from ..state import ProbeState
from .training import Estimate


def _run_s(seconds: float, repeats: int | None) -> float:
    return seconds / repeats if repeats else seconds


def runs_started(seconds: float, repeats: int | None, limit: float) -> int:
    """How many runs start before ``limit`` seconds, each a ``repeats``-th of ``seconds`` (no
    count: ``seconds`` is one run's, and runs start until the limit)."""
    r = _run_s(seconds, repeats)
    k = max(1, math.ceil(limit / r)) if r > 0 else (repeats or 1)
    return min(k, repeats) if repeats else k


def expected(seconds: float, repeats: int | None, limit: float) -> float:
    """The loop's seconds: the runs that start before the limit, at their pace."""
    return runs_started(seconds, repeats, limit) * _run_s(seconds, repeats)


def least(seconds: float, repeats: int | None, limit: float) -> float:
    """The fewest seconds the loop can take at this pace: all its runs where they end before
    the limit, else the limit (a run starts while it has not passed), or one run longer."""
    r = _run_s(seconds, repeats)
    whole = repeats * r if repeats else math.inf
    return min(whole, max(limit, r))


def most(seconds: float, repeats: int | None, limit: float) -> float:
    """The most seconds the loop can take at this pace: all its runs where they end before
    the limit, else the limit and a run begun just before it."""
    r = _run_s(seconds, repeats)
    whole = repeats * r if repeats else math.inf
    return min(whole, r if r >= limit else limit + r)


DRAW_LOW, DRAW_HIGH = 0.5, 2.0  # the runs' mean against the probed run's, as the bounds allow


def repeated(state: ProbeState, est: Estimate) -> Estimate:
    """The first phase's estimate where it is a loop of runs: its bounds allowing the other
    runs to differ from the probed one, and its time limit applied to its training terms
    (their point, and the bounds' own training terms), said; ``est`` where the plan has
    neither."""
    plan = state.plan
    s = est.terms.fit_s
    if plan is None or not (plan.time_limit_s or (plan.repeats or 0) > 1) \
            or s is None or s <= 0:
        return est
    rest = est.runtime_s - s  # start-up, the end of training, post-training, later phases
    s_low = max(1e-9, s - (est.runtime_s - est.low_s))
    s_high = s + (est.high_s - est.runtime_s)
    notes = list(est.notes)
    if (plan.repeats or 0) > 1 or plan.repeats is None:  # (None: runs until the limit)
        # one run drawn of many: the others' sizes unknown
        s_low, s_high = min(s_low, DRAW_LOW * s), max(s_high, DRAW_HIGH * s)
        notes.append(draw_note(plan))
    terms = est.terms
    point = s
    if plan.time_limit_s:
        limit, n = plan.time_limit_s, plan.repeats
        point = expected(s, n, limit)
        s_low, s_high = min(least(s_low, n, limit), point), max(most(s_high, n, limit), point)
        k = runs_started(s, n, limit)
        notes.append(limit_note(plan, s, point, k))
        terms = replace(terms, fit_s=point, time_limit_s=limit, limited_runs=k)
    return replace(est, runtime_s=rest + point, low_s=min(est.low_s, rest + s_low),
                   high_s=rest + s_high, notes=tuple(notes), terms=terms)


def draw_note(plan: Plan) -> str:
    where = plan.source.split(" x ")[0][:80] or "the plan"
    many = plan.repeats or "the runs started by the limit"
    return (f"{where}: the probed run is one draw of {many} (each trial builds its own "
            f"model) - the bounds allow their mean from {DRAW_LOW:g} to {DRAW_HIGH:g} times "
            "its time")


def limit_note(plan: Plan, seconds: float, point: float, k: int) -> str:
    """What the time limit does to the estimate, in words."""
    limit, n = plan.time_limit_s or 0.0, plan.repeats
    r = _run_s(seconds, n)
    # the plan's source opens with the loop of runs ("Optuna: study.optimize(n_trials=100)")
    where = plan.source.split(" x ")[0][:80] or "the plan"
    if n and k >= n:
        return (f"a time limit of {limit:g} s ({where}): all {n} runs (~{r:.1f} s each) end "
                "before it at this pace; at a slower one, those started by then")
    counted = f"{k} of {n}" if n else f"{k} (no count: runs start until the limit)"
    return (f"a time limit of {limit:g} s ({where}): no run starts after it - at ~{r:.1f} s "
            f"a run, {counted} start by then: {point:.1f} s of training, not {seconds:.1f} s "
            "(the high bound: a run begun just before the limit)")
