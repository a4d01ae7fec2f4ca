"""Can a user bet on the number, and on the order? Real probes against the real whole runs.

    .venv/bin/python benchmarks/accuracy.py benchmarks/corpus/runs benchmarks/corpus/runs-torch \
        benchmarks/corpus/runs-long [--held-out DIR ...] [--exclude REGEX] [--fit] [--markdown] \
        [--detail]

Pairs every probe log (``probe-NAME``) with the full run of the same setting (``NAME``, or
``full-NAME`` as benchmarks/record_runs.py names them), estimates the full run's whole process -
launch to exit - from the probe at the number of epochs the full run really ran, and reports per
corpus:

- how often the real total lies inside [low, high] (the promise: >= 90 %), the half-width (and,
  as a diagnostic, what it would be with q scaled in hindsight to hold exactly 90 % of the judged
  runs: the narrowest this shape of sigma allows), the point error (median, max) against the
  whole process and against fit() alone;
- decisions: for every two runs of one program (its batch sizes, its hosts), P(the one estimated
  faster really is) from the two probes jointly (core/model/decisions.py); among the pairs whose
  real totals differ by >= 10 %, how many are decided, and among all decided pairs, how many are
  wrong - by time, by cost at a price per core-hour, and both together (#20's gates);
- whether P is calibrated: every pair of every corpus by the P it was given, the claims that
  were wrong against the number P itself expected (the sum of 1 - P).

Every figure is for a program the constants never saw: **leave one program out** - for each
program, the constants (per mechanism: Keras/TensorFlow and PyTorch, core/model/bounds.py; the
pair constants of decisions.py) are measured on all the *other* programs of the corpora, then
that program's runs and pairs are estimated and judged. ``--held-out`` corpora are judged with
the constants measured on every program of the others (``calibration.json``'s). Each figure
is given three times: from the real probes as recorded (another process, another moment:
start-up and the host's speed vary), from probes cut out of the full run's own log (what the
default probe sees - start-up, the first epoch with its validation, one boundary, a few steps of
the next - with the run's post-training work), and bare (cut, the log ending at the cut as a live
probe's does).

``--fit`` measures the constants on every calibration program and writes
core/model/calibration.json. ``--shapes DIR`` also judges a shapes corpus (jobs in the shapes
people write, benchmarks/corpus/runs-shapes/) per shape, as a user meets it: the length read
from the program by the probe (benchmarks/shapes.py).
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import math
import platform
import re
import statistics
import sys
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from probecast.core.model.bounds import (MECHANISMS, TF, Calibration,  # noqa: E402
                                         Uncertainty, interval, mechanism)
from probecast.core.model.stalls import cores_usable, epoch_lifetimes, observe  # noqa: E402
from probecast.core.model.decisions import (BOUND_Z, PairConstants, log_scales,  # noqa: E402
                                            p_ahead)
from probecast.core.model.estimate import NoEstimate, training_estimate  # noqa: E402
from probecast.core.model.estimate import STEP_CI_Z, whole_process  # noqa: E402
from probecast.core.model.events import Done, End, Event, EventReader, Step  # noqa: E402
from probecast.core.model.logstore import discover_logs, open_log  # noqa: E402
from probecast.core.model.state import ProbeState, fold_all  # noqa: E402

PRICE_PER_CORE_HOUR = 0.05  # made-up but proportional: a 2-core host costs twice a 1-core one
CUT_STEPS = 10  # steps of the second epoch a cut probe keeps (the default probe sees a few)
COVERAGE = 0.9
RHO_RANGE = (-0.5, 0.95)  # a measured correlation is kept inside this (few pairs: not +-1)


@dataclass
class Pair:
    """A full run and a probe of the same setting."""

    name: str
    corpus: str
    program: str
    cores: int
    batch: int
    probe: ProbeState
    full: ProbeState
    cut: bool  # the probe was cut out of the full run's log
    cut_probe: ProbeState  # the probe cut out of the full run's log (always made)
    bare_probe: ProbeState  # ... and the same ending where the cut does, as a live probe's log

    @property
    def mechanism(self) -> str:
        return mechanism(self.full)

    @property
    def truth(self) -> float:
        assert self.full.end is not None
        return self.full.end.t

    @property
    def epochs(self) -> int:
        """Epochs the full run really ran (custom loops log no epoch events: their steps say)."""
        return max(len(self.full.epochs_done), len(self.full.steps_by_epoch))

    @property
    def fit_truth(self) -> float:
        """fit() alone: the first step to the end of training (the last `done`)."""
        st = self.full
        t_init = st.t_init or 0.0
        end = st.end.t if st.end else 0.0
        post = st.post_time or 0.0
        return end - t_init - post - (st.fit_end_time or 0.0)

    def as_cut(self, bare: bool = False) -> Pair:
        return replace(self, probe=self.bare_probe if bare else self.cut_probe, cut=True)

    def variant(self, name: str) -> Pair:
        """``recorded`` (the real probe), ``cut`` or ``bare`` (cut, with no end)."""
        return self if name == "recorded" else self.as_cut(bare=name == "bare")


def read(path: Path) -> list[Event]:
    reader = EventReader()
    with open_log(path) as fh:
        return list(reader.read(fh))


def cut_probe(events: list[Event], steps: int = CUT_STEPS, bare: bool = False) -> list[Event]:
    """What the default probe sees of a full run: through ``steps`` steps of the second epoch,
    then - as a real probe measures it itself - the program's post-training work (the full run's
    `end`). Its `done` costs nothing: a probe stopped mid-epoch tears its iterator down at a
    moment of its own, and the full run's final teardown is not what it would have seen.
    ``bare``: the log just stops there (no `done`, no `end`), as a live probe's does."""
    out: list[Event] = []
    seen = 0
    for e in events:
        if isinstance(e, Step) and e.epoch >= 1:
            if seen >= steps or e.epoch > 1:
                break
            seen += 1
        out.append(e)
    done = [e for e in events if isinstance(e, Done)]
    end = events[-1]
    t = out[-1].t
    if done and isinstance(end, End) and not bare:
        out.append(Done(t, 0.0, "probe-done", "cut"))
        out.append(End(t + end.dt, end.dt, "probe-done", "cut", exit_code=end.exit_code))
    return out


