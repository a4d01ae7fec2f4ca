"""Epoch-boundary stalls of tf.data input pipelines: when they come and how long they last.

**What they are** (benchmarks/RESULTS.md §0a, ``benchmarks/stalls.py``). Every ``tf.data``
iterator with autotuning on (the default) runs a model thread that re-optimises the pipeline at
exponentially spaced moments: 10 ms after the iterator's first element, then 20, 40, ... ms
later, the period doubling until it would pass 60 s and then staying at 60 s (TensorFlow's
``Model::OptimizeLoop``; ``kOptimizationPeriodMaxMs``). Its wake-ups therefore fall at

    W_k = 0.01 s * (2^k - 1)   for k <= 13   (10 ms, 30 ms, ... 10.23 s, 20.47 s, 40.95 s, 81.91 s)
    then every 60 s            (141.91 s, 201.91 s, ...)

of the iterator's life. Keras 3 builds a new iterator every epoch (``fit()`` on arrays or on a
dataset alike; a TensorFlow loop over a dataset does the same), and destroying the old one waits
for that thread's *next wake-up*. So a boundary after an epoch whose iterator lived ``L``
seconds stalls for ``W(L) - L``, where ``W(L)`` is the first wake-up at or after ``L``: an
epoch of 5.9 s waits 4.3 s (to 10.23 s), one of 10.4 s waits 10.1 s (to 20.47 s), one of 114 s
waits 28 s (to 141.91 s). On the corpus this predicted every stall to within about 0.1 s, from
0.05 s to 59 s, on runs it was never fitted to. The process sits idle meanwhile; the agent
suggests turning autotuning off (``tf.data.Options().autotune.enabled = False``).

**Whether it comes.** The wait lands on the training thread at most boundaries when training
has one core, and at about half of them - varying from run to run - with more: the stall of each
boundary is a coin toss whose odds are a property of the run. probecast keeps a Beta
distribution of those odds: a prior per kind of host (one core usable / more, or not said),
measured on recorded runs (``calibration.json``), updated by every boundary the probe saw whose
predicted stall was long enough to tell (``INFORMATIVE_S``).

**What it costs a run.** Each boundary still to come, and the teardown when training ends,
costs ``b0 + s * S`` - ``b0`` the boundary's own small cost (what the probe's boundaries cost
besides a stall), ``s`` the coin toss, ``S = W(L) - L`` for an epoch lifetime ``L`` that varies a
little from epoch to epoch (the more, the more the probe saw its step time wander). Near a wake-up that variation decides between a
stall of a moment and one of a whole epoch (an 80 s epoch waits 2 s or 60 s), and the forecast
carries that spread. ``forecast`` gives the mean of it all, its spread (the odds' uncertainty
makes the boundaries of one run move together), and the least and most it can cost.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Callable

from .bounds import own_loop
from .wakeups import (ALIKE_CHANCE, INFORMATIVE_S, Observed, epoch_lifetimes, observe,
                      observe_phase, stall_after, told, untold_alike)

if TYPE_CHECKING:
    from .bounds import Calibration
    from ..state import ProbeState

UNKNOWN_BOUNDARY_REL = 0.5  # a mechanism with no recorded runs: its boundaries vary this much

# quantiles of a standard normal over which a lifetime's spread is integrated: the run's own
# level (shared by all its epochs) on a coarse grid, each epoch's jitter on a finer one
_RUN_GRID = tuple(NormalDist().inv_cdf((i + 0.5) / 12) for i in range(12))
_EPOCH_GRID = tuple(NormalDist().inv_cdf((i + 0.5) / 16) for i in range(16))


@dataclass(frozen=True)
class StallLength:
    """The stall of a boundary, when it comes, for epochs whose lifetime varies: by the run's
    own level (the step time of the whole run is off the probe's by a few percent, shared by
    every epoch) and from one epoch to the next."""

    mean: float  # E[S]
    second: float  # E[S^2]: one boundary's
    shared: float  # E[E[S | run level]^2]: what moves every boundary of the run together
    most: float  # the longest within the spreads' 2.5 s.d.

    @property
    def var(self) -> float:
        return max(0.0, self.second - self.mean * self.mean)


def stall_length(lifetime: float, run_rel: float, epoch_rel: float) -> StallLength:
    if lifetime <= 0:
        return StallLength(0.0, 0.0, 0.0, 0.0)
    levels = _RUN_GRID if run_rel > 0 else (0.0,)
    jitter = _EPOCH_GRID if epoch_rel > 0 else (0.0,)
    m1 = m2 = shared = most = 0.0
    for zr in levels:
        xs = [stall_after(lifetime * math.exp(run_rel * zr + epoch_rel * ze)) for ze in jitter]
        mean = sum(xs) / len(xs)
        m1 += mean
        m2 += sum(x * x for x in xs) / len(xs)
        shared += mean * mean
        most = max(most, *xs)
    k = len(levels)
    return StallLength(m1 / k, m2 / k, shared / k, most)


@dataclass(frozen=True)
class StallOdds:
    """Beta(a, b): how likely a boundary of this run is to stall."""

    a: float
    b: float

    @property
    def mean(self) -> float:
        return self.a / (self.a + self.b) if self.a + self.b > 0 else 0.0

    @property
    def var(self) -> float:
        n = self.a + self.b
        return self.a * self.b / (n * n * (n + 1)) if n > 0 else 0.0

    def seen(self, stalled: int, cheap: int) -> StallOdds:
        return StallOdds(self.a + stalled, self.b + cheap)


def redrawn_stalls(state: ProbeState, t_it: float, p: float, p_end: float,
                   epoch_s: float) -> float:
    """A run seen whole drew each of its told boundaries' stalls once; a repeat pays each at its
    odds ``p`` (the teardown when training ends at ``p_end``): the seconds a repeat pays on
    average less those this run paid. Boundaries whose wait is too short to tell are left as
    they came; the teardown is told against the epochs' median lifetime (``epoch_s`` where
    the run crossed no boundary)."""
    def redrawn(kind: str, stall: float, odds: float) -> float:
        return (odds - 1.0) * stall if kind == "stalled" else odds * stall if kind == "cheap" \
            else 0.0

    lives = epoch_lifetimes(state, t_it)
    shift = sum(redrawn(*told(lifetime, cost), p) for lifetime, cost, _ in lives)
    if state.fit_end_time is not None:
        last = sorted(life for life, _, _ in lives)[len(lives) // 2] if lives else epoch_s
        shift += redrawn(*told(last, state.fit_end_time), p_end)
    return shift


def outside_runs_on(state: ProbeState) -> bool:
    """The program's own work between fit() calls went on after the probe's stop, in the time
    its log measured from the end of training to its exit (the loop ran on, each fit() returning
    at once): counted there, not with the boundaries to come."""
    return state.post_time is not None and "no-post" not in state.codes


def cores_usable(state: ProbeState) -> int | None:
    """The cores the probed program could use, where the log says (the agent names them in the
    CPU device: ``AMD EPYC (2 cores usable)``)."""
    if state.start is None:
        return None
    for d in state.start.devices:
        name = d.name
        if d.kind == "cpu" and "cores usable" in name:
            try:
                return int(name.rsplit("(", 1)[1].split()[0])
            except (IndexError, ValueError):
                return None
    return None


def prior_odds(state: ProbeState, cal: Calibration) -> StallOdds:
    one = cores_usable(state) == 1
    a, b = (cal.stall_prior_one if one else cal.stall_prior_many)
    return StallOdds(a, b)


def end_ratio(state: ProbeState, cal: Calibration) -> float:
    """The teardown when training ends against a boundary: its odds of a stall over theirs, as
    the recorded runs on this kind of host had it (on two cores 9 of 30 teardowns stalled
    against 57 % of boundaries; on one, 32 of 33 against 93 %: RESULTS §0a)."""
    return cal.stall_end_ratio_one if cores_usable(state) == 1 else cal.stall_end_ratio_many


@dataclass(frozen=True)
class BoundaryForecast:
    """The epoch boundaries still to come and the teardown when training ends."""

    per_boundary: float  # expected cost of one boundary (its stall and the rest)
    fit_end: float  # expected teardown when training ends
    sigma: float  # spread of all of them together, seconds (one s.d.)
    least: float  # all of them, if none stalls
    most: float  # all of them, if every one stalls at its longest
    p_stall: float  # the odds a boundary stalls (posterior mean; 0: the mechanism never does)
    stall_s: float  # expected stall when one comes
    lifetime_s: float  # the epoch lifetime the stall is predicted from
    observed: Observed
    unseen_high: float = 0.0  # stalls allowed for on the high side only (not expected)

    def describe(self) -> str:
        o = self.observed
        if self.p_stall <= 0:
            seen = f"{o.seen} seen" if o.seen else "none seen"
            return f"epoch boundaries: {self.per_boundary:.2f} s each ({seen}); they do not stall"
        told = (f"{o.stalled} of {o.stalled + o.cheap} seen stalled as predicted"
                if o.stalled + o.cheap else "none seen long enough to tell")
        return (f"tf.data autotuner: an epoch of {self.lifetime_s:.1f} s makes a boundary wait "
                f"{self.stall_s:.1f} s for its next wake-up; {told}; each boundary stalls with "
                f"odds {self.p_stall:.0%}: {self.per_boundary:.2f} s each expected")


def forecast(state: ProbeState, t_it: float, epoch_s: float, n_boundaries: float,
             cal: Calibration, with_fit_end: bool = True, train_s: float | None = None,
             phase_steps: list[float] | None = None) -> BoundaryForecast:
    """The cost of ``n_boundaries`` boundaries still to come (and, with ``with_fit_end``, of the
    teardown when training ends) for epochs of ``epoch_s`` seconds, in a run of ``train_s``
    seconds of steps (how far its level may drift); ``phase_steps``: a later phase's own
    boundaries (each later epoch's first step), those its next ones are like."""
    stalls = cal.stalls
    if not math.isfinite(t_it):  # epochs of one step each: no steady step (NaN) to add
        t_it = 0.0
    seen, odds = _seen_and_odds(state, t_it, epoch_s, cal, phase_steps)
    if train_s is None:
        train_s = (n_boundaries + 1) * epoch_s
    run_rel, epoch_rel = cal.noise(state, train_s)
    length = stall_length(epoch_s, run_rel, epoch_rel) if stalls else StallLength(0, 0, 0, 0)
    # a boundary's own cost: the work between fit() calls recurs as the probe saw it; the rest
    # (tracing, one-off work) mostly does not - it carries over as far as the recorded runs say
    # (boundary_carry) - around a typical value
    gap_mean = sum(seen.gaps) / len(seen.gaps) if seen.gaps else 0.0
    if seen.outside and not outside_runs_on(state):
        # the program's work between fit() calls did not go on after the probe's stop (the
        # program was stopped there): each boundary to come carries it as the probe saw it
        gap_mean += sum(seen.outside) / len(seen.outside)
    plain_mean = gap_mean + _own_cost(state, seen, cal)
    plain_sd = cal.boundary_abs_s
    n = n_boundaries + (1 if with_fit_end else 0)
    p, p2 = odds.mean, odds.var + odds.mean ** 2
    var_plain = n * plain_sd ** 2 + (n * cal.boundary_run_s) ** 2
    least = n * min(plain_mean, gap_mean + cal.free_boundary_s)
    if not cal.stall_point:
        # a mechanism with no recorded runs: the boundaries to come cost what the probe's did,
        # give or take half (one seen says little about the next); a stall at each, and the end
        # of training, are allowed for on the high side only
        sd = max(plain_sd, UNKNOWN_BOUNDARY_REL * plain_mean)
        spread = math.sqrt(n_boundaries * sd ** 2 + (n_boundaries * sd) ** 2 / max(1, seen.seen))
        allowance = n * p * length.mean if stalls else 0.0
        return BoundaryForecast(plain_mean, 0.0, spread, 0.0, n_boundaries * plain_mean, 0.0,
                                length.mean, epoch_s, seen,
                                unseen_high=allowance + (plain_mean if with_fit_end else 0.0))
    per = plain_mean + p * length.mean
    # the teardown when training ends: its own odds, the boundaries' times the recorded ratio
    end = plain_mean + min(1.0, end_ratio(state, cal) * p) * length.mean
    alike = _alike_untold(seen, gap_mean, length.mean, p,
                          lambda: untold_alike(state, t_it) if stalls and cal.stall_point else 0)
    per, end = (alike, alike) if alike else (per, end)
    # given the odds and the run's level the boundaries are independent; the odds and the level
    # are uncertain and move them all together
    var_own = n * (p * length.second - p2 * length.shared)
    var_shared = n * n * (p2 * length.shared - (p * length.mean) ** 2)
    sigma = math.sqrt(max(0.0, var_own) + max(0.0, var_shared) + var_plain)
    most = n * (plain_mean + length.most) if p > 0 else least
    return BoundaryForecast(per, end if with_fit_end else 0.0, sigma, least, most, p,
                            length.mean, epoch_s, seen)


def _own_cost(state: ProbeState, seen: Observed, cal: Calibration) -> float:
    """A boundary's own cost to come, beyond a stall and the work between fit() calls."""
    if len(seen.plain) >= 2 and (cal.mechanism.startswith("torch") or own_loop(state)):
        # a DataLoader's later passes start alike (its workers start again, if it has any):
        # what the probe's later boundaries cost, the ones to come cost - the first carried
        # one-off work (pytorch/examples' super_resolution on an H200: 0.13 s each, not 0.001).
        # So in a loop of the program's own (a GradientTape loop): what runs between its
        # epochs is its code, each epoch (tensorflow/docs' CVAE: a test pass and a figure
        # saved, 1.0 s at each boundary - carried as fit()'s one-off work is, 0.01 s: -16 %)
        return sum(seen.plain[1:]) / len(seen.plain[1:])
    own = sum(seen.plain) / len(seen.plain) if seen.plain else cal.free_boundary_s
    return cal.free_boundary_s + cal.boundary_carry * (own - cal.free_boundary_s)


def _seen_and_odds(state: ProbeState, t_it: float, epoch_s: float, cal: Calibration,
                   phase_steps: list[float] | None) -> tuple[Observed, StallOdds]:
    """What the boundaries the ones to come are like said (the first phase's, or a later
    phase's own), and the run's odds of a stall, told by both."""
    told_well = cal.stalls and cal.stall_point
    seen = observe(state, t_it, told_well)
    told_by = (seen.stalled, seen.cheap)
    if phase_steps is not None:  # (the first phase's lifetimes are another length)
        seen = observe_phase(phase_steps, t_it, epoch_s, told_well)
        told_by = (told_by[0] + seen.stalled, told_by[1] + seen.cheap)
    return seen, prior_odds(state, cal).seen(*told_by) if cal.stalls else StallOdds(0, 1)


def _alike_untold(seen: Observed, gap_mean: float, stall_s: float, p: float,
                  run_alike: Callable[[], int]) -> float | None:
    """A boundary's cost where the ones to come wait too little to tell a stall from the rest,
    as the probe's did, and the probe's all cost alike (a mix of stalls and none would differ by
    about a stall): what the probe's cost (epochs of 37 ms waited 27-29 ms for the 70 ms wake-up
    at each boundary of keras.io's TF-NumPy example, where odds of a stall said 12 ms - 200
    epochs a fit, eight fits: -31 %). None otherwise. ``gap_mean``: the between-fit() work each
    boundary to come carries, of which the probe's own gaps are already in its costs."""
    told = seen.untold_costs
    if len(told) < 2 or stall_s >= INFORMATIVE_S or max(told) - min(told) >= stall_s / 2:
        return None
    n = run_alike()  # (read only here: it observes every phase's boundaries again)
    if p ** n + (1 - p) ** n > ALIKE_CHANCE:
        return None  # so few alike in the whole run, at the odds p, is likely chance: three of
        # a keras.io autoencoder's (two in its second fit(), 13 and 19 ms) waited for none, its
        # second fit()'s 99 cost 67 ms on average (odds 43 %)
    own_gaps = sum(seen.gaps) / len(seen.gaps) if seen.gaps else 0.0
    return gap_mean - own_gaps + sum(told) / len(told)
