"""A run the probe saw to its end: its measured runtime, launch to exit, is the answer -
``measured_run`` (training ended by itself, then the program's own exit; a Keras run's tf.data
stalls drawn again, as a repeat draws them) and ``untimed_run`` (the program ran whole and no
training step was found to time) - with bounds from how much a repeat of it may vary."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..state import ProbeState
from .bounds import Calibration, Uncertainty, interval
from .early_stop import early_stopped
from .length import ended_by_itself
from .phases import estimate_phase, stop_note, stop_reach
from .stalls import end_ratio, forecast, redrawn_stalls
from .training import MEASURED, Estimate, Terms
from .wakeups import epoch_lifetimes


def measured_run(state: ProbeState, est: Estimate) -> Estimate:
    """A probe that saw the whole run - training to its end and the program's own exit - is its
    own answer: the measured runtime, launch to exit, with bounds from how much a repeat of it
    varies (the run-to-run drift of its steps and the noise floor)."""
    end = state.end
    if end is None or not ended_by_itself(state):
        return est
    cal = Calibration.for_state(state)
    # the agent's own time inside the steps is no part of the plain program's run
    total = (end.t - state.agent_init_s
             - state.hook_s * (state.steps + sum(p.steps for p in state.phases)))
    t_init = (state.t_init or 0.0) - state.agent_init_s
    # a repeat's level against this run's: the drift's base and its short-run share (how the
    # run itself wandered is in its total already, not a reason for a repeat to differ more)
    # the host's level moves the program's other work as it moves training (evaluation, text
    # generated between fits, post-training: keras.io's char-LSTM spends 80 % of its run there)
    # - this run's work, not the planned length's (an early stop ended pyGAT's after 115 of
    # 10 000 steps: a drift over 10 000 steps had put its low bound at 0 s)
    work = max(0.0, total - t_init)
    u = Uncertainty(steps=0.0, boundaries=0.0, validation=0.0, post=0.0,
                    floor=cal.floor * total, init=cal.init_rel * t_init,
                    drift=repeat_drift(cal, work))
    redrawn = _stalls_redrawn(state, est, cal)
    if redrawn is not None:
        # a repeat pays each teardown's stall at its odds, not as this run's draw came out
        total += redrawn.shift
        u = replace(u, boundaries=redrawn.sigma, reach_low=redrawn.least, reach_high=redrawn.most)
    fewer, more, stopped = early_stopped(state, est.terms.n_ep, est.terms.n_it)
    # the later phases an early stop ended are draws of their own (tensorflow/docs' time series:
    # thirteen fit()s; the first one's alone reached +1 s, its plain run came 46 s longer)
    later = [estimate_phase(p, cal, state) for p in state.phases]
    later_low, later_high = stop_reach(later)
    fewer, more = math.hypot(fewer, later_low), math.hypot(more, later_high)
    later_note = stop_note(later)
    u = replace(u, unseen_low=fewer, unseen_high=more)
    low, high = interval(total, u, cal)
    notes = ("the probe saw the whole run (it ended by itself): the measured runtime is the "
             "answer; the bounds are what a repeat of it may vary",
             *([redrawn.note] if redrawn is not None and redrawn.note else []),
             *([stopped] if stopped else []),
             *([later_note] if later_note else []),
             *(n for n in est.notes if n.startswith("the agent's own")))
    return replace(est, runtime_s=total, low_s=low, high_s=high, equation=MEASURED, notes=notes,
                   uncertainty=u.as_dict(),
                   terms=replace(est.terms, stalls_redrawn=redrawn.shift if redrawn else 0.0))


def repeat_drift(cal: Calibration, work: float) -> float:
    """Seconds a repeat of ``work`` seconds of a run seen whole may differ by (one s.d.): the
    drift's base and its short-run share."""
    return work * math.hypot(cal.drift_base, cal.drift_per_sqrt_s / math.sqrt(max(work, 1.0)))