def load_pairs(paths: list[str], corpus: str = "", exclude: str | None = None) -> list[Pair]:
    files, errors = discover_logs(paths)
    for e in errors:
        print(e, file=sys.stderr)
    by_name = {f.name.split(".jsonl")[0]: f for f in files
               if not (exclude and re.search(exclude, f.name))}
    pairs = []
    for name, f in sorted(by_name.items()):
        if name.startswith("probe-"):
            continue
        key = name[len("full-"):] if name.startswith("full-") else name
        events = read(f)
        full = fold_all(events)
        if full.end is None or full.end.status != "complete" or full.start is None:
            continue
        cut = fold_all(cut_probe(events))
        bare = fold_all(cut_probe(events, bare=True))
        probe_file = by_name.get(f"probe-{key}")
        probe = fold_all(read(probe_file)) if probe_file is not None else cut
        start = full.start
        cores = 2 if "2core" in start.instance else 1
        pairs.append(Pair(key, corpus or str(paths[0]), start.workload, cores, start.batch_size,
                          probe, full, probe_file is None, cut, bare))
    return pairs


@dataclass
class Result:
    pair: Pair
    est: float
    low: float
    high: float
    sigma: float
    uncertainty: dict[str, float]
    fit_est: float
    q: float  # the multiplier its interval was drawn with (its mechanism's calibration)

    @property
    def err(self) -> float:
        return (self.est - self.pair.truth) / self.pair.truth

    @property
    def log_err(self) -> float:
        """log(truth / estimate): how far the truth lies over (+) or under (-) the estimate."""
        return math.log(self.pair.truth / self.est)

    @property
    def inside(self) -> bool:
        return self.low <= self.pair.truth <= self.high

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2 / self.est


Calibrations = dict[str, Calibration]


def evaluate(pairs: Iterable[Pair], cals: Calibrations | Calibration) -> list[Result]:
    out = []
    for p in pairs:
        cal = (cals if isinstance(cals, Calibration) else cals.get(p.mechanism)
               or cals[TF].cautious())
        try:
            train = training_estimate(p.probe, p.epochs, use_validation=True, equation="auto",
                                      statistic="trimmed")
        except NoEstimate as exc:
            print(f"{p.name}: no estimate ({exc})", file=sys.stderr)
            continue
        est = whole_process(p.probe, train, p.epochs, cal)
        u = est.uncertainty
        out.append(Result(p, est.runtime_s, est.low_s, est.high_s, u["sigma"], dict(u),
                          est.terms.fit_s or 0.0, cal.q))
    return out


# ---- measuring the constants of one mechanism on its calibration runs --------------------------


def _rms(xs: list[float]) -> float:
    return math.sqrt(sum(x * x for x in xs) / len(xs)) if xs else math.nan


