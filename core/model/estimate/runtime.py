"""The estimate of a probed command's whole run, launch to exit: the training terms (training.py:
Malta's Eq. 5.1/5.3/5.4 plus epoch boundaries) and what surrounds them - start-up, the teardown
when training ends, the program's post-training work - with bounds that say honestly what the
probe could not see (bounds.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .bounds import Calibration, Uncertainty, interval
from .early_stop import longest_pass, soonest_stop, stopped_after, upper_bound_note
from .epoch_work import boundary_work
from .phases import with_phases
from .seen_whole import measured_run, ran_untimed, untimed_run  # (callers ask runtime too)
from .stalls import BoundaryForecast, forecast
from .repeats import repeated
from ...agent.steady import DEFAULT_STATISTIC
from .training import (DEFAULT_HORIZONS, EQUATIONS, PER_STEPS_EQUATION, Estimate,
                       NoEstimate, Terms, eq_5_1, eq_5_3, eq_5_4, parse_horizons,
                       steady_training, training_estimate, with_drift)

__all__ = ["DEFAULT_HORIZONS", "EQUATIONS", "Estimate", "NoEstimate", "Terms", "eq_5_1", "eq_5_3",
           "eq_5_4", "estimate_runtime", "measured_run", "parse_horizons", "per_steps_estimate",
           "ran_untimed", "stopped_after", "training_estimate", "untimed_run", "whole_process"]


def estimate_runtime(
    state: ProbeState,
    n_ep: float,
    *,
    use_validation: bool = True,
    equation: str = "auto",
    statistic: str = DEFAULT_STATISTIC,
    n_it: int | None = None,
) -> Estimate:
    """Estimate the whole run of the probed command for ``n_ep`` epochs (of ``n_it`` steps; by
    default the log's): start-up (T_init, from the command's launch), the training terms, the
    end-of-training teardown and the program's post-training work until it exits - with bounds
    calibrated on recorded runs."""
    def whole(epochs: float, steps: int | None = n_it) -> Estimate:
        est = training_estimate(state, epochs, use_validation=use_validation,
                                equation=equation, statistic=statistic, n_it=steps)
        # a loop of runs (an Optuna study's trials): the others may differ from the probed one,
        # and a time limit (its timeout) counts those that start;
        # a program that trains in phases: the first is estimated above, the later ones added
        first = repeated(state, whole_process(state, est, epochs))
        return with_phases(state, first, statistic)

    est = whole(n_ep)
    soonest = soonest_stop(state, n_ep, n_it or est.terms.n_it)
    if soonest is not None:
        # an early stop can end it sooner, but no sooner than its patience allows, nor before
        # what the probe saw it go on past: the low bound is that run's (the point stays the
        # planned length's: an upper bound, said)
        epochs, steps, said = soonest
        least = whole(epochs, steps)
        if least.low_s < est.low_s:
            est = replace(est, low_s=least.low_s, notes=(
                *est.notes, f"an early stop can end training after {said} at the soonest (its "
                            "patience, or what the probe saw pass): the low bound is that run's"))
    if longest := longest_pass(state, n_it or est.terms.n_it):  # the point takes the epochs'
        est = replace(est, high_s=max(est.high_s, whole(n_ep, longest).high_s))  # steps seen
    if state.hook_s:
        est = replace(est, notes=(*est.notes, f"the agent's own {1000 * state.hook_s:.3f} ms "
                                  "inside each step is taken off the step time (the plain "
                                  "program does not spend it)"))
    if state.agent_init_s:
        est = replace(est, notes=(*est.notes, f"the agent's own {state.agent_init_s:.2f} s "
                                  "before the first step (its launcher, the hook's set-up) is "
                                  "taken off T_init (the plain program does not spend it)"))
    # what the stopped run left in the program's folder (a checkpoint a later run may resume from)
    left = state.left_files()
    return replace(est, notes=(*est.notes, *left)) if left else est
from ..state import ProbeState

STEP_CI_Z = 1.96  # the step time's interval is a 95 % one


@dataclass
class _Tally:
    """What the terms of the whole process add up to, as they are added."""

    total: float
    notes: list[str]
    unseen: float = 0.0  # seconds only the high bound allows for (costs the probe could not see)


def whole_process(state: ProbeState, est: Estimate, n_ep: float,
                  cal: Calibration | None = None) -> Estimate:
    """The training estimate with the boundaries forecast (stalls.py), plus start-up, the end of
    training and the post-training work, with the uncertainty of each term and the bounds they
    make (bounds.py)."""
    cal = cal or Calibration.for_state(state)
    t = est.terms
    n_b = max(0.0, n_ep - 1)  # epoch boundaries still to come
    # the teardown when training ends: measured (by itself, or at the probe's stop: no next pass
    # starts, an RL rollout), but tf.data's from the stall model (the stop tore down another age)
    ended = state.done is not None and state.done.status == "complete"
    stall_model = cal.stalls and cal.stall_point
    measured_end = ended or (state.fit_end_time is not None and not stall_model)
    if est.equation == "5.1":
        est, fc, train_s = _epoch_based(state, est, n_b, cal, measured_end)
    else:
        est, fc, train_s = _iteration_based(state, est, n_b, n_ep, cal, measured_end)
    t = est.terms
    train_steps = steady_training(t, n_ep)
    tally = _Tally(est.runtime_s, list(est.notes), unseen=fc.unseen_high)
    fit = tally.total - t.t_init
    fit_end = state.fit_end_time if measured_end else fc.fit_end
    tally.total += fit_end or 0.0
    post_s, post = _post_training(state, cal, tally)
    upper = upper_bound_note(state, n_ep, t.n_it)
    if upper:
        tally.notes.append(upper)
    if fc.p_stall > 0 and fc.stall_s >= 0.05 * max(fc.lifetime_s, 1e-9):
        # says more than "one boundary seen: its cost varies"
        tally.notes = [n for n in tally.notes if not n.startswith("one epoch boundary seen")]
        tally.notes.append(fc.describe())
    elif fc.unseen_high > 0.05 * max(fc.lifetime_s, 1e-9):
        seen = f"{fc.observed.seen} seen" if fc.observed.seen else "none seen"
        tally.notes.append(f"epoch boundaries ({seen}): this framework has no recorded runs - "
                           f"the high bound allows {fc.unseen_high:.1f} s for stalls like "
                           "Keras' and the end of training")
    total = tally.total
    expected = n_b * fc.per_boundary + fc.fit_end
    validation = math.hypot(_validation_spread(state, t, n_b, cal), _periodic_spread(state, t, cal))
    u = Uncertainty(steps=train_s, boundaries=fc.sigma, validation=validation,
                    post=post_s, floor=cal.floor * total, init=cal.init_rel * t.t_init,
                    drift=cal.noise(state, train_steps)[0] * train_steps,
                    unseen_high=tally.unseen, reach_low=max(0.0, expected - fc.least),
                    reach_high=max(0.0, fc.most - expected))
    low, high = interval(total, u, cal)
    return replace(est, runtime_s=total, low_s=low, high_s=high, notes=tuple(tally.notes),
                   uncertainty=u.as_dict(),
                   terms=replace(t, t_post=post, t_fit_end=fit_end, fit_s=fit,
                                 p_stall=fc.p_stall if cal.stalls and cal.stall_point else None,
                                 stall_s=fc.stall_s if cal.stalls and cal.stall_point else None))


def per_steps_estimate(state: ProbeState, n: int, statistic: str = DEFAULT_STATISTIC) -> Estimate:
    """Time per ``n`` training steps (start-up apart: paid once whatever the length), the
    periodic work's share included - what ranks jobs whose length is unknown."""
    if state.start is None:
        raise NoEstimate("no 'start' event: not a probe log")
    if state.t_it1 is None:
        raise NoEstimate("the log has no training steps")
    t_it, t_low, t_high = state.step_time(statistic)
    if not (t_it == t_it):  # NaN: one step seen
        t_it = t_low = state.t_it1
        t_high = 2 * state.t_it1
    elif math.isinf(t_high):
        t_high = 2 * t_it
    periodic = state.periodic(t_it)
    every = periodic.every if periodic is not None else None
    n_per = n // every if periodic is not None and every and periodic.mean_s else 0
    t_per = periodic.per_s(n_per) if periodic is not None else None
    total = n * t_it + n_per * (t_per or 0.0)
    cal = Calibration.for_state(state)
    # the step time's level over a run of unknown length: its wander, not a short run's noise
    drift = cal.noise(state, math.inf)[0]
    u = Uncertainty(steps=n * (t_high - t_it) / STEP_CI_Z, boundaries=0.0,
                    validation=n_per * cal.val_rel * (t_per or 0.0), post=0.0,
                    floor=cal.floor * total, drift=drift * n * t_it)
    low, high = interval(total, u, cal)
    if total > 0:  # the level over an unknown length moves by a factor (its wander), and the
        low = max(low, total * total / high)  # low bound as a factor too: 1/(1+r), never 0 s
    notes = []
    if periodic is not None and t_per is None:
        notes.append(f"periodic work every {every} steps: not reached by the probe, not included")
    later = [(p.index, p.steady.interval(statistic)[0]) for p in state.phases if p.steady.n >= 2]
    if state.phases:  # the rate is phase 1's: each later phase steps at its own
        rates = ", ".join(f"phase {i} {t * 1e3:.3g} ms" for i, t in later) or "not timed"
        notes.append(f"the program trains in {len(state.phases) + 1} phases: time per {n:,} "
                     f"steps at phase 1's step ({t_it * 1e3:.3g} ms); later phases' own: {rates}")
    terms = Terms(n_it=n, n_ep=1.0, t_init=state.t_init or 0.0, t_it1=state.t_it1, t_it=t_it,
                  t_it_low=t_low, t_it_high=t_high, steady_steps=state.steady.n,
                  statistic=statistic, every=every, t_per=t_per, n_per=n_per or None)
    return with_drift(Estimate(total, low, high, PER_STEPS_EQUATION, terms, tuple(notes),
                               u.as_dict()), state)


