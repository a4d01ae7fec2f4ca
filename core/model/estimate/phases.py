"""A program that trains in phases - loops one after another: pretrain then fine-tune, a warm-up
loop, fit() then fit() again, several GradientTape loops. The agent ends each phase's loop early
and probes the next (schema: the `phase` event); the first phase is estimated as a one-loop log
is (runtime.py: start-up, its training, the end of training, the post-training work), and each
later phase here, from what the probe saw of it:

    T_phase = T_start + (N - 1) * T_it + (E - 1) * T_boundary + E * T_val

with T_start its first step's dt (the last loop's teardown, this phase's own setup and first
step), T_it its steady step, N its steps and E its epochs as the program says them (the loops
around its step, or its fit() call), its epoch boundaries and validation passes as seen. A phase
the probe saw run to its end is its measured time. The whole runtime adds them all.

Where the probe could not go on into a later phase (a loop it could only unwind, or past its
phases), the estimate says it covers only the phases seen, and its high bound allows for one
more phase as long as the first one's training.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ...agent.steady import DEFAULT_STATISTIC
from ..phase_state import PhaseTiming
from ..state import ProbeState
from .bounds import Calibration
from .stalls import forecast
from .repeats import expected, least
from .training import Estimate

STEP_CI_Z = 1.96  # a phase's step-time interval is a 95 % one
# codes the agent logs where training went on after the phases it saw (schema.LOG_CODES)
UNSEEN_PHASE_CODES = ("more-phases", "phase-budget")


@dataclass(frozen=True)
class PhaseEstimate:
    """One later phase's share of the runtime."""

    index: int
    loop: str
    seconds: float  # its start-up and its training
    sigma: float  # seconds: its spread (one standard deviation)
    unseen_high: float  # seconds only the high bound allows (its length unknown)
    steps: int | None  # the steps it trains (None: not known)
    how: str  # "measured" (ran to its end in the probe), "extrapolated", "as seen"
    unseen_low: float = 0.0  # seconds only the low bound allows (an early stop sooner)


def estimate_phase(phase: PhaseTiming, cal: Calibration, state: ProbeState,
                   statistic: str = DEFAULT_STATISTIC) -> PhaseEstimate:
    """A later phase's seconds, from its own steps, length, boundaries and validation."""
    start = phase.start_s or 0.0
    if not phase.stopped:  # it ran to its end under the probe: measured
        ran = _epochs(phase)
        fewer, more = _early_stop_reach(phase, (phase.seconds - start) / max(1, ran), ran)
        return PhaseEstimate(phase.index, phase.loop, phase.seconds,
                             cal.floor * phase.seconds, more, phase.steps, "measured", fewer)
    n = phase.planned_steps
    if n is None or phase.steady.n < 2:
        # its length unknown: what the probe saw, and room for as much again on the high side
        return PhaseEstimate(phase.index, phase.loop, phase.seconds, cal.floor * phase.seconds,
                             max(phase.seconds, 0.0), None, "as seen")
    t_it, _, t_high = phase.steady.interval(statistic)
    if not math.isfinite(t_high):
        t_high = 2 * t_it
    n_it = phase.plan_steps_per_epoch
    epochs = n / n_it if n_it else 1.0
    n_b = max(0, math.ceil(epochs) - 1)
    boundary = _mean([max(0.0, b - t_it) for b in phase.boundary_steps])
    t_val = _mean(phase.vals)
    n_val = math.ceil(epochs) if phase.vals else 0
    train = max(0, n - 1) * t_it
    boundaries_sigma = math.sqrt(n_b) * _spread([max(0.0, b - t_it) for b in phase.boundary_steps])
    if n_b and n_it and cal.stalls:
        # tf.data's boundaries stall on the autotuner's next wake-up (stalls.py) in this phase as
        # in the first: forecast for this phase's epochs, with the odds the run showed - the
        # phase's own two or three boundaries are a coin toss or two (a keras.io autoencoder's
        # second fit() saw 0.016 s a boundary, its whole run 0.067 s)
        fc = forecast(state, t_it, n_it * t_it + t_val, n_b, cal, with_fit_end=False,
                      train_s=train, phase_steps=phase.boundary_steps)
        boundary, boundaries_sigma = fc.per_boundary, fc.sigma
    seconds = start + train + n_b * boundary + n_val * t_val
    drift = cal.noise(state, train)[0] * train
    steps_sigma = max(0, n - 1) * max(0.0, t_high - t_it) / STEP_CI_Z
    val_sigma = n_val * cal.val_rel * t_val
    sigma = math.sqrt(steps_sigma ** 2 + drift ** 2 + boundaries_sigma ** 2 + val_sigma ** 2
                      + (cal.floor * seconds) ** 2 + (cal.init_rel * start) ** 2)
    fewer, _ = _early_stop_reach(phase, n_it * t_it + boundary + t_val if n_it else 0.0,
                                 math.ceil(epochs))
    plan = phase.plan
    if plan is not None and plan.time_limit_s and seconds > start:
        # a loop of runs that starts none after a time limit (repeats.py): its training
        limited = start + expected(seconds - start, plan.repeats, plan.time_limit_s)
        sigma *= limited / seconds
        fewer = min(fewer, max(0.0, limited - start
                               - least(seconds - start, plan.repeats, plan.time_limit_s)))
        seconds = limited
    return PhaseEstimate(phase.index, phase.loop, seconds, sigma, 0.0, n, "extrapolated", fewer)