def _log_ratios(pairs: list[Pair], value) -> list[float]:  # type: ignore[no-untyped-def]
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


def boundary_record(st: ProbeState) -> tuple[list[tuple[float, float]], float]:
    """A full run's boundaries as (lifetime of the epoch before, cost) and its steady step."""
    t_it = st.step_time("trimmed")[0]
    return (epoch_lifetimes(st, t_it) if t_it == t_it else []), t_it


def stall_counts(pairs: list[Pair]) -> list[tuple[int, int]]:
    """(stalled, informative boundaries) of each full run: where the predicted stall was long
    enough to tell, did it come?"""
    out = []
    for p in pairs:
        seen = observe(p.full, p.full.step_time("trimmed")[0], stalls=True)
        if seen.stalled + seen.cheap:
            out.append((seen.stalled, seen.stalled + seen.cheap))
    return out


def fit_beta_binomial(counts: list[tuple[int, int]]) -> tuple[float, float]:
    """Maximum-likelihood Beta(a, b) of the stall odds across runs (a grid; runs vary)."""
    if not counts:
        return (1.0, 1.0)
    grid = [round(0.1 * 1.25 ** i, 3) for i in range(32)]  # 0.1 .. ~100

    def loglik(a: float, b: float) -> float:
        return sum(math.lgamma(k + a) + math.lgamma(n - k + b) - math.lgamma(n + a + b)
                   - math.lgamma(a) - math.lgamma(b) + math.lgamma(a + b) for k, n in counts)

    return max(((a, b) for a in grid for b in grid), key=lambda ab: loglik(*ab))


GRID = [0.005 * 1.2 ** i for i in range(30)]  # 0.005 .. ~1.0


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


DRIFT_FLOOR = 0.02  # two instances of one type differ by a few percent: one machine cannot show it


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


def measure(pairs: list[Pair], mech: str) -> Calibration:
    """Each constant is a measured quantity of the calibration runs (none is fitted to make
    coverage; q alone is set by split conformal, in fit_mechanism)."""
    base = Calibration()
    counts = stall_counts(pairs)
    stalled = sum(k for k, _ in counts)
    told = sum(n for _, n in counts)
    stalls = told > 0 and stalled / told >= 0.05
    one = stall_counts([p for p in pairs if cores_usable(p.full) == 1])
    many = stall_counts([p for p in pairs if cores_usable(p.full) != 1])
    # an epoch's lifetime, later epochs against the first (what a probe sees), with how much the
    # step time wandered in that first epoch (fit() in a loop: lifetimes of its own making)
    lifetimes: list[tuple[float, float]] = []
    plain: list[list[float]] = []
    for p in pairs:
        record, t_it = boundary_record(p.full)
        w = p.cut_probe.steady.wander()
        expected = forecast_epoch(p.cut_probe)
        if record and w is not None and expected > 0 and "fit-loop" not in p.full.codes:
            xs = [math.log(life / expected) for life, _, _ in record[1:] if life > 0]
            if len(xs) >= 2:  # around the run's own level: the drift is the run's level
                mid = statistics.fmean(xs)
                lifetimes += [(x - mid, w, 1.0) for x in xs]
        seen = observe(p.full, t_it, stalls) if t_it == t_it else None
        if seen is not None and seen.plain:
            plain.append(list(seen.plain))
    val_spreads = []
    for p in pairs:
        later = [v.dt for v in p.full.vals[1:]]
        if len(later) >= 2 and statistics.mean(later) > 0:
            val_spreads.append(statistics.pstdev(later) / statistics.mean(later))
    posts = [p.full.post_time for p in pairs if p.full.post_time]
    wanders = [w for p in pairs if (w := p.probe.steady.wander()) is not None]
    life_base, life_per, _ = fit_noise(lifetimes, with_length=False)
    return replace(
        base,
        mechanism=mech,
        stalls=stalls,
        stall_prior_one=fit_beta_binomial(one) if stalls else (0.0, 1.0),
        stall_prior_many=fit_beta_binomial(many) if stalls else (0.0, 1.0),
        lifetime_base=life_base, lifetime_per_wander=life_per,
        **boundary_costs(plain),
        wander_typical=round(statistics.median(wanders), 4) if wanders else base.wander_typical,
        init_rel=round(_rms(_log_ratios(pairs, lambda st: st.t_init)), 4),
        post_rel=round(_rms(_log_ratios(pairs, lambda st: st.post_time)), 4),
        post_typical_s=round(statistics.median(posts), 2) if posts else base.post_typical_s,
        post_spread_s=round(_rms([x - statistics.median(posts) for x in posts]), 2)
        if len(posts) > 1 else base.post_spread_s,
        val_rel=round(statistics.median(val_spreads), 3) if val_spreads else base.val_rel,
    )


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


