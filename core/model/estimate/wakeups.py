"""The tf.data autotuner's wake-ups, and what the probe's own epoch boundaries said of them:
each boundary stalled as its iterator's lifetime predicts, came cheap where a stall was due, or
waited too little to tell (stalls.py forecasts the boundaries to come from these). The
mechanism is stalls.py's docstring; RESULTS.md §0a measures it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...agent.steady import DEFAULT_STATISTIC

if TYPE_CHECKING:
    from ..state import ProbeState

FIRST_PERIOD_S = 0.010
MAX_PERIOD_S = 60.0
DOUBLINGS = 13  # periods 10 ms x 2^0 .. 2^12; the next, 81.92 s, is capped at 60 s
LAST_DOUBLED_S: float = FIRST_PERIOD_S * (2.0 ** DOUBLINGS - 1)  # 81.91 s: the 13th wake-up

INFORMATIVE_S = 0.3  # a predicted stall shorter than this cannot be told from a plain boundary
MATCH_REL = 0.25  # an observed boundary within this share (or INFORMATIVE_S) of the prediction stalled
# untold boundaries all alike say what the ones to come cost where, at the odds of a stall, so
# many alike would come by chance less often than this (a stall at each, or at none)
ALIKE_CHANCE = 0.05
LIFETIME_SLACK = 0.02  # how far off a measured epoch lifetime may be from the autotuner's own


def next_wakeup(age: float) -> float:
    """The autotuner's first wake-up at or after ``age`` seconds of its iterator's life."""
    if age <= FIRST_PERIOD_S:
        return FIRST_PERIOD_S
    if age <= LAST_DOUBLED_S:
        k = math.ceil(math.log2(age / FIRST_PERIOD_S + 1) - 1e-12)
        return FIRST_PERIOD_S * float(2.0 ** k - 1)
    periods = math.ceil((age - LAST_DOUBLED_S) / MAX_PERIOD_S - 1e-12)
    return LAST_DOUBLED_S + MAX_PERIOD_S * float(periods)


def stall_after(lifetime: float) -> float:
    """Seconds the destruction of an iterator that lived ``lifetime`` seconds waits."""
    return max(0.0, next_wakeup(lifetime) - lifetime)


@dataclass(frozen=True)
class Observed:
    """What the probe's own boundaries said."""

    stalled: int = 0  # boundaries that stalled as predicted
    cheap: int = 0  # boundaries whose predicted stall did not come
    untold: int = 0  # boundaries too short a predicted stall to tell
    plain: tuple[float, ...] = ()  # each seen boundary's own cost besides a stall and a gap
    gaps: tuple[float, ...] = ()  # ... and the last fit() call's teardown, as its `done` timed it
    outside: tuple[float, ...] = ()  # the program's own work between two fit() calls before it
    untold_costs: tuple[float, ...] = ()  # the whole cost of each untold one (stall or not)
    untold_due: tuple[float, ...] = ()  # ... and the stall each was due, too short to tell

    @property
    def seen(self) -> int:
        return self.stalled + self.cheap + self.untold


def epoch_lifetimes(state: ProbeState, t_it: float) -> list[tuple[float, float, float]]:
    """(lifetime of the epoch's iterator, cost of the boundary after it, of which the last
    fit() call's teardown as its `done` timed it) for every boundary the probe crossed. The
    lifetime is the epoch's wall time with its first step counted as a steady one (that step's
    excess is the previous boundary's, or the first step's tracing) - the iterator's first
    element starts the autotuner's clock. The program's own work between two fit() calls (the
    steps' `outside`) is no part of the cost."""
    epochs = sorted(state.steps_by_epoch)
    firsts = [state.t_it1 or 0.0, *state.boundary_steps]
    gaps = [0.0, *state.boundary_gaps]
    outside = [0.0, *state.boundary_outside]
    out = []
    for i, e in enumerate(epochs[:-1]):
        if i + 1 >= len(firsts):
            break
        first_step = firsts[i] - (gaps[i] if i < len(gaps) else 0.0)
        lifetime = state.time_by_epoch.get(e, 0.0) - first_step + t_it
        gap = gaps[i + 1] if i + 1 < len(gaps) else 0.0
        away = outside[i + 1] if i + 1 < len(outside) else 0.0
        out.append((lifetime, max(0.0, firsts[i + 1] - t_it - away), gap))
    return out


