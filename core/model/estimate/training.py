"""Full-training runtime from a probe: the dissertation's equations plus the epoch-boundary term.

With N_it iterations per epoch and N_ep epochs (Malta, UNICAMP 2021, ch. 5; docs/ARCHITECTURE.md):

- Eq. 5.3 (with validation):
  T = T_init + T_it1 + (N_it-1)*T_it + T_val1 + (N_ep-1)*(N_it*T_it + T_val + T_ep)
- Eq. 5.4 (without validation): the same without T_val1 and T_val.
- Eq. 5.1 (two whole epochs observed): T = T_init + T(Ep1) + (N_ep-1)*T(Ep2)

``T_ep`` is not in the dissertation: it is the cost of an epoch boundary (the first step of each
later epoch minus a steady step), which real Keras runs showed to be seconds per epoch. It is
measured when the log crosses an epoch boundary and reported as a term; when none was crossed the
estimate says so in its notes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from ...agent.steady import DEFAULT_STATISTIC
from .drift import Drift, probe_trend, whole_epochs
from .epoch_work import periodic_validation, work_source
from .length import steps_per_epoch
from ..state import ProbeState

DEFAULT_HORIZONS: tuple[int, ...] = (5, 10, 20, 25)
EQUATIONS = ("auto", "5.1", "5.3", "5.4")
# A job that ends inside its first pass (measured in steps, no epochs): the equation without
# epochs - T = T_init + T_it1 + (N-1)*T_it + n_per*T_per - named so in rows and the detail view.
STEPS_EQUATION = "steps"
MEASURED = "measured"  # the probe saw the whole run: its runtime is the answer
PER_STEPS_EQUATION = "per-steps"  # the length is unknown: time per N steps, start-up apart


class NoEstimate(ValueError):
    """The log cannot support an estimate (no steps, unknown N_it, ...): the message says why."""


@dataclass(frozen=True)
class Terms:
    """The inputs of the equation, so a user can redo the arithmetic."""

    n_it: int
    n_ep: float
    t_init: float
    t_it1: float | None = None
    t_it: float | None = None
    t_it_low: float | None = None
    t_it_high: float | None = None
    t_val1: float | None = None
    t_val: float | None = None
    n_val: int | None = None  # validation passes, where not one an epoch (epoch_work.py)
    t_ep: float = 0.0
    t_ep_low: float = 0.0
    t_ep_high: float = 0.0
    t_ep1: float | None = None
    t_ep2: float | None = None
    t_ep2_low: float | None = None
    t_ep2_high: float | None = None
    boundaries_seen: int = 0
    steady_steps: int = 0
    statistic: str = DEFAULT_STATISTIC
    t_post: float | None = None  # training over -> the program's exit (measured, else None)
    t_fit_end: float | None = None  # the teardown when training ends (measured or forecast)
    fit_s: float | None = None  # the training terms alone (no start-up, no post-training work)
    t_ep_seen: float = 0.0  # the mean cost of the boundaries the probe crossed (t_ep: forecast)
    p_stall: float | None = None  # odds a boundary stalls on the tf.data autotuner (stalls.py)
    stall_s: float | None = None  # ... and how long, when it does
    stalls_redrawn: float = 0.0  # a run seen whole: its told stalls at their odds, less its draws
    every: int | None = None  # the program's periodic work (evaluate, save) every K steps ...
    t_per: float | None = None  # ... what each costs on top of a step (None: not seen)
    n_per: int | None = None  # ... and how many times the job does it
    unit: str = ""  # a run timed in blocks (blocks.py): its progress unit (samples, epochs) ...
    progress_seen: float | None = None  # ... how far the blocks seen took it ...
    progress_total: float | None = None  # ... how far the whole run goes ...
    blocks_seen: int = 0  # ... and how many blocks were seen (t_ep2: seconds per unit)
    # the step time's trend over the probe's steady steps (drift.py): "speeding up", "slowing
    # down" or "flat" ("" : too few steps to tell), its size per 100 steps and over the window
    # (relative: -0.08 is 8 % faster), the steady steps the step time was taken from (i..j,
    # j exclusive) and whether the probe ended while they still moved that way ("" : settled)
    drift: str = ""
    drift_per_100: float | None = None
    drift_change: float | None = None
    window_first: int | None = None
    window_last: int | None = None
    ended_moving: str = ""
    # a program that trains in phases, loops one after another (phases.py): how many the
    # estimate adds up, and each one's seconds ("12.300, 4.500": phase 1 with start-up and
    # post-training first)
    phases: int | None = None
    phase_s: str = ""
    # a loop of runs of the training that starts none after a time limit (Optuna's timeout,
    # repeats.py): the limit, seconds, and the runs that start by then at this pace
    time_limit_s: float | None = None
    limited_runs: int | None = None

    def as_dict(self) -> dict[str, float | int | str | None]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class Estimate:
    runtime_s: float
    low_s: float
    high_s: float
    equation: str
    terms: Terms
    notes: tuple[str, ...] = field(default_factory=tuple)
    uncertainty: dict[str, float] = field(default_factory=dict)  # seconds, by source

    def formula(self) -> str:
        """The equation with the numbers filled in (+ T_post when it was measured); a loop of
        runs with a time limit (repeats.py) says the training it counts instead."""
        text, t = self._equation(), self.terms
        if t.time_limit_s and t.limited_runs and t.fit_s is not None and " = " in text:
            head, _, total = text.rpartition(" = ")
            text = (f"{head}, its training counted as the {t.limited_runs} runs that start "
                    f"within {t.time_limit_s:g} s ({t.fit_s:.2f} s) = {total}")
        return text

    def _equation(self) -> str:
        t = self.terms
        post = (f" + {t.t_fit_end:.3f}" if t.t_fit_end else "") + \
            (f" + {t.t_post:.3f}" if t.t_post else "")
        if self.equation == "5.1":
            return (f"{t.t_init:.3f} + {t.t_ep1:.3f} + ({t.n_ep:g}-1) x {t.t_ep2:.3f}{post}"
                    f" = {self.runtime_s:.2f} s")
        ep = f" + {t.t_ep:.3f}" if t.t_ep else ""
        if t.t_per and t.n_per:
            post = f" + {t.n_per} x {t.t_per:.3f}" + post
        if self.equation == MEASURED:
            if abs(t.stalls_redrawn) >= 0.005:
                return (f"the run itself, launch to exit {self.runtime_s - t.stalls_redrawn:.2f}"
                        f" {t.stalls_redrawn:+.2f} (tf.data stalls at their odds, not as this "
                        f"run drew them) = {self.runtime_s:.2f} s")
            return f"the run itself, launch to exit = {self.runtime_s:.2f} s"
        if self.equation == "blocks":
            val = (f" + ({t.n_ep:g}-seen) x {t.t_val:.2f}" if t.t_val else "")
            return (f"{t.t_init:.1f} + {t.blocks_seen} blocks seen + ({t.progress_total:g}-"
                    f"{t.progress_seen:g}) {t.unit} x {t.t_ep2:.4g} s{val} = {self.runtime_s:.0f} s")
        if self.equation == PER_STEPS_EQUATION:
            per = f" + {t.n_per} x {t.t_per:.3f}" if t.t_per and t.n_per else ""
            return (f"{t.n_it} x {t.t_it:.5f}{per} = {self.runtime_s:.2f} s per {t.n_it} steps"
                    f" (start-up {t.t_init:.2f} s apart)")
        if self.equation == STEPS_EQUATION:
            val = f" + {t.t_val1:.3f}" if t.t_val1 else ""
            return (f"{t.t_init:.3f} + {t.t_it1:.3f} + ({t.n_it}-1) x {t.t_it:.5f}{val}{post}"
                    f" = {self.runtime_s:.2f} s")
        if self.equation == "5.3" and t.n_val is not None:
            return (f"{t.t_init:.3f} + {t.t_it1:.3f} + ({t.n_it}-1) x {t.t_it:.5f}"
                    f" + ({t.n_ep:g}-1) x ({t.n_it} x {t.t_it:.5f}{ep}) + {t.t_val1:.3f}"
                    f" + ({t.n_val}-1) x {t.t_val:.3f}{post} = {self.runtime_s:.2f} s")
        if self.equation == "5.3":
            return (f"{t.t_init:.3f} + {t.t_it1:.3f} + ({t.n_it}-1) x {t.t_it:.5f} + {t.t_val1:.3f}"
                    f" + ({t.n_ep:g}-1) x ({t.n_it} x {t.t_it:.5f} + {t.t_val:.3f}{ep}){post}"
                    f" = {self.runtime_s:.2f} s")
        return (f"{t.t_init:.3f} + {t.t_it1:.3f} + ({t.n_it}-1) x {t.t_it:.5f}"
                f" + ({t.n_ep:g}-1) x ({t.n_it} x {t.t_it:.5f}{ep}){post} = {self.runtime_s:.2f} s")


def steady_training(t: Terms, n_ep: float) -> float:
    """The steady steps' share of the run: what a step time off by a few percent moves."""
    if t.t_it is not None and t.t_it == t.t_it:
        return max(0.0, n_ep * t.n_it - 1) * t.t_it
    return max(0.0, n_ep - 1) * (t.t_ep2 or 0.0)