def hindsight_half_width(results: list[Result], coverage: float = COVERAGE) -> float:
    """The median half-width had every q been scaled, in hindsight, by the one factor that puts
    exactly ``coverage`` of these runs inside: what the shape of sigma allows at the promised
    coverage, without split conformal's margin for runs not seen (not a rule a user could be
    given - it looks at the truth)."""
    scales = sorted(needed_q(r, Calibration()) / r.q for r in results)
    if not scales or not math.isfinite(s := scales[math.ceil(len(scales) * coverage) - 1]):
        return math.nan
    widths = []
    for r in results:
        low, high = interval(r.est, Uncertainty.from_dict(r.uncertainty), Calibration(q=r.q * s))
        widths.append((high - low) / 2 / r.est)
    return statistics.median(widths)


def conformal(values: list[float], coverage: float = COVERAGE) -> float:
    """Split conformal: the ceil((n+1)*coverage)-th smallest value (the max if that is n+1)."""
    ranked = sorted(values)
    k = min(len(ranked), math.ceil((len(ranked) + 1) * coverage))
    return ranked[k - 1] if ranked else math.nan


def fit_drift(pairs: list[Pair]) -> dict[str, float]:
    """The whole run's step time against its recorded probe's, over every mechanism: how a
    host's load moves a job's step time is the host's, not the framework's (and only pooled do
    the runs span enough lengths to tell a level shift from load that averages out)."""
    drifts = [(math.log(steady_mean(p.full) / t_it), w, train_seconds(p.probe, p.epochs),
               (high - t_it) / STEP_CI_Z / t_it if math.isfinite(high) else 0.0)
              for p in pairs if not p.cut and (w := p.probe.steady.wander()) is not None
              and (t_it := (step := p.probe.step_time("trimmed"))[0]) > 0
              and (high := step[2]) == high]
    base, per, length = fit_noise(drifts, with_length=True)
    return {"drift_base": max(base, DRIFT_FLOOR), "drift_per_wander": per,
            "drift_per_sqrt_s": length}


def fit_mechanism(pairs: list[Pair], mech: str, drift: dict[str, float]) -> Calibration:
    measured = replace(measure(pairs, mech), **drift)
    recorded = [p for p in pairs if not p.cut] or pairs
    q = max(1.0, conformal([needed_q(r, measured) for r in evaluate(recorded, measured)]))
    programs = sorted({p.program for p in pairs})
    return replace(measured, q=round(q, 3), source=(
        f"benchmarks/accuracy.py --fit on {len(pairs)} recorded runs of {len(programs)} programs "
        f"({', '.join(programs)}), {dt.date.today()}, {platform.machine()} {platform.node()}"))


def fit_all(pairs: list[Pair]) -> Calibrations:
    """One set per mechanism; a mechanism without runs of its own gets the cautious set."""
    drift = fit_drift(pairs)
    cals = {m: fit_mechanism(ps, m, drift) for m in MECHANISMS
            if (ps := [p for p in pairs if p.mechanism == m])}
    for m in MECHANISMS:
        if m not in cals:
            cals[m] = replace(cals.get(TF) or next(iter(cals.values())), mechanism=m)
    return cals


# ---- decisions between two runs of one program -------------------------------------------------


@dataclass
class Decision:
    program: str
    view: str  # time | cost
    lead: Result  # the one estimated ahead
    other: Result
    p: float
    truth_ratio: float  # other's real value / lead's (> 1: the lead really is ahead)
    threshold: float = 0.95  # the pair constants' threshold: at or above it, decided

    @property
    def decided(self) -> bool:
        return self.p >= self.threshold

    @property
    def differs(self) -> bool:
        return max(self.truth_ratio, 1 / self.truth_ratio) >= 1.1

    @property
    def wrong(self) -> bool:
        return self.truth_ratio < 1.0


def _price(r: Result) -> float:
    return PRICE_PER_CORE_HOUR * r.pair.cores


def _vals(r: Result, view: str) -> tuple[float, float, float]:
    k = _price(r) / 3600 if view == "cost" else 1.0
    return r.est * k, r.low * k, r.high * k