def observe(state: ProbeState, t_it: float, stalls: bool) -> Observed:
    """Classify the probe's boundaries: stalled as predicted, cheap where a stall was due, or too
    short a prediction to tell (``told``); and what each cost besides its stall."""
    return _classify(epoch_lifetimes(state, t_it), stalls, tuple(state.boundary_outside))


def observe_phase(boundary_steps: list[float], t_it: float, epoch_s: float,
                  stalls: bool) -> Observed:
    """A later phase's boundaries classified as ``observe`` does the first's: each the first
    step of an epoch of ``epoch_s`` seconds (the phase's steps times its step time), its cost
    what that step took beyond a steady one."""
    lives = [(epoch_s, max(0.0, b - t_it), 0.0) for b in boundary_steps]
    return _classify(lives, stalls, ())


def _classify(lives: list[tuple[float, float, float]], stalls: bool,
              outside: tuple[float, ...]) -> Observed:
    stalled = cheap = untold = 0
    plain, gaps, untold_costs, untold_due = [], [], [], []
    for lifetime, cost, gap in lives:
        kind, stall = told(lifetime, cost) if stalls else ("untold", 0.0)
        if kind == "stalled":
            stalled += 1
            rest = max(0.0, cost - stall)
        elif kind == "untold":
            untold += 1
            if stalls:
                untold_costs.append(cost)
                untold_due.append(stall)
            rest = max(0.0, cost - stall)
        else:
            cheap += 1
            rest = cost
        between = min(gap, rest)
        gaps.append(between)
        plain.append(rest - between)
    return Observed(stalled, cheap, untold, tuple(plain), tuple(gaps), outside[:len(plain)],
                    tuple(untold_costs), tuple(untold_due))


def untold_alike(state: ProbeState, t_it: float) -> int:
    """How many boundaries the run showed, in all its phases, whose stall was too short to tell
    and that all came out the same way - each cost at least half the wait it was due, or each
    less: 0 where they came out both ways (or there were none)."""
    seen = [observe(state, t_it, True)]
    for phase in state.phases:
        p_it = phase.steady.interval(DEFAULT_STATISTIC)[0]
        if phase.steady.n >= 2 and math.isfinite(p_it) and phase.plan_steps_per_epoch:
            seen.append(observe_phase(phase.boundary_steps, p_it,
                                      phase.plan_steps_per_epoch * p_it, True))
    waited = [c >= due / 2 for o in seen for c, due in zip(o.untold_costs, o.untold_due)]
    return len(waited) if waited and len(set(waited)) == 1 else 0


def told(lifetime: float, cost: float) -> tuple[str, float]:
    """What a boundary (or a teardown) of ``cost`` seconds after an iterator of ``lifetime``
    says: ("stalled", the wait it matched), ("untold", a wait too short to tell) or ("cheap",
    the wait that was due and did not come). The clock's start is not seen exactly, so a
    lifetime a little either side of the measured one counts too (an epoch of 5.09 s may have
    outlived the 5.11 s wake-up and waited 5.1 s for the next)."""
    due = {stall_after(lifetime * (1 + d)) for d in (-LIFETIME_SLACK, 0.0, LIFETIME_SLACK)}
    match = [s for s in due if s >= INFORMATIVE_S
             and abs(cost - s) <= max(MATCH_REL * s, INFORMATIVE_S)]
    if match:
        return "stalled", min(match, key=lambda s: abs(cost - s))
    small = [s for s in due if s < INFORMATIVE_S]
    if small:
        return "untold", min(small)
    return "cheap", stall_after(lifetime)