def eq_5_1(t_init: float, t_ep1: float, t_ep2: float, n_ep: float) -> float:
    return t_init + t_ep1 + (n_ep - 1) * t_ep2


def eq_5_3(t_init: float, t_it1: float, t_it: float, n_it: int, n_ep: float,
           t_val1: float, t_val: float, t_ep: float = 0.0, n_val: float | None = None) -> float:
    """``n_val``: validation passes, where not one an epoch (the first costs t_val1)."""
    if n_val is None:
        return t_init + t_it1 + (n_it - 1) * t_it + t_val1 + (n_ep - 1) * (n_it * t_it + t_val
                                                                          + t_ep)
    val = t_val1 + (n_val - 1) * t_val if n_val >= 1 else 0.0
    return t_init + t_it1 + (n_it - 1) * t_it + (n_ep - 1) * (n_it * t_it + t_ep) + val


def eq_5_4(t_init: float, t_it1: float, t_it: float, n_it: int, n_ep: float,
           t_ep: float = 0.0) -> float:
    return eq_5_3(t_init, t_it1, t_it, n_it, n_ep, 0.0, 0.0, t_ep)


def training_estimate(
    state: ProbeState,
    n_ep: float,
    *,
    use_validation: bool,
    equation: str,
    statistic: str,
    n_it: int | None = None,
) -> Estimate:
    """The training terms for ``n_ep`` passes of ``n_it`` steps (default: the log's N_it; a
    job measured in steps passes its own, length.py)."""
    if equation not in EQUATIONS:
        raise ValueError(f"unknown equation {equation!r}; one of {', '.join(EQUATIONS)}")
    if n_ep <= 0:
        raise NoEstimate(f"the number of epochs must be positive, got {n_ep:g}")
    if state.start is None:
        raise NoEstimate("no 'start' event: not a probe log")
    own_it, _ = steps_per_epoch(state)
    n_it = n_it or own_it
    if n_it <= 0:
        raise NoEstimate("the steps in an epoch are unknown (no DataLoader or loop of known "
                         "length around the step): give the job's length with --steps N")
    if state.t_it1 is None:
        raise NoEstimate("the log has no training steps")
    # the plain program's start-up: the agent's own (its launcher, the hook's set-up) taken off
    t_init = state.t_init - state.agent_init_s if state.t_init is not None else 0.0
    notes: list[str] = []
    if state.t_init is None:
        notes.append("no init event: T_init taken as 0")

    full = state.full_epochs()
    # auto: Eq. 5.1 only with three whole epochs or more - with two it rests on one later epoch,
    # i.e. one boundary, while Eq. 5.3 with T_ep uses every boundary the probe crossed
    # (benchmarks/RESULTS.md §0a: on 2 cores one run's boundaries varied from 0.1 s to 9.6 s)
    if n_it != own_it:  # a job measured in steps, ending inside a pass: no whole epochs
        full = []
    if periodic_validation(state) is not None and equation == "auto":
        full = []  # whole epochs with a pass and without: Eq. 5.3 counts the passes
    if equation == "5.1" or (equation == "auto" and len(full) >= 3):
        if len(full) < 2:
            raise NoEstimate("Eq. 5.1 needs two whole epochs; the log has "
                             f"{len(full)}")
        return with_drift(_epoch_based(state, full, t_init, n_it, n_ep, statistic, notes), state)
    est = _iteration_based(state, t_init, n_it, n_ep, use_validation, equation, statistic, notes)
    return with_drift(est, state)