def decisions(results: list[Result], pc: PairConstants) -> list[Decision]:
    out = []
    # the runs a user would compare: one program in one corpus (a corpus's runs of a program
    # share its data set; the long jobs run the same scripts on far more data)
    by_program: dict[tuple[str, str], list[Result]] = {}
    for r in results:
        by_program.setdefault((r.pair.corpus, r.pair.program), []).append(r)
    for (_, program), rs in by_program.items():
        for a, b in itertools.combinations(rs, 2):
            for view in ("time", "cost"):
                lead, other = (a, b) if _vals(a, view)[0] <= _vals(b, view)[0] else (b, a)
                p = p_ahead(_vals(lead, view), _vals(other, view),
                            same_host=lead.pair.cores == other.pair.cores, pc=pc)
                k_l = _price(lead) if view == "cost" else 1.0
                k_o = _price(other) if view == "cost" else 1.0
                out.append(Decision(program, view, lead, other, p,
                                    other.pair.truth * k_o / (lead.pair.truth * k_l),
                                    pc.threshold))
    return out


def _sides(lead: Result, other: Result) -> tuple[float, float]:
    """The scales p_ahead uses: the lead's upper side, the other's lower side."""
    return (log_scales(lead.est, lead.low, lead.high)[1],
            log_scales(other.est, other.low, other.high)[0])


def fit_pairs(results: list[Result]) -> PairConstants:
    """rho: the correlation of two runs' standardised errors (one program, same / other host
    kind), measured; kappa: the scale on the difference's spread at which its 90 % interval
    holds the real ratio of 90 % of these pairs (split conformal, as the bounds' q) - so that
    P(ahead) means what it says, not merely that few claims were wrong on easy pairs."""
    def z(r: Result) -> float:
        below, above = log_scales(r.est, r.low, r.high)
        scale = above if r.log_err > 0 else below
        return r.log_err / scale if scale > 0 else 0.0

    same: list[tuple[float, float]] = []
    other: list[tuple[float, float]] = []
    made = [d for d in decisions(results, PairConstants(kappa=1.0)) if d.view == "time"]
    for d in made:
        za, zb = z(d.lead), z(d.other)
        (same if d.lead.pair.cores == d.other.pair.cores else other).extend([(za, zb), (zb, za)])
    rho_same, rho_other = _corr(same), _corr(other)
    # each pair's error on the ratio, in units of the difference's spread (kappa 1)
    zs = []
    for d in made:
        s_a, s_b = _sides(d.lead, d.other)
        rho = rho_same if d.lead.pair.cores == d.other.pair.cores else rho_other
        s_d = math.sqrt(max(s_a * s_a + s_b * s_b - 2 * rho * s_a * s_b, 1e-12))
        est_ratio = d.other.est / d.lead.est
        zs.append(abs(math.log(d.truth_ratio / est_ratio)) / s_d)
    kappa = conformal(zs) / BOUND_Z if zs else 1.0
    pc = PairConstants(rho_same_host=round(rho_same, 3), rho_other_host=round(rho_other, 3),
                       kappa=round(kappa, 3))
    return replace(pc, threshold=claim_threshold(decisions(results, pc)))


def claim_threshold(made: list[Decision], target: float = 0.05) -> float:
    """The lowest P at or above which a claim is made such that, on these pairs, claims are
    wrong at most ``target`` of the time - by time and by cost together, counted as split
    conformal does, (wrong + 1) / (claims + 1) - and never below THRESHOLD_FLOOR. P itself is
    calibrated (kappa): a claim at 85 % is wrong about 15 % of the time; the claims made are
    right 95 % of the time because most stand far above the threshold."""
    for step in range(round(THRESHOLD_FLOOR * 100), 100):
        t = step / 100
        claims = [d.wrong for d in made if d.p >= t]
        if (sum(claims) + 1) / (len(claims) + 1) <= target:
            return t
    return 0.99


# a claim at worse than 4-to-1 odds is not a decision, whatever the recorded pairs would allow
THRESHOLD_FLOOR = 0.8


def _corr(xy: list[tuple[float, float]]) -> float:
    if len(xy) < 6:
        return 0.0
    xs, ys = [a for a, _ in xy], [b for _, b in xy]
    try:
        rho = statistics.correlation(xs, ys)
    except statistics.StatisticsError:
        return 0.0
    return min(max(rho, RHO_RANGE[0]), RHO_RANGE[1])


# ---- leave one program out ---------------------------------------------------------------------


_FOLDS: dict[tuple[str, int], tuple[Calibrations, PairConstants]] = {}