def _iteration_based(state: ProbeState, est: Estimate, n_b: float, n_ep: float,
                     cal: Calibration, ended: bool) -> tuple[Estimate, BoundaryForecast, float]:
    """Eq. 5.3/5.4, each boundary to come what the forecast expects (one stall seen says little of
    the next), work after every K-th epoch on top (epoch_work.py): estimate, forecast, spread."""
    t, t_it = est.terms, est.terms.t_it or 0.0
    vals = 1.0 if t.n_val is None else t.n_val / max(n_ep, 1)  # validation passes an epoch
    fc = forecast(state, t_it, t.n_it * t_it + (t.t_val or 0.0) * vals, n_b, cal,
                  with_fit_end=not ended, train_s=steady_training(t, n_ep))
    work = None if fc.p_stall else boundary_work(state, t_it, n_ep)
    per = work.per if work else fc.per_boundary
    if work is not None:  # work after every K-th epoch on top of those boundaries (epoch_work)
        est = replace(est, runtime_s=est.runtime_s + work.n * work.extra,
                      notes=(*est.notes, work.note),
                      terms=replace(t, every=work.every, t_per=work.extra, n_per=work.n))
    runtime = est.runtime_s + n_b * (per - t.t_ep)
    steps_s = max(0.0, n_ep * t.n_it - 1) * max(0.0, (t.t_it_high or t_it) - t_it) / STEP_CI_Z
    terms = replace(est.terms, t_ep=per, t_ep_seen=t.t_ep)
    return replace(est, runtime_s=runtime, terms=terms), fc, steps_s


