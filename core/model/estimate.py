"""The estimate of a probed command's whole run, launch to exit: the training terms (training.py:
Malta's Eq. 5.1/5.3/5.4 plus epoch boundaries) and what surrounds them - start-up, the teardown
when training ends, the program's post-training work - with bounds that say honestly what the
probe could not see (bounds.py)."""

from __future__ import annotations

import math
from dataclasses import replace

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


def whole_process(state: ProbeState, est: Estimate, n_ep: float,
                  cal: Calibration | None = None) -> Estimate:
    cal = cal or Calibration.load()
    t = est.terms
    notes = list(est.notes)
    total = est.runtime_s
    fit = total - t.t_init
    n_b = max(0.0, n_ep - 1)  # epoch boundaries still to come
    unseen = 0.0  # seconds only the high bound allows for (costs the probe could not see)

    # steady steps: the interval of the step time, over every step of the run
    if est.equation == "5.1":
        t_ep2 = t.t_ep2 or 0.0
        spread = max(((t.t_ep2_high or t_ep2) - (t.t_ep2_low or t_ep2)) / 2, cal.floor * t_ep2)
        seen = max(1, len(state.full_epochs()) - 1)
        steps_s = math.sqrt(n_b) * spread + n_b * spread / math.sqrt(seen)
        bound_s = 0.0
    else:
        t_it = t.t_it or 0.0
        steps_s = max(0.0, n_ep * t.n_it - 1) * max(0.0, (t.t_it_high or t_it) - t_it)
        # epoch boundaries: one seen says little about the next ones
        if t.boundaries_seen:
            per = max(cal.boundary_rel * t.t_ep, cal.boundary_abs_s, (t.t_ep_high - t.t_ep_low) / 2)
            bound_s = math.sqrt(n_b) * per + n_b * per / math.sqrt(t.boundaries_seen)
        elif n_b:  # none seen: not in the estimate, but the high bound allows for them
            bound_s = 0.0
            unseen += n_b * cal.unseen_boundary_s
            notes.append(f"no epoch boundary seen: the high bound allows {cal.unseen_boundary_s:g}"
                         f" s for each of the {n_b:g} (the most seen in recorded runs)")
        else:
            bound_s = 0.0
    # validation passes
    val_s = 0.0
    if t.t_val is not None and n_b:
        later = max(1, len(state.vals) - 1)
        val_s = (math.sqrt(n_b) + n_b / math.sqrt(later)) * cal.val_rel * t.t_val
    # the end of training: fit() returning waits on its input pipeline like a boundary
    fit_end = state.fit_end_time
    if fit_end is not None:
        total += fit_end
        end_s = max(cal.boundary_rel * fit_end, cal.boundary_abs_s)
    else:
        end_s = 0.0
        unseen += cal.fit_end_s
    # the program's own post-training work, measured when the probe let it run to its exit
    post = state.post_time
    if post is not None:
        total += post
        post_s = cal.post_rel * post + 0.2
    else:
        post_s = 0.0
        if "no-post" in state.codes:
            notes.append("custom loop: the probe stopped it by unwinding, so the program's "
                         "post-training work was not run or timed (not in the estimate)")
        elif state.done is not None or state.end is not None:
            notes.append("post-training time not measured (the program did not run to its exit)")
    if "early-stop" in state.codes:
        notes.append("EarlyStopping may end training sooner: this is an upper bound for "
                     f"{n_ep:g} epochs (full runs on one host tell the epochs it stops at: "
                     "--epochs-from)")
    u = Uncertainty(steps=steps_s, boundaries=bound_s, validation=val_s, fit_end=end_s,
                    post=post_s, floor=cal.floor * total, unseen_high=unseen)
    low, high = interval(total, u, cal)
    return replace(est, runtime_s=total, low_s=low, high_s=high, notes=tuple(notes),
                   uncertainty=u.as_dict(),
                   terms=replace(t, t_post=post, t_fit_end=fit_end, fit_s=fit))