def _fold(program: str, rest: list[Pair]) -> tuple[Calibrations, PairConstants]:
    """The constants measured without ``program`` (the same for every variant judged)."""
    key = (program, len(rest))
    if key not in _FOLDS:
        cals = fit_all(rest)
        _FOLDS[key] = cals, fit_pairs(evaluate(rest, cals))
    return _FOLDS[key]


def cross_validate(pairs: list[Pair], variant: str) -> tuple[list[Result], list[Decision]]:
    """Every program judged with constants measured on the others (always on recorded probes;
    ``variant``: which probe of the judged program - Pair.variant). A program is held out from
    every corpus at once (the long jobs run some of the same scripts on more data)."""
    results, made = [], []
    programs = sorted({p.program for p in pairs})
    for program in programs:
        rest = [p for p in pairs if p.program != program]
        cals, pc = _fold(program, rest)
        held = [p.variant(variant) for p in pairs if p.program == program]
        res = evaluate(held, cals)
        results += res
        made += decisions(res, pc)
    return results, made


# ---- reporting ---------------------------------------------------------------------------------


def summary(results: list[Result], made: list[Decision]) -> list[tuple[str, str]]:
    errs = [abs(r.err) for r in results]
    fit_errs = [abs((r.fit_est - r.pair.fit_truth) / r.pair.fit_truth) for r in results
                if r.pair.fit_truth > 0]
    inside = sum(r.inside for r in results)
    probe_cost = [r.pair.probe.end.t / r.pair.truth for r in results
                  if r.pair.probe.end is not None and not r.pair.cut]
    rows = [
        ("real total inside [low, high]", f"{inside}/{len(results)} = {inside / len(results):.0%}"),
        ("median half-width", f"{statistics.median(r.half_width for r in results):.1%}"),
        ("... q set in hindsight to hold exactly 90 % of these runs",
         f"{hindsight_half_width(results):.1%}"),
        ("point error vs whole process: median / max",
         f"{statistics.median(errs):.1%} / {max(errs):.1%}"),
        ("point error vs fit() alone: median / max",
         f"{statistics.median(fit_errs):.1%} / {max(fit_errs):.1%}" if fit_errs else "-"),
        ("probe wall time / full run: median / max",
         f"{statistics.median(probe_cost):.0%} / {max(probe_cost):.0%}" if probe_cost else "-"),
    ]
    # how far the estimated ratio of two runs lies from the real one (by time; by cost it is
    # the same ratio times the price ratio)
    ratio_errs = sorted(abs(math.log(_vals(d.other, "time")[0] / _vals(d.lead, "time")[0]
                                     / d.truth_ratio)) for d in made if d.view == "time")
    if ratio_errs:
        p90 = ratio_errs[min(len(ratio_errs) - 1, int(0.9 * len(ratio_errs)))]
        rows.append(("error of the estimated ratio of two runs: median / p90",
                     f"{math.expm1(statistics.median(ratio_errs)):.1%} / {math.expm1(p90):.1%}"))
    for view in ("time", "cost"):
        ds = [d for d in made if d.view == view]
        big = [d for d in ds if d.differs]
        word = "faster" if view == "time" else "cheaper"
        decided_row, wrong_row = _gate_rows(ds)
        rows.append((f"pairs differing >= 10 % ({word}) decided", decided_row))
        # the ceiling of any rule: a pair the point estimates put in the wrong order can only be
        # left undecided or decided wrongly
        ordered = sum(not d.wrong for d in big)
        rows.append((f"... ordered right by the point estimates ({word})",
                     f"{ordered}/{len(big)} = {_pct(ordered, len(big))}"))
        rows.append((f"wrong claims among decided pairs ({word})", wrong_row))
        apart = sum(_vals(d.lead, view)[2] < _vals(d.other, view)[1] for d in big)
        rows.append((f"... decided by the old rule, intervals apart ({word})",
                     f"{apart}/{len(big)} = {_pct(apart, len(big))}"))
    # #20's gates as it words them, over every comparison a user is shown (by time and by cost)
    decided_row, wrong_row = _gate_rows([d for d in made if d.view in ("time", "cost")])
    rows.append(("pairs differing >= 10 % decided (both views)", decided_row))
    rows.append(("wrong claims among decided pairs (both views)", wrong_row))
    return rows