def _epoch_based(state: ProbeState, est: Estimate, n_b: float, cal: Calibration,
                 ended: bool) -> tuple[Estimate, BoundaryForecast, float]:
    """Eq. 5.1: whole epochs seen, their boundaries inside them; the spread of the epochs seen
    stands for what the later ones may do. Only the end of training is forecast."""
    t = est.terms
    t_ep2 = t.t_ep2 or 0.0
    spread = max(((t.t_ep2_high or t_ep2) - (t.t_ep2_low or t_ep2)) / 2, cal.floor * t_ep2)
    seen = max(1, len(state.full_epochs()) - 1)
    fc = forecast(state, t.t_it or 0.0, t_ep2, 0, cal, with_fit_end=not ended)
    return est, fc, math.sqrt(n_b) * spread + n_b * spread / math.sqrt(seen)


def _validation_spread(state: ProbeState, t: Terms, n_b: float, cal: Calibration) -> float:
    n = n_b if t.n_val is None else max(0, t.n_val - 1)  # passes to come after the first
    later = max(1, len(state.vals) - 1)
    return (math.sqrt(n) + n / math.sqrt(later)) * cal.val_rel * t.t_val if t.t_val else 0.0


def _periodic_spread(state: ProbeState, t: Terms, cal: Calibration) -> float:
    """The periodic work's (evaluations, checkpoints every K steps) spread, as validation's: each
    occurrence varies, and the few the probe saw stand for all of them."""
    if not t.t_per or not t.n_per:
        return 0.0
    periodic = state.periodic(t.t_it or 0.0)
    seen = max(1, len(periodic.extra_s) if periodic is not None else 1)
    n = t.n_per
    return (math.sqrt(n) + n / math.sqrt(seen)) * cal.val_rel * t.t_per