def trend_of(state: ProbeState) -> tuple[Drift | None, str]:
    """The trend of the probe's steady steps and where it was still going (drift.probe_trend),
    epoch against epoch where the probe saw two whole epochs or more."""
    return probe_trend(state.steady.values, whole_epochs(
        state.steps_by_epoch, state.steps_per_epoch, bool(state.periodic_steps)))


def with_drift(est: Estimate, state: ProbeState) -> Estimate:
    """The estimate with the trend of the probe's steady steps in its terms, and a note where
    the probe ended while they still moved. The step time stays the whole window's: on the
    recorded corpora neither the settled window alone nor a longer probe while the trend moves
    came closer to the full runs (benchmarks/RESULTS.md §11)."""
    values = state.steady.values
    trend, moving = trend_of(state)
    terms = replace(est.terms, window_first=0, window_last=len(values),
                    drift=trend.direction if trend is not None else "",
                    drift_per_100=trend.per_100_steps if trend is not None else None,
                    drift_change=trend.change if trend is not None else None,
                    ended_moving=moving)
    notes = est.notes
    if moving and trend is not None:
        over = (f"{100 * trend.per_100_steps:+.1f} %/100 steps, {100 * trend.change:+.0f} % over "
                f"its {len(values)} steady steps")
        if trend.direction != moving:  # the last half turned: over all of them the other way
            over = f"its last half; {trend.direction} over all: {over}"
        notes = (*notes, f"the probe ended while its steps were still {moving} ({over}): the "
                         "step time is their mean, the run's may lie beyond it")
    return replace(est, terms=terms, notes=notes)