def _gate_rows(ds: list[Decision]) -> tuple[str, str]:
    """#20's two gates over these decisions: the pairs differing >= 10 % that are decided, and
    the decided pairs that are wrong."""
    big = [d for d in ds if d.differs]
    decided = [d for d in ds if d.decided]
    decided_big, wrong = sum(d.decided for d in big), sum(d.wrong for d in decided)
    return (f"{decided_big}/{len(big)} = {_pct(decided_big, len(big))}",
            f"{wrong}/{len(decided)} = {_pct(wrong, len(decided))}")


def _pct(a: int, b: int) -> str:
    return f"{a / b:.0%}" if b else "-"


SOURCES = ("steps", "drift", "boundaries", "validation", "post", "init", "floor")


def report(title: str, results: list[Result], made: list[Decision], markdown: bool,
           detail: bool) -> list[str]:
    if not results:
        return [f"{title}: no runs"]
    lines = [f"{title}: {len(results)} runs, {len({r.pair.program for r in results})} programs, "
             f"{len(made) // 2} pairs"]
    rows = summary(results, made)
    if markdown:
        lines += ["", "| measure | value |", "|---|---|"] + [f"| {a} | {b} |" for a, b in rows]
    else:
        lines += [f"  {a:<46} {b}" for a, b in rows]
    if not detail:
        return lines
    lines.append("")
    lines.append(f"  {'run':<40} {'epochs':>6} {'real':>7} {'est':>7} {'err':>7} "
                 f"{'bounds':>17} {'in':>3}  sigma by source, % of the estimate")
    for r in sorted(results, key=lambda r: r.pair.name):
        u = r.uncertainty
        sources = " ".join(f"{k[:4]} {100 * u[k] / r.est:.1f}" for k in SOURCES
                           if u.get(k, 0) >= 0.005 * r.est)
        lines.append(f"  {r.pair.name[:40]:<40} {r.pair.epochs:>6} {r.pair.truth:>6.1f}s "
                     f"{r.est:>6.1f}s {r.err:>+6.1%} {r.low:>7.1f}-{r.high:<7.1f}s "
                     f"{'yes' if r.inside else 'NO':>3}{' cut' if r.pair.cut else ''}  {sources}")
    lines.append("")
    lines.append("  decisions by time (P that the one estimated faster really is; real ratio):")
    for d in sorted((d for d in made if d.view == "time"), key=lambda d: (d.program, -d.p)):
        verdict = ("WRONG" if d.wrong else "right") if d.decided else "undecided"
        lines.append(f"    {d.lead.pair.name[:34]:<34} < {d.other.pair.name[:34]:<34} "
                     f"P {d.p:5.1%}  real x{d.truth_ratio:4.2f}  {verdict}")
    return lines


def table(judged: dict[str, tuple[list[Result], list[Decision]]]) -> list[str]:
    """One Markdown table: a column per corpus, and one for all of them together."""
    columns = {title.split(" (")[0]: v for title, v in judged.items() if v[0]}
    columns["all"] = ([r for res, _ in columns.values() for r in res],
                      [d for _, made in columns.values() for d in made])
    cells = {name: dict(summary(res, made)) for name, (res, made) in columns.items()}
    counts = {name: f"{len(res)} runs, {len(made) // 2} pairs"
              for name, (res, made) in columns.items()}
    names = list(columns)
    lines = ["| measure | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|",
             "| runs judged | " + " | ".join(counts[n] for n in names) + " |"]
    for measure in cells[names[-1]]:
        lines.append(f"| {measure} | " + " | ".join(cells[n].get(measure, "-") for n in names)
                     + " |")
    return lines


P_BINS = ((0.5, 0.8), (0.8, 0.9), (0.9, 0.99), (0.99, 1.0))


def reliability(made: list[Decision]) -> list[str]:
    """Is P calibrated? Every pair of every corpus, by the P it was given: how many of the
    claims were wrong, against how many P itself expected (the sum of 1 - P)."""
    lines = ["| claimed P | pairs (faster) | wrong | expected by P | pairs (cheaper) | wrong "
             "| expected by P |", "|---|---|---|---|---|---|---|"]
    for lo, hi in P_BINS:
        cells = []
        for view in ("time", "cost"):
            ds = [d for d in made if d.view == view and lo <= d.p < hi + (hi == 1.0)]
            cells += [str(len(ds)), str(sum(d.wrong for d in ds)),
                      f"{sum(1 - d.p for d in ds):.1f}"]
        label = f"{lo:.0%}-{hi:.0%}" if hi < 1.0 else f">= {lo:.0%}"
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def corpus_title(path: str) -> str:
    return Path(path).name