def _post_training(state: ProbeState, cal: Calibration,
                   tally: _Tally) -> tuple[float, float | None]:
    """The program's own post-training work, measured when the probe let it run to its exit,
    else what recorded programs typically took. Returns (its spread, its time)."""
    post = state.post_time
    if post is not None and "no-post" in state.codes:
        # the probe unwound the loop: what it timed is the exit alone, not the final evaluation,
        # save or test the program does after training (recorded custom loops: 1-3 s against an
        # exit of 0.05-0.7 s - the estimate leaned low by it); at least what programs typically take
        typical = cal.post_typical_s
        tally.total += max(post, typical)
        if typical > post:
            tally.notes.append(f"custom loop: the probe stopped it by unwinding, so the program's "
                               f"post-training work did not run: {typical:.1f} s assumed, what "
                               "recorded programs took")
        return math.hypot(cal.post_rel * post, cal.post_spread_s) + 0.1, max(post, typical)
    if post is not None:
        away = [s for s in state.boundary_outside if s > 0]
        if away:  # fit() in a loop: the rest of that work is in `post`, after the stop
            tally.notes.append(f"fit() in a loop: the program's own work between the calls is "
                               f"in T_post - {sum(away):.2f} s of it before the probe's stop "
                               f"(after {len(away)} call(s)), the rest after it")
            post += sum(away)
        tally.total += post
        code = state.end.exit_code if state.end is not None else None
        if code not in (0, None):
            tally.notes.append(f"the program's post-training work ended with exit status {code}: "
                               "its time here is a lower bound")
            tally.unseen += post  # it may take as long again to finish
        return cal.post_rel * post + 0.1, post
    if "no-post" in state.codes:
        tally.notes.append("custom loop: the probe stopped it by unwinding, so the program's "
                           "post-training work was not run or timed (not in the estimate)")
        return 0.0, None
    if state.start is None or state.start.v < 2:  # schema v1 logs never measure it
        if state.done is not None or state.end is not None:
            tally.notes.append("post-training time not measured (the program did not run to "
                               "its exit)")
        return 0.0, None
    typical = cal.post_typical_s
    tally.total += typical
    tally.notes.append(f"post-training time not measured (the probe has not reached the "
                       f"program's exit): {typical:.1f} s assumed, what recorded programs took")
    return cal.post_spread_s, None