def _iteration_based(state: ProbeState, t_init: float, n_it: int, n_ep: float,
                     use_validation: bool, equation: str, statistic: str,
                     notes: list[str]) -> Estimate:
    """Eq. 5.3 (with validation) or 5.4, with the epoch-boundary term T_ep."""
    assert state.t_it1 is not None
    t_it, t_it_low, t_it_high = state.step_time(statistic)
    if not (t_it == t_it):  # NaN: only the first step was seen
        t_it = t_it_low = t_it_high = state.t_it1
        notes.append("only one step seen: the first (slow) step stands in for the steady step time")
    elif math.isinf(t_it_high):
        t_it_high = t_it * 2
        notes.append("too few steady steps for an interval: upper bound set to 2x")
    overheads = state.boundary_overheads(t_it)
    if overheads:
        t_ep = sum(overheads) / len(overheads)
        t_ep_low, t_ep_high = min(overheads), max(overheads)
        if len(overheads) == 1:
            notes.append("one epoch boundary seen: its cost varies between epochs")
    else:
        t_ep = t_ep_low = t_ep_high = 0.0  # not seen: the bounds allow for it (estimate.py)

    t_val1, t_val, partial = state.validation_times()
    if state.vals_are_periodic:  # evaluations every K steps: the periodic term has them
        t_val1 = t_val = None
    want_val = use_validation and equation in ("auto", "5.3")
    if want_val and t_val1 is None:
        if equation == "5.3":
            raise NoEstimate("Eq. 5.3 needs validation timings; the log has none")
        if state.val_steps and not state.vals_are_periodic:  # (those: periodic work)
            notes.append("no validation timed: estimate without validation (Eq. 5.4)")
        want_val = False
    n_val = None
    if want_val:
        assert t_val1 is not None and t_val is not None
        if partial:
            notes.append(f"validation scaled from partial passes to {state.val_steps} batches")
        n_val = _validation_passes(state, n_ep, notes)
        runtime = eq_5_3(t_init, state.t_it1, t_it, n_it, n_ep, t_val1, t_val, t_ep, n_val)
        low = eq_5_3(t_init, state.t_it1, t_it_low, n_it, n_ep, t_val1, t_val, t_ep_low, n_val)
        high = eq_5_3(t_init, state.t_it1, t_it_high, n_it, n_ep, t_val1, t_val, t_ep_high,
                      n_val)
        eq = "5.3"
    else:
        runtime = eq_5_4(t_init, state.t_it1, t_it, n_it, n_ep, t_ep)
        low = eq_5_4(t_init, state.t_it1, t_it_low, n_it, n_ep, t_ep_low)
        high = eq_5_4(t_init, state.t_it1, t_it_high, n_it, n_ep, t_ep_high)
        eq = "5.4"
        t_val1 = t_val = None
    every, t_per, n_per, added = _periodic_term(state, t_it, n_ep * n_it, notes)
    runtime, low, high = runtime + added[0], low + added[1], high + added[2]
    one_pass = n_it != state.steps_per_epoch or (state.plan is not None
                                                  and state.plan.steps == n_it)
    if n_ep == 1 and one_pass:
        eq = STEPS_EQUATION
    terms = Terms(n_it=n_it, n_ep=n_ep, t_init=t_init, t_it1=state.t_it1, t_it=t_it,
                  t_it_low=t_it_low, t_it_high=t_it_high, t_val1=t_val1, t_val=t_val,
                  n_val=n_val, t_ep=t_ep, t_ep_low=t_ep_low, t_ep_high=t_ep_high,
                  boundaries_seen=len(overheads), steady_steps=state.steady.n, statistic=statistic,
                  every=every, t_per=t_per, n_per=n_per)
    return Estimate(runtime, low, high, eq, terms, tuple(notes))