VARIANTS = {"recorded": "the recorded probes", "cut": "probes cut from the full runs",
            "bare": "probes cut from the full runs, their logs ending at the cut (no end)"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logs", nargs="+", help="calibration corpora: directories of full runs and "
                                            "probes (each one a corpus of its own)")
    ap.add_argument("--held-out", nargs="*", default=[], metavar="DIR",
                    help="corpora kept out of the calibration entirely (judged with constants from all the others)")
    ap.add_argument("--fit", action="store_true",
                    help="measure the constants on every calibration program and write "
                         "core/model/calibration.json")
    ap.add_argument("--variants", default="recorded,cut,bare",
                    help="which probes to judge, comma-separated: recorded (the real probes), cut "
                         "(cut out of the full runs, with the program's post-training work), "
                         "bare (cut, the log ending there as a live probe's does)")
    ap.add_argument("--exclude", metavar="REGEX",
                    help="leave out logs whose file name matches (e.g. runs of another length "
                         "than their probes': not a comparison a user makes)")
    ap.add_argument("--detail", action="store_true", help="every run and every pair")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--shapes", nargs="*", default=[], metavar="DIR",
                    help="also judge shapes corpora as a user meets them - the job's length "
                         "read from the program by the probe - per shape (benchmarks/shapes.py)")
    ns = ap.parse_args()
    if ns.shapes:
        import shapes  # benchmarks/shapes.py, beside this script

        judged_shapes = [j for d in ns.shapes for j in shapes.judge(d)]
        print("=== shapes, each as the product answers it\n")
        print("\n".join(shapes.report(judged_shapes, ns.markdown)) + "\n")
        if ns.detail:
            print("\n".join(shapes.detail(judged_shapes)) + "\n")
    corpora = {corpus_title(d): load_pairs([d], corpus_title(d), ns.exclude) for d in ns.logs}
    held_out = {corpus_title(d): load_pairs([d], corpus_title(d), ns.exclude)
                for d in ns.held_out}
    calib = [p for ps in corpora.values() for p in ps]
    if not calib:
        print("no complete full runs found", file=sys.stderr)
        return 1
    if ns.fit:
        write_calibration(calib)
    variants = [v for v in ns.variants.split(",") if v]
    all_cals = fit_all(calib)
    all_pc = fit_pairs(evaluate(calib, all_cals))
    for variant in variants:
        what = VARIANTS[variant]
        judged: dict[str, tuple[list[Result], list[Decision]]] = {}
        everything = [p for ps in corpora.values() for p in ps]
        res_all, made_all = cross_validate(everything, variant)
        for name, pairs in corpora.items():
            fulls = {id(p.full) for p in pairs}
            judged[f"{name} (each program held out)"] = (
                [r for r in res_all if id(r.pair.full) in fulls],
                [d for d in made_all if id(d.lead.pair.full) in fulls])
        for name, pairs in held_out.items():
            res = evaluate([p.variant(variant) for p in pairs], all_cals)
            judged[f"{name} (never calibrated on)"] = (res, decisions(res, all_pc))
        print(f"=== from {what}\n")
        if ns.markdown:
            print("\n".join(table(judged)) + "\n")
            print("\n".join(reliability([d for _, made in judged.values() for d in made]))
                  + "\n")
        for title, (res, made) in judged.items():
            if ns.markdown and not ns.detail:
                continue
            print("\n".join(report(title, res, made, False, ns.detail)))
            print()
    return 0


def write_calibration(pairs: list[Pair]) -> None:
    cals = fit_all(pairs)
    pc = fit_pairs(evaluate(pairs, cals))
    out = ROOT / "core" / "model" / "calibration.json"
    data = {
        "mechanisms": {m: {k: getattr(c, k) for k in c.__dataclass_fields__ if k != "mechanism"}
                       for m, c in cals.items()},
        "pairs": {"rho_same_host": pc.rho_same_host, "rho_other_host": pc.rho_other_host,
                  "kappa": pc.kappa, "threshold": pc.threshold,
                  "source": f"benchmarks/accuracy.py --fit on {len(pairs)} recorded runs, "
                            f"{dt.date.today()}"},
    }
    out.write_text(json.dumps(data, indent=2) + "\n")
    for m, c in cals.items():
        print(f"{m}: " + " ".join(f"{k}={getattr(c, k)}" for k in c.__dataclass_fields__
                                   if k not in ("source", "mechanism")))
    print(f"pairs: rho same host {pc.rho_same_host}, other host {pc.rho_other_host}, "
          f"kappa {pc.kappa}; wrote {out}\n")


if __name__ == "__main__":
    sys.exit(main())