def _epochs(phase: PhaseTiming) -> int:
    """The epochs a phase ran: those that ended, else those whose first steps it saw."""
    return max(phase.epochs_done, len(phase.boundary_steps) + 1 if phase.steps else 0)


def _early_stop_reach(phase: PhaseTiming, per_epoch: float, ran: int) -> tuple[float, float]:
    """A phase an early stop can end (its plan's soonest epoch) is one draw of its stop, as a
    whole run is (early_stop.py): seconds a repeat may take less - stopping at the soonest -
    and more - training to the planned epochs - than the ``ran`` epochs counted, at
    ``per_epoch`` seconds (tensorflow/docs' imbalanced data: four fit()s stopped after 12 to 24
    of 100 and 1 000 epochs under the probe, 11 to 20 in the plain run)."""
    plan = phase.plan
    soonest = plan.earliest_epochs if plan is not None else None
    if not soonest or per_epoch <= 0 or plan is None:
        return 0.0, 0.0
    planned = plan.epochs or ran
    return max(0, ran - soonest) * per_epoch, max(0, planned - ran) * per_epoch


def stop_reach(later: list[PhaseEstimate]) -> tuple[float, float]:
    """Seconds the low and high bounds reach for the later phases an early stop can end, each
    stop one draw a run and the phases' draws independent: their reaches add in quadrature, as
    independent spreads do - a repeat stopping every phase at its soonest, or every one at its
    last, is no run to budget for (tensorflow/docs' time-series tutorial: thirteen fit()s, each
    with an early stop of patience 2; their reaches summed, its bounds ran from -62 % to +103 %).
    A phase of unknown length ("as seen") is no draw: the room it leaves is added whole."""
    low = math.sqrt(sum(p.unseen_low ** 2 for p in later))
    high = math.sqrt(sum(p.unseen_high ** 2 for p in later if p.how != "as seen"))
    return low, high + sum(p.unseen_high for p in later if p.how == "as seen")


def stop_note(later: list[PhaseEstimate]) -> str:
    """What the bounds allow for the later phases an early stop can end; "" where none can."""
    reached = [p for p in later if p.unseen_low or (p.how == "measured" and p.unseen_high)]
    if not reached:
        return ""
    low, high = stop_reach(reached)
    return (f"phase {', '.join(str(p.index) for p in reached)}: an early stop ends each where "
            f"its metric stops improving, one draw a run - the bounds reach a repeat stopping "
            f"elsewhere, from the soonest to the planned last (the phases' draws independent: "
            f"their reaches added in quadrature, -{low:.1f} s / +{high:.1f} s)")


def with_phases(state: ProbeState, est: Estimate, statistic: str = DEFAULT_STATISTIC,
                cal: Calibration | None = None) -> Estimate:
    """The first phase's estimate (``est``) with every later phase added: the whole runtime,
    its bounds widened by each phase's spread, notes and terms that say what each phase adds."""
    unseen = bool(UNSEEN_PHASE_CODES and set(UNSEEN_PHASE_CODES) & state.codes)
    if not state.phases and not unseen:
        return est
    cal = cal or Calibration.for_state(state)
    later = [estimate_phase(p, cal, state, statistic) for p in state.phases]
    extra = sum(p.seconds for p in later)
    sigma = math.sqrt(sum(p.sigma ** 2 for p in later))
    unseen_low, unseen_high = stop_reach(later)
    notes = list(est.notes)
    first = est.runtime_s
    if later:
        shares = "; ".join(f"phase {p.index} {p.seconds:.1f} s ({p.how}, "
                           f"{_steps(p.steps)}: {p.loop[:80]})" for p in later)
        notes.append(f"the program trains in {len(later) + 1} phases, one loop after another: "
                     f"phase 1 {first:.1f} s (with start-up and post-training); {shares}")
    for p in later:
        if p.how == "as seen":
            notes.append(f"phase {p.index}'s length is unknown: counted as the probe saw it, "
                         f"the high bound allows as much again")
    note = stop_note(later)
    if note:
        notes.append(note)
    if unseen:
        seen = len(later) + 1
        fit = est.terms.fit_s
        one_more = max(0.0, fit if fit is not None else first - (est.terms.t_init or 0.0))
        unseen_high += one_more
        notes.append(f"the program trains on after this loop: the estimate covers phase "
                     f"{'1' if seen == 1 else f'1-{seen}'} of at least {seen + 1}; the high bound "
                     f"allows one more phase as long as the first ({one_more:.1f} s)")
    runtime = first + extra
    high_half = math.hypot(est.high_s - first, cal.q * sigma)
    low_half = math.hypot(first - est.low_s, cal.q * sigma)
    uncertainty = {**est.uncertainty, "phases": sigma}
    if unseen_high:
        uncertainty["unseen_high"] = uncertainty.get("unseen_high", 0.0) + unseen_high
    if unseen_low:
        uncertainty["unseen_low"] = uncertainty.get("unseen_low", 0.0) + unseen_low
    seconds = ", ".join(f"{s:.3f}" for s in (first, *(p.seconds for p in later)))
    terms = replace(est.terms, phases=len(later) + 1, phase_s=seconds)
    return replace(est, runtime_s=runtime, low_s=max(0.0, runtime - low_half - unseen_low),
                   high_s=runtime + high_half + unseen_high, notes=tuple(notes),
                   uncertainty=uncertainty, terms=terms)


def _steps(n: int | None) -> str:
    return f"{n} steps" if n is not None else "length unknown"


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _spread(values: list[float]) -> float:
    if len(values) < 2:
        return values[0] if values else 0.0
    mean = _mean(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
