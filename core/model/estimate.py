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
    cal = cal or Calibration.for_state(state)
    t = est.terms
    notes = list(est.notes)
    total = est.runtime_s
    fit = total - t.t_init
    n_b = max(0.0, n_ep - 1)  # epoch boundaries still to come
    unseen = 0.0  # seconds only the high bound allows for (costs the probe could not see)
    unseen_low = 0.0  # ... and the low bound (a stall the probe met may not come again)

    # steady steps: the interval of the step time, over every step of the run
    per = 0.0  # one boundary's spread (also the end of fit()'s, where boundaries were seen)
    if est.equation == "5.1":
        t_ep2 = t.t_ep2 or 0.0
        spread = max(((t.t_ep2_high or t_ep2) - (t.t_ep2_low or t_ep2)) / 2, cal.floor * t_ep2)
        seen = max(1, len(state.full_epochs()) - 1)
        steps_s = math.sqrt(n_b) * spread + n_b * spread / math.sqrt(seen)
        bound_s = 0.0
    else:
        t_it = t.t_it or 0.0
        steps_s = max(0.0, n_ep * t.n_it - 1) * max(0.0, (t.t_it_high or t_it) - t_it)
        # epoch boundaries: their spread around what was seen, and - on the high side - stalls
        # the probe did not meet: in recorded runs boundaries of one run went from 0.4 s to
        # 10 s after a few cheap epochs, so each boundary still to come may cost up to the
        # largest stall recorded on this kind of host
        if t.boundaries_seen:
            per = max(cal.boundary_rel * t.t_ep, cal.boundary_abs_s, (t.t_ep_high - t.t_ep_low) / 2)
            bound_s = math.sqrt(n_b) * per + n_b * per / math.sqrt(t.boundaries_seen)
        else:
            bound_s = 0.0
        # in recorded runs a boundary's stall went up to about an epoch's own time (stall_ratio),
        # and never past ~10 s (an input-pipeline wait, not work): the cap keeps long epochs sane
        epoch_s = t.n_it * t_it + (t.t_val or 0.0)
        worst = max(min(cal.stall_ratio * epoch_s, cal.stall_cap_s), t.t_ep_high)
        stall = max(0.0, worst - t.t_ep)
        unseen_low += n_b * max(0.0, t.t_ep - cal.boundary_min_s)  # ... or as cheap as the least
        if n_b and stall > 0.05 * epoch_s:
            unseen += n_b * stall
            what = (f"{t.boundaries_seen} seen, {t.t_ep:.1f} s on average" if t.boundaries_seen
                    else "none seen")
            notes.append(f"epoch boundaries ({what}): each of the {n_b:g} to come may stall up "
                         f"to {worst:.1f} s (in recorded runs stalls came and went between "
                         "epochs): the high bound allows for it")
    # validation passes
    val_s = 0.0
    if t.t_val is not None and n_b:
        later = max(1, len(state.vals) - 1)
        val_s = (math.sqrt(n_b) + n_b / math.sqrt(later)) * cal.val_rel * t.t_val
    # the end of training: fit() returning waits on its input pipeline as at a boundary. A probe
    # that stopped fit() measured how its stop unwound, not how a finished fit() returns: where
    # boundaries were seen, the end is taken as one more of them.
    fit_end = state.fit_end_time
    t_ep_seen = t.t_ep if est.equation != "5.1" and t.boundaries_seen else None
    if t_ep_seen is not None and state.done is not None and state.done.status == "probe-done":
        fit_end = max(fit_end or 0.0, t_ep_seen)
        end_s = per
        total += fit_end
        unseen_low += max(0.0, fit_end - cal.boundary_min_s)
    elif fit_end is not None:
        total += fit_end
        end_s = max(cal.boundary_rel * fit_end, cal.boundary_abs_s)
    else:
        end_s = 0.0
    if est.equation != "5.1":  # its stall, like a boundary's
        epoch_s = t.n_it * (t.t_it or 0.0) + (t.t_val or 0.0)
        unseen += max(0.0, min(cal.stall_ratio * epoch_s, cal.stall_cap_s) - (fit_end or 0.0))
    # the program's own post-training work, measured when the probe let it run to its exit
    post = state.post_time
    if post is not None:
        total += post
        post_s = cal.post_rel * post + 0.2
        code = state.end.exit_code if state.end is not None else None
        if code not in (0, None):
            notes.append(f"the program's post-training work ended with exit status {code}: "
                         "its time here is a lower bound")
            unseen += post  # it may take as long again to finish
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
                    post=post_s, floor=cal.floor * total, init=cal.init_rel * t.t_init,
                    unseen_high=unseen, unseen_low=unseen_low)
    low, high = interval(total, u, cal)
    # never below what the run must do at the least: start-up and every step at the low end
    # of the step time's interval, with no boundary, validation or post-training work
    # (start-up too varies from run to run: at its low end)
    init_least = t.t_init * max(0.0, 1 - cal.q * cal.init_rel)
    if est.equation == "5.1":
        least = init_least + (t.t_ep1 or 0.0) + n_b * (t.t_ep2_low or 0.0)
    else:
        least = init_least + (t.t_it1 or 0.0) + max(0.0, n_ep * t.n_it - 1) * (t.t_it_low or 0.0)
    low = max(low, least * (1 - cal.floor))
    return replace(est, runtime_s=total, low_s=low, high_s=high, notes=tuple(notes),
                   uncertainty=u.as_dict(),
                   terms=replace(t, t_post=post, t_fit_end=fit_end, fit_s=fit))