def _validation_passes(state: ProbeState, n_ep: float, notes: list[str]) -> int | None:
    """The validation passes of the job where not one an epoch (epoch_work.py), said."""
    periodic = periodic_validation(state)
    if periodic is None:
        return None
    where = work_source(state.plan) if state.plan else ""
    notes.append(f"validation {periodic.describe(n_ep, of=n_ep)}, under {where}: the probe saw "
                 "an epoch end without one")
    return periodic.after(n_ep, of=n_ep)


def _periodic_term(state: ProbeState, t_it: float, total_steps: float, notes: list[str],
                   ) -> tuple[int | None, float | None, int | None, tuple[float, float, float]]:
    """The program's periodic work (every K steps: evaluate, save) over the whole job: (K, its
    cost each time, how many times, and what it adds to the estimate, its low and its high)."""
    periodic = state.periodic(t_it)
    if periodic is None:
        return None, None, None, (0.0, 0.0, 0.0)
    every = periodic.every
    n_per = max(0, int((total_steps - 1) // every))
    t_per = periodic.per_s(n_per)
    if t_per is None:
        where = f" ({periodic.source})" if periodic.source else ""
        notes.append(f"periodic work every {every} steps{where}: the probe did not reach one, "
                     "so it is not in the estimate (a longer probe times it: "
                     "probe.boundary_budget)")
        return every, None, n_per, (0.0, 0.0, 0.0)
    return every, t_per, n_per, (n_per * t_per, n_per * min(periodic.extra_s, default=t_per),
                                 n_per * max(periodic.extra_s, default=t_per))


def _epoch_based(state: ProbeState, full: list[tuple[int, float]], t_init: float, n_it: int,
                 n_ep: float, statistic: str, notes: list[str]) -> Estimate:
    t_ep1 = full[0][1]
    later = [t for _, t in full[1:]]
    t_ep2 = sum(later) / len(later)
    lo, hi = min(later), max(later)
    if len(later) == 1:
        notes.append("one later epoch seen: bounds are the estimate itself")
    runtime = eq_5_1(t_init, t_ep1, t_ep2, n_ep)
    t_it, t_it_low, t_it_high = state.step_time(statistic)
    terms = Terms(n_it=n_it, n_ep=n_ep, t_init=t_init, t_it1=state.t_it1, t_it=t_it,
                  t_it_low=t_it_low, t_it_high=t_it_high, t_ep1=t_ep1, t_ep2=t_ep2,
                  t_ep2_low=lo, t_ep2_high=hi, boundaries_seen=len(state.boundary_steps),
                  steady_steps=state.steady.n, statistic=statistic)
    return Estimate(runtime, eq_5_1(t_init, t_ep1, lo, n_ep), eq_5_1(t_init, t_ep1, hi, n_ep),
                    "5.1", terms, tuple(notes))


def parse_horizons(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise ValueError(f"horizons must be whole numbers separated by commas, got {text!r}") from None
    if not values or any(v <= 0 for v in values):
        raise ValueError(f"horizons must be positive, got {text!r}")
    return values