def ran_untimed(state: ProbeState) -> bool:
    """The program ran to its exit under the probe, exit status 0, and no training step was
    found to time in it (the agent's ``no-step``)."""
    end = state.end
    return end is not None and end.status == "complete" and end.exit_code == 0 \
        and state.t_it1 is None and state.steps == 0 and not state.blocks


def untimed_run(state: ProbeState) -> Estimate:
    """A run with no training step to time (a loop of hand-written tensor updates, a command
    that does not train) that the probe saw to its exit: that run, launch to exit, is all there
    is to say of it on this host - no step to extrapolate, no other length; its bounds are what a
    repeat of it may vary."""
    assert state.end is not None
    cal = Calibration.for_state(state)
    total = max(0.0, state.end.t - state.agent_init_s)
    u = Uncertainty(steps=0.0, boundaries=0.0, validation=0.0, post=0.0,
                    floor=cal.floor * total, drift=repeat_drift(cal, total))
    low, high = interval(total, u, cal)
    note = ("no training step was found to time (the log says what was looked for): the probe "
            "ran the whole program, launch to exit - its run is the answer on this host, and "
            "says nothing of another length or batch size")
    own = (f"the agent's own {state.agent_init_s:.2f} s (its launcher, the hook's set-up) is "
           "taken off it (the plain program does not spend it)",) if state.agent_init_s else ()
    return Estimate(total, low, high, MEASURED, Terms(n_it=0, n_ep=1.0, t_init=total),
                    (note, *own), u.as_dict())


@dataclass(frozen=True)
class _Redrawn:
    """A repeat's boundaries against the run seen whole's: the expected stalls less the ones
    this run paid, their spread, and how much less (none stalls) or more (every one stalls at
    its longest) they can cost than expected, seconds."""

    shift: float
    sigma: float
    least: float
    most: float
    note: str


def _stalls_redrawn(state: ProbeState, est: Estimate, cal: Calibration) -> _Redrawn | None:
    """A Keras run seen whole paid its boundaries' tf.data stalls once - each a draw (stalls.py)
    that a repeat draws again: keras.io's Siamese example's plain run waited 20.6 s for a
    wake-up its probe's run did not (aladdinpersson's custom fit(): 9 s, -24 % measured). The
    stall forecast over the run's own boundaries and the end of training, its odds from what
    this run's boundaries did, gives the repeat's expected stalls in place of the ones this run
    drew, and bounds it. None where boundaries do not stall (a DataLoader) or no steady step
    tells an epoch's lifetime."""
    t = est.terms
    if not (cal.stalls and cal.stall_point) or not t.t_it or t.t_it != t.t_it or not t.n_it:
        return None
    n_b = max(0, len(state.full_epochs()) - 1)
    fc = forecast(state, t.t_it, t.n_it * t.t_it + (t.t_val or 0.0), n_b, cal,
                  with_fit_end=True, train_s=(n_b + 1) * t.n_it * t.t_it)
    if fc.p_stall <= 0:
        return None
    paid = (sum(cost for _, cost, _ in epoch_lifetimes(state, t.t_it))
            + (state.fit_end_time or 0.0))
    shift = redrawn_stalls(state, t.t_it, fc.p_stall,
                           min(1.0, end_ratio(state, cal) * fc.p_stall), fc.lifetime_s)
    expected = paid + shift
    note = (f"tf.data autotuner: a repeat's {n_b + 1} iterator teardowns may stall where this "
            f"run's did not, or not where they did (up to {fc.stall_s:.1f} s each, odds "
            f"{fc.p_stall:.0%}): {shift:+.1f} s for the stalls a repeat pays on average, the "
            "rest in the bounds" if fc.stall_s >= 0.05 * max(fc.lifetime_s, 1e-9) else "")
    return _Redrawn(shift, fc.sigma, max(0.0, expected - fc.least), max(0.0, fc.most - expected),
                    note)
