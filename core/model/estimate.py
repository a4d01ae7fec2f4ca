"""The estimate of a probed command's whole run, launch to exit: the training terms (training.py:
Malta's Eq. 5.1/5.3/5.4 plus epoch boundaries) and what surrounds them - start-up, the teardown
when training ends, the program's post-training work - with bounds that say honestly what the
probe could not see (bounds.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .bounds import Calibration, Uncertainty, interval
from ..agent.steady import DEFAULT_STATISTIC
from .training import (DEFAULT_HORIZONS, EQUATIONS, Estimate, NoEstimate, Terms, eq_5_1, eq_5_3,
                       eq_5_4, parse_horizons, training_estimate)

__all__ = ["DEFAULT_HORIZONS", "EQUATIONS", "Estimate", "NoEstimate", "Terms", "eq_5_1", "eq_5_3",
           "eq_5_4", "estimate_runtime", "parse_horizons", "training_estimate", "whole_process"]


def estimate_runtime(
    state: ProbeState,
    n_ep: float,
    *,
    use_validation: bool = True,
    equation: str = "auto",
    statistic: str = DEFAULT_STATISTIC,
) -> Estimate:
    """Estimate the whole run of the probed command for ``n_ep`` epochs: start-up (T_init, from
    the command's launch), the training terms, the end-of-training teardown and the program's
    post-training work until it exits - with bounds calibrated on recorded runs."""
    est = training_estimate(state, n_ep, use_validation=use_validation, equation=equation,
                            statistic=statistic)
    return whole_process(state, est, n_ep)
from .state import ProbeState


@dataclass
class _Tally:
    """What the terms of the whole process add up to, as they are added."""

    total: float
    notes: list[str]
    unseen: float = 0.0  # seconds only the high bound allows for (costs the probe could not see)
    unseen_low: float = 0.0  # ... and the low bound (a stall the probe met may not come again)


def whole_process(state: ProbeState, est: Estimate, n_ep: float,
                  cal: Calibration | None = None) -> Estimate:
    """The training estimate plus start-up, the end of training and the post-training work, with
    the uncertainty of each term (bounds.py) and the bounds they make."""
    cal = cal or Calibration.for_state(state)
    t = est.terms
    tally = _Tally(est.runtime_s, list(est.notes))
    fit = tally.total - t.t_init
    n_b = max(0.0, n_ep - 1)  # epoch boundaries still to come
    steps_s, bound_s, per = _steps_and_boundaries(state, est, n_b, n_ep, cal, tally)
    val_s = _validation_spread(state, t, n_b, cal)
    end_s, fit_end = _end_of_training(state, est, per, cal, tally)
    post_s, post = _post_training(state, cal, tally)
    if "early-stop" in state.codes:
        tally.notes.append("EarlyStopping may end training sooner: this is an upper bound for "
                           f"{n_ep:g} epochs (full runs on one host tell the epochs it stops at: "
                           "--epochs-from)")
    total = tally.total
    u = Uncertainty(steps=steps_s, boundaries=bound_s, validation=val_s, fit_end=end_s,
                    post=post_s, floor=cal.floor * total, init=cal.init_rel * t.t_init,
                    unseen_high=tally.unseen, unseen_low=tally.unseen_low)
    low, high = interval(total, u, cal)
    low = max(low, _least(est, n_b, n_ep, cal) * (1 - cal.floor))
    return replace(est, runtime_s=total, low_s=low, high_s=high, notes=tuple(tally.notes),
                   uncertainty=u.as_dict(),
                   terms=replace(t, t_post=post, t_fit_end=fit_end, fit_s=fit))


def _steps_and_boundaries(state: ProbeState, est: Estimate, n_b: float, n_ep: float,
                          cal: Calibration, tally: _Tally) -> tuple[float, float, float]:
    """Spread from the steady step time over every step of the run, and from the epoch
    boundaries: around what was seen and - on the high side - stalls the probe did not meet.
    Returns (steps, boundaries, one boundary's spread)."""
    t = est.terms
    if est.equation == "5.1":
        t_ep2 = t.t_ep2 or 0.0
        spread = max(((t.t_ep2_high or t_ep2) - (t.t_ep2_low or t_ep2)) / 2, cal.floor * t_ep2)
        seen = max(1, len(state.full_epochs()) - 1)
        return math.sqrt(n_b) * spread + n_b * spread / math.sqrt(seen), 0.0, 0.0
    t_it = t.t_it or 0.0
    steps_s = max(0.0, n_ep * t.n_it - 1) * max(0.0, (t.t_it_high or t_it) - t_it)
    per = 0.0
    bound_s = 0.0
    if t.boundaries_seen:
        per = max(cal.boundary_rel * t.t_ep, cal.boundary_abs_s, (t.t_ep_high - t.t_ep_low) / 2)
        bound_s = math.sqrt(n_b) * per + n_b * per / math.sqrt(t.boundaries_seen)
    # in recorded runs a boundary's stall went up to a share of an epoch's own time (stall_ratio;
    # capped only for a mechanism that never stalled): in one run boundaries went from 0.4 s to
    # 10 s after a few cheap epochs, so each one still to come may stall
    epoch_s = t.n_it * t_it + (t.t_val or 0.0)
    worst = max(cal.stall_allowance(epoch_s), t.t_ep_high)
    stall = max(0.0, worst - t.t_ep)
    tally.unseen_low += n_b * max(0.0, t.t_ep - cal.boundary_min_s)  # ... or cost the least
    if n_b and stall > 0.05 * epoch_s:
        tally.unseen += n_b * stall
        what = (f"{t.boundaries_seen} seen, {t.t_ep:.1f} s on average" if t.boundaries_seen
                else "none seen")
        tally.notes.append(f"epoch boundaries ({what}): each of the {n_b:g} to come may stall up "
                           f"to {worst:.1f} s (in recorded runs stalls came and went between "
                           "epochs): the high bound allows for it")
    return steps_s, bound_s, per


def _validation_spread(state: ProbeState, t: Terms, n_b: float, cal: Calibration) -> float:
    if t.t_val is None or not n_b:
        return 0.0
    later = max(1, len(state.vals) - 1)
    return (math.sqrt(n_b) + n_b / math.sqrt(later)) * cal.val_rel * t.t_val


def _end_of_training(state: ProbeState, est: Estimate, per: float, cal: Calibration,
                     tally: _Tally) -> tuple[float, float | None]:
    """fit() returning waits on its input pipeline as at a boundary. A probe that stopped fit()
    measured how its stop unwound, not how a finished fit() returns: where boundaries were seen,
    the end is taken as one more of them. Returns (its spread, its time)."""
    t = est.terms
    fit_end = state.fit_end_time
    t_ep_seen = t.t_ep if est.equation != "5.1" and t.boundaries_seen else None
    if t_ep_seen is not None and state.done is not None and state.done.status == "probe-done":
        fit_end = max(fit_end or 0.0, t_ep_seen)
        end_s = per
        tally.total += fit_end
        tally.unseen_low += max(0.0, fit_end - cal.boundary_min_s)
    elif fit_end is not None:
        tally.total += fit_end
        end_s = max(cal.boundary_rel * fit_end, cal.boundary_abs_s)
    else:
        end_s = 0.0
    if est.equation != "5.1":  # its stall, like a boundary's
        epoch_s = t.n_it * (t.t_it or 0.0) + (t.t_val or 0.0)
        tally.unseen += max(0.0, cal.stall_allowance(epoch_s) - (fit_end or 0.0))
    return end_s, fit_end


def _post_training(state: ProbeState, cal: Calibration,
                   tally: _Tally) -> tuple[float, float | None]:
    """The program's own post-training work, measured when the probe let it run to its exit.
    Returns (its spread, its time)."""
    post = state.post_time
    if post is not None:
        tally.total += post
        code = state.end.exit_code if state.end is not None else None
        if code not in (0, None):
            tally.notes.append(f"the program's post-training work ended with exit status {code}: "
                               "its time here is a lower bound")
            tally.unseen += post  # it may take as long again to finish
        return cal.post_rel * post + 0.2, post
    if "no-post" in state.codes:
        tally.notes.append("custom loop: the probe stopped it by unwinding, so the program's "
                           "post-training work was not run or timed (not in the estimate)")
    elif state.done is not None or state.end is not None:
        tally.notes.append("post-training time not measured (the program did not run to its exit)")
    return 0.0, None


def _least(est: Estimate, n_b: float, n_ep: float, cal: Calibration) -> float:
    """What the run must do at the least: start-up (at its low end: it too varies between runs)
    and every step at the low end of the step time's interval, with no boundary, validation or
    post-training work."""
    t = est.terms
    init_least = t.t_init * max(0.0, 1 - cal.q * cal.init_rel)
    if est.equation == "5.1":
        return init_least + (t.t_ep1 or 0.0) + n_b * (t.t_ep2_low or 0.0)
    return init_least + (t.t_it1 or 0.0) + max(0.0, n_ep * t.n_it - 1) * (t.t_it_low or 0.0)
