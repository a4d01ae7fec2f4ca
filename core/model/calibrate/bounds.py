"""The constants of the bounds (bounds.py's ``Calibration``), measured per epoch mechanism on
recorded runs (calibrate_runs.py): each is a measured quantity of the runs - none is fitted to
make coverage - but q, the multiplier on sigma, which split conformal sets so that 90 % of the
runs' real totals lie inside their intervals.

The sets of CPU runs are measured on CPU runs alone (GPU runs leave them as they were); a
mechanism with recorded GPU runs gets a GPU set besides (``fit_device``): its CPU set with what
the GPU runs measure - the drift, the start-up and post-training spreads - and a q of their own."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import replace
from typing import Any, cast

import numpy as np

from ..estimate.bounds import (GPU, MECHANISMS, TF, Calibration, Uncertainty,
                               interval)
from .runs import Calibrations, Pair, Result, evaluate
from ..estimate.runtime import STEP_CI_Z
from ..state import ProbeState
from ..estimate.stalls import cores_usable
from ..estimate.wakeups import INFORMATIVE_S, MATCH_REL, epoch_lifetimes, observe, stall_after

COVERAGE = 0.9  # the bounds' promise: the real total inside [low, high] 9 times in 10
DRIFT_FLOOR = 0.02  # two instances of one type differ by a few percent: one machine cannot show it
GRID = [0.005 * 1.2 ** i for i in range(30)]  # 0.005 .. ~1.0: fit_noise's values of b and c


def _rms(xs: list[float]) -> float:
    return math.sqrt(sum(x * x for x in xs) / len(xs)) if xs else math.nan


def _log_ratios(pairs: list[Pair], value: Callable[[ProbeState], float | None]) -> list[float]:
    """log(full / probe) of a quantity, over the recorded probes (another process, another
    moment: what a user's probe and their later run differ by)."""
    out = []
    for p in pairs:
        if p.cut:
            continue
        a, b = value(p.probe), value(p.full)
        if a and b and a > 0 and b > 0:
            out.append(math.log(b / a))
    return out


def steady_mean(st: ProbeState) -> float:
    """The mean of a run's steps but each epoch's first: what T_it stands for over a whole run."""
    vals = st.steady.values
    return sum(vals) / len(vals) if len(vals) else math.nan


def train_seconds(st: ProbeState, epochs: int) -> float:
    """The steady steps of a whole run of ``epochs`` at the probe's step time."""
    t_it = st.step_time("trimmed")[0]
    return max(0.0, epochs * st.steps_per_epoch - 1) * t_it if t_it == t_it else 0.0


def forecast_epoch(st: ProbeState) -> float:
    """The lifetime of a later epoch as the estimate forecasts it from a probe: its steps at
    the steady step time and a later validation pass (stalls.py)."""
    t_it = st.step_time("trimmed")[0]
    t_val = st.validation_times()[1] or 0.0
    return st.steps_per_epoch * t_it + t_val if t_it == t_it else 0.0


def stall_counts(pairs: list[Pair]) -> list[tuple[int, int]]:
    """(stalled, informative boundaries) of each full run: where the predicted stall was long
    enough to tell, did it come?"""
    out = []
    for p in pairs:
        seen = observe(p.full, p.full.step_time("trimmed")[0], stalls=True)
        if seen.stalled + seen.cheap:
            out.append((seen.stalled, seen.stalled + seen.cheap))
    return out


def teardown_counts(pairs: list[Pair]) -> tuple[int, int]:
    """(stalled, informative) teardowns when fit() returned across the full runs: the last
    epoch's iterator, torn down as training ends - where its predicted stall was long enough to
    tell, did it come? (benchmarks/stalls.py's teardown rows)"""
    stalled = told = 0
    for p in pairs:
        st = p.full
        t_it = st.step_time("trimmed")[0]
        if st.fit_end_time is None or not t_it == t_it or not epoch_lifetimes(st, t_it) \
                or not st.steps_by_epoch:
            continue
        last = (st.time_by_epoch.get(max(st.steps_by_epoch), 0.0)
                - (st.boundary_steps[-1] if st.boundary_steps else 0.0) + t_it)
        due = stall_after(last)
        if due >= INFORMATIVE_S:
            told += 1
            stalled += abs(st.fit_end_time - due) <= max(MATCH_REL * due, INFORMATIVE_S)
    return stalled, told


def end_ratio(pairs: list[Pair]) -> float:
    """The teardowns' share stalled over the boundaries' (1.0 where either is not told)."""
    k, n = teardown_counts(pairs)
    counts = stall_counts(pairs)
    told = sum(t for _, t in counts)
    if not n or not told or not sum(s for s, _ in counts):
        return 1.0
    return round((k / n) / (sum(s for s, _ in counts) / told), 3)


def fit_beta_binomial(counts: list[tuple[int, int]]) -> tuple[float, float]:
    """Maximum-likelihood Beta(a, b) of the stall odds across runs (a grid; runs vary)."""
    if not counts:
        return (1.0, 1.0)
    grid = [round(0.1 * 1.25 ** i, 3) for i in range(32)]  # 0.1 .. ~100

    def loglik(a: float, b: float) -> float:
        return sum(math.lgamma(k + a) + math.lgamma(n - k + b) - math.lgamma(n + a + b)
                   - math.lgamma(a) - math.lgamma(b) + math.lgamma(a + b) for k, n in counts)

    return max(((a, b) for a in grid for b in grid), key=lambda ab: loglik(*ab))


def fit_noise(xs: list[tuple[float, ...]], with_length: bool) -> tuple[float, float, float]:
    """Maximum-likelihood (a, b, c) of x ~ N(0, a^2 + (b w)^2 + c^2 / T + s^2): a deviation that
    grows with how much the step time was seen to wander (w) and shrinks with the length of the
    run (T seconds: load that comes and goes averages out), besides what is known of each
    (s: the probe's own standard error of the step time, counted apart in the estimate);
    c = 0 unless ``with_length``. A grid: the constants are measured, not tuned."""
    if len(xs) < 4:
        return (Calibration.drift_base, Calibration.drift_per_wander, 0.0)
    cols = list(zip(*xs))
    x, w, t = (np.array(v, dtype=float) for v in cols[:3])
    known = np.array(cols[3], dtype=float) ** 2 if len(cols) > 3 else 0.0
    a = np.array([0.001, *GRID])[:, None, None, None]
    b = np.array([0.0, *GRID])[None, :, None, None]
    c = np.array([0.0, *GRID] if with_length else [0.0])[None, None, :, None]
    v = a * a + (b * w) ** 2 + c * c / np.maximum(t, 1.0) + known
    loglik = -(np.log(v) + x * x / v).sum(axis=-1)
    i, j, k = np.unravel_index(int(np.argmax(loglik)), loglik.shape)
    return (round(float(a.flat[i]), 4), round(float(b.flat[j]), 3), round(float(c.flat[k]), 3))


def boundary_costs(runs: list[list[float]]) -> dict[str, float]:
    """A boundary's own cost besides a stall (and the work between fit() calls): its typical
    value (the median of later boundaries), how much of what a run's *first* boundary cost its
    later ones cost too (the slope of their mean on it - a probe sees the first ones, which carry
    one-off work), what a run's later boundaries cost besides that, and their spread."""
    runs = [r for r in runs if len(r) >= 3]
    if len(runs) < 4:
        return {}
    firsts = [r[0] for r in runs]
    laters = [statistics.fmean(r[1:]) for r in runs]
    free = statistics.median(x for r in runs for x in r[1:])
    mx, my = statistics.fmean(firsts), statistics.fmean(laters)
    sxx = sum((x - mx) ** 2 for x in firsts)
    carry = min(1.0, max(0.0, sum((x - mx) * (y - my) for x, y in zip(firsts, laters)) / sxx
                         if sxx > 0 else 0.0))
    resid = [y - free - carry * (x - free) for x, y in zip(firsts, laters)]
    within = [x - statistics.fmean(r[1:]) for r in runs for x in r[1:]]
    return {"free_boundary_s": round(free, 3), "boundary_carry": round(carry, 3),
            "boundary_run_s": round(max(_rms(resid), 0.005), 3),
            "boundary_abs_s": round(max(_rms(within), 0.005), 3)}


def lifetime_spreads(pairs: list[Pair]) -> list[tuple[float, ...]]:
    """An epoch's lifetime, later epochs against the first (what a probe sees), around the run's
    own level (the drift is the run's level), with how much the step time wandered in that first
    epoch - fit_noise's rows. Runs of fit() in a loop are left out: lifetimes of their making."""
    rows: list[tuple[float, ...]] = []
    for p in pairs:
        t_it = p.full.step_time("trimmed")[0]
        record = epoch_lifetimes(p.full, t_it) if t_it == t_it else []
        w = p.cut_probe.steady.wander()
        expected = forecast_epoch(p.cut_probe)
        if record and w is not None and expected > 0 and "fit-loop" not in p.full.codes:
            xs = [math.log(life / expected) for life, _, _ in record[1:] if life > 0]
            if len(xs) >= 2:
                mid = statistics.fmean(xs)
                rows += [(x - mid, w, 1.0) for x in xs]
    return rows


def plain_boundaries(pairs: list[Pair], stalls: bool) -> list[list[float]]:
    """Each full run's boundaries' own costs besides a stall (boundary_costs' runs)."""
    out = []
    for p in pairs:
        t_it = p.full.step_time("trimmed")[0]
        seen = observe(p.full, t_it, stalls) if t_it == t_it else None
        if seen is not None and seen.plain:
            out.append(list(seen.plain))
    return out


def fit_stalls(pairs: list[Pair], base: Calibration) -> Calibration:
    """Whether boundaries stall (at least 1 in 20 of those that could tell) and, if they do,
    the Beta odds with one core usable and with more, and the teardown's against them."""
    counts = stall_counts(pairs)
    told = sum(n for _, n in counts)
    stalls = told > 0 and sum(k for k, _ in counts) / told >= 0.05
    ones = [p for p in pairs if cores_usable(p.full) == 1]
    manys = [p for p in pairs if cores_usable(p.full) != 1]
    return replace(base, stalls=stalls,
                   stall_prior_one=fit_beta_binomial(stall_counts(ones)) if stalls else (0.0, 1.0),
                   stall_prior_many=fit_beta_binomial(stall_counts(manys)) if stalls
                   else (0.0, 1.0),
                   stall_end_ratio_one=end_ratio(ones) if stalls else 1.0,
                   stall_end_ratio_many=end_ratio(manys) if stalls else 1.0)


def _rel_spread(log_ratios: list[float], otherwise: float) -> float:
    """The rms of these log ratios; ``otherwise`` where no recorded probe measured them."""
    return round(_rms(log_ratios), 4) if log_ratios else otherwise


def _post_ratios(pairs: list[Pair]) -> list[float]:
    """log(full / probe) of the post-training work, where the probe timed it: a probe that
    unwound a custom loop (``no-post``) timed the exit alone - the estimate does not take that
    for the work (runtime._post_training), nor does the spread."""
    return _log_ratios([p for p in pairs if "no-post" not in p.probe.codes],
                       lambda st: st.post_time)


def _spreads(pairs: list[Pair], base: Calibration) -> dict[str, float]:
    """Validation, post-training work, start-up and how a probe's step time wanders."""
    val_spreads = []
    for p in pairs:
        later = [v.dt for v in p.full.vals[1:]]
        if len(later) >= 2 and statistics.mean(later) > 0:
            val_spreads.append(statistics.pstdev(later) / statistics.mean(later))
    posts = [p.full.post_time for p in pairs if p.full.post_time]
    wanders = [w for p in pairs if (w := p.probe.steady.wander()) is not None]
    return {
        "wander_typical": round(statistics.median(wanders), 4) if wanders else base.wander_typical,
        "init_rel": _rel_spread(_log_ratios(pairs, lambda st: st.t_init), base.init_rel),
        "post_rel": _rel_spread(_post_ratios(pairs), base.post_rel),
        "post_typical_s": round(statistics.median(posts), 2) if posts else base.post_typical_s,
        "post_spread_s": round(_rms([x - statistics.median(posts) for x in posts]), 2)
        if len(posts) > 1 else base.post_spread_s,
        "val_rel": round(statistics.median(val_spreads), 3) if val_spreads else base.val_rel,
    }


def measure(pairs: list[Pair], mech: str) -> Calibration:
    """Each constant of ``mech`` but q (and the drift, measured over every mechanism:
    fit_drift) as a measured quantity of its calibration runs."""
    base = Calibration()
    stalled = fit_stalls(pairs, base)
    life_base, life_per, _ = fit_noise(lifetime_spreads(pairs), with_length=False)
    measured = replace(stalled, mechanism=mech, lifetime_base=life_base,
                       lifetime_per_wander=life_per)
    return _set(measured, {**boundary_costs(plain_boundaries(pairs, stalled.stalls)),
                           **_spreads(pairs, base)})


def _set(cal: Calibration, values: dict[str, float]) -> Calibration:
    """``cal`` with these constants (float ones, by name) replaced."""
    return replace(cal, **cast("dict[str, Any]", values))


def needed_q(r: Result, cal: Calibration) -> float:
    """The smallest q that puts the real total inside this run's interval (bisection: the
    interval widens with q)."""
    u = Uncertainty.from_dict(r.uncertainty)

    def inside(q: float) -> bool:
        low, high = interval(r.est, u, replace(cal, q=q))
        return low <= r.pair.truth <= high

    lo, hi = 0.0, 50.0
    if not inside(hi):
        return math.inf
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if inside(mid) else (mid, hi)
    return hi


def conformal(values: list[float], coverage: float = COVERAGE) -> float:
    """Split conformal: the ceil((n+1)*coverage)-th smallest value (the max if that is n+1)."""
    ranked = sorted(values)
    k = min(len(ranked), math.ceil((len(ranked) + 1) * coverage))
    return ranked[k - 1] if ranked else math.nan


def drift_rows(pairs: list[Pair]) -> list[tuple[float, ...]]:
    """fit_noise's rows of the drift: log(the whole run's steady step / its recorded probe's),
    the probe's wander, the run's seconds of steps, the probe's own standard error."""
    rows: list[tuple[float, ...]] = []
    for p in pairs:
        w = p.probe.steady.wander()
        t_it, _, high = p.probe.step_time("trimmed")
        if p.cut or w is None or not t_it > 0 or high != high:
            continue
        known = (high - t_it) / STEP_CI_Z / t_it if math.isfinite(high) else 0.0
        rows.append((math.log(steady_mean(p.full) / t_it), w, train_seconds(p.probe, p.epochs),
                     known))
    return rows


def fit_drift(pairs: list[Pair]) -> dict[str, float]:
    """The whole run's step time against its recorded probe's, over every mechanism: how a
    host's load moves a job's step time is the host's, not the framework's (and only pooled do
    the runs span enough lengths to tell a level shift from load that averages out)."""
    base, per, length = fit_noise(drift_rows(pairs), with_length=True)
    return {"drift_base": max(base, DRIFT_FLOOR), "drift_per_wander": per,
            "drift_per_sqrt_s": length}


def fit_mechanism(pairs: list[Pair], mech: str, drift: dict[str, float]) -> Calibration:
    """``mech``'s constants on its runs, q by split conformal on its recorded probes."""
    return _with_q(_set(measure(pairs, mech), drift), pairs, "fit_mechanism")


def can_promise(n: int, coverage: float = COVERAGE) -> bool:
    """Whether n runs are enough for split conformal to promise ``coverage``: the
    ceil((n+1)*coverage)-th smallest must be one of them (at 90 %: 9 runs or more). With fewer,
    ``conformal`` falls back on the largest, which holds only n/(n+1) of new runs."""
    return math.ceil((n + 1) * coverage) <= n


def _with_q(measured: Calibration, pairs: list[Pair], how: str,
            at_least: float = 1.0) -> Calibration:
    """``measured`` with q by split conformal on ``pairs``' recorded probes (all, if none is),
    no less than ``at_least``, and a source that names the runs."""
    recorded = [p for p in pairs if not p.cut] or pairs
    q = max(at_least, conformal([needed_q(r, measured) for r in evaluate(recorded, measured)]))
    programs = sorted({p.program for p in pairs})
    # rounded up: the run that needs the largest q stays inside with the q written
    return replace(measured, q=math.ceil(q * 1000 - 1e-9) / 1000, source=(
        f"{how} on {len(pairs)} recorded runs of {len(programs)} programs "
        f"({', '.join(programs)})"))


def fit_device(pairs: list[Pair], base: Calibration, key: str) -> Calibration:
    """A mechanism's set on a GPU (``key``), from its runs there: the drift and the spreads of
    start-up, post-training work and validation as those runs measure them, the rest - what a
    few GPU runs cannot tell: boundaries, stalls, an epoch's lifetime - the mechanism's CPU set
    ``base``'s; q by split conformal on the GPU runs, and where they are too few to promise 90 %
    (can_promise), no less than the CPU set's q: the largest needed q of 5 or 7 runs on one GPU
    held 2 of 5 runs on another (RESULTS §9)."""
    drift = fit_noise(drift_rows(pairs), with_length=True) if len(drift_rows(pairs)) >= 4 \
        else (base.drift_base, base.drift_per_wander, base.drift_per_sqrt_s)
    measured = _set(replace(base, mechanism=key), {
        "drift_base": max(drift[0], DRIFT_FLOOR), "drift_per_wander": drift[1],
        "drift_per_sqrt_s": drift[2], **_spreads(pairs, base)})
    recorded = len([p for p in pairs if not p.cut]) or len(pairs)
    return _with_q(measured, pairs, "fit_device", 1.0 if can_promise(recorded) else base.q)


def fit_sets(pairs: list[Pair]) -> Calibrations:
    """One set per mechanism; a mechanism without runs of its own gets the cautious set."""
    drift = fit_drift(pairs)
    cals = {m: fit_mechanism(ps, m, drift) for m in MECHANISMS
            if (ps := [p for p in pairs if p.mechanism == m])}
    for m in MECHANISMS:
        if m not in cals:
            cals[m] = replace(cals.get(TF) or next(iter(cals.values())), mechanism=m)
    return cals


def fit_all(pairs: list[Pair]) -> Calibrations:
    """The CPU sets on the CPU runs (fit_sets; on the GPU runs where there are none), and a GPU
    set for each mechanism with GPU runs (fit_device)."""
    cpu = [p for p in pairs if not p.on_gpu]
    gpu = [p for p in pairs if p.on_gpu]
    cals = fit_sets(cpu or gpu)
    for m in MECHANISMS:
        key = f"{m}-{GPU}"
        if ps := [p for p in gpu if p.mechanism == key]:
            cals[key] = fit_device(ps, cals[m], key)
    return cals
