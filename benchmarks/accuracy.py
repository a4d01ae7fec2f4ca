"""Can a user bet on the number, and on the order? Real probes against the real whole runs.

    .venv/bin/python benchmarks/accuracy.py benchmarks/corpus/runs benchmarks/corpus/runs-torch \
        benchmarks/corpus/runs-long [--fit] [--markdown] [--detail]

Pairs every probe log (``probe-NAME``) with the full run of the same setting (``NAME``, or
``full-NAME`` as benchmarks/record_runs.py names them), estimates the full run's whole process -
launch to exit - from the probe at the number of epochs the full run really ran, and reports per
corpus:

- how often the real total lies inside [low, high] (the promise: >= 90 %), the half-width, the
  point error (median, max) against the whole process and against fit() alone;
- decisions: for every two runs of one program (its batch sizes, its hosts), P(the one estimated
  faster really is) from the two probes jointly (core/model/decisions.py); among the pairs whose
  real totals differ by >= 10 %, how many are decided, and among all decided pairs, how many are
  wrong - by time, and by cost at a price per core-hour.

Every figure is for a program the constants never saw: **leave one program out** - for each
program, the constants (per mechanism: Keras/TensorFlow and PyTorch, core/model/bounds.py; the
pair constants of decisions.py) are measured on all the *other* programs of the corpora, then
that program's runs and pairs are estimated and judged. ``--held-out`` corpora are judged with
the constants measured on every program of the others (none is, in RESULTS). Each figure
is given twice: from the real probes as recorded (another process, another moment: start-up
varies), and from probes cut out of the full run's own log (``--cut``: what the default probe
sees - start-up, the first epoch with its validation, one boundary, a few steps of the next).

``--fit`` measures the constants on every calibration program and writes
core/model/calibration.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import math
import platform
import statistics
import sys
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from probecast.core.model.bounds import MECHANISMS, Calibration, mechanism  # noqa: E402
from probecast.core.model.decisions import (BOUND_Z, PairConstants, log_scales,  # noqa: E402
                                            p_ahead)
from probecast.core.model.estimate import NoEstimate, training_estimate  # noqa: E402
from probecast.core.model.estimate import whole_process  # noqa: E402
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

    def as_cut(self) -> Pair:
        return replace(self, probe=self.cut_probe, cut=True)


def read(path: Path) -> list[Event]:
    reader = EventReader()
    with open_log(path) as fh:
        return list(reader.read(fh))


def cut_probe(events: list[Event], steps: int = CUT_STEPS) -> list[Event]:
    """What the default probe sees of a full run: through ``steps`` steps of the second epoch,
    then - as a real probe measures them itself - the end of fit() and the post-training work
    (taken from the full run's last `done` and `end`)."""
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
    if done and isinstance(end, End):
        t += done[-1].dt
        out.append(Done(t, done[-1].dt, "probe-done", "cut"))
        out.append(End(t + end.dt, end.dt, "probe-done", "cut", exit_code=end.exit_code))
    return out


def load_pairs(paths: list[str], corpus: str = "") -> list[Pair]:
    files, errors = discover_logs(paths)
    for e in errors:
        print(e, file=sys.stderr)
    by_name = {f.name.split(".jsonl")[0]: f for f in files}
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
        probe_file = by_name.get(f"probe-{key}")
        probe = fold_all(read(probe_file)) if probe_file is not None else cut
        start = full.start
        cores = 2 if "2core" in start.instance else 1
        pairs.append(Pair(key, corpus or str(paths[0]), start.workload, cores, start.batch_size,
                          probe, full, probe_file is None, cut))
    return pairs


@dataclass
class Result:
    pair: Pair
    est: float
    low: float
    high: float
    sigma: float
    unseen: float
    unseen_low: float
    fit_est: float

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

    @property
    def needed_q(self) -> float:
        """The smallest q that puts the truth inside the interval."""
        gap = self.pair.truth - self.est
        gap = max(0.0, gap - self.unseen) if gap > 0 else min(0.0, gap + self.unseen_low)
        return abs(gap) / self.sigma if self.sigma > 0 else math.inf


Calibrations = dict[str, Calibration]


def evaluate(pairs: Iterable[Pair], cals: Calibrations | Calibration) -> list[Result]:
    out = []
    for p in pairs:
        cal = cals if isinstance(cals, Calibration) else cals[p.mechanism]
        try:
            train = training_estimate(p.probe, p.epochs, use_validation=True, equation="auto",
                                      statistic="trimmed")
        except NoEstimate as exc:
            print(f"{p.name}: no estimate ({exc})", file=sys.stderr)
            continue
        est = whole_process(p.probe, train, p.epochs, cal)
        u = est.uncertainty
        out.append(Result(p, est.runtime_s, est.low_s, est.high_s, u["sigma"], u["unseen_high"],
                          u["unseen_low"], est.terms.fit_s or 0.0))
    return out


# ---- measuring the constants of one mechanism on its calibration runs --------------------------


def boundary_overheads(st: ProbeState) -> list[float]:
    t_it = st.step_time("trimmed")[0]
    return [b - t_it for b in st.boundary_steps] if t_it == t_it else []


STALL_SHARE = 0.05


def epoch_seconds(st: ProbeState) -> float:
    """A steady epoch's time: its steps and a validation pass."""
    t_it = st.step_time("trimmed")[0]
    val = st.vals[-1].dt if st.vals else 0.0
    return st.steps_per_epoch * t_it + val if t_it == t_it else 0.0


def measure(pairs: list[Pair], mech: str) -> Calibration:
    """Each constant is a measured quantity of the full runs (not fitted to make coverage)."""
    overheads = [o for p in pairs for o in boundary_overheads(p.full)]
    rel_spreads, abs_spreads = [], []
    for p in pairs:
        o = boundary_overheads(p.full)
        if len(o) >= 2:
            abs_spreads.append(statistics.pstdev(o))
            if statistics.mean(o) > 0.2:
                rel_spreads.append(statistics.pstdev(o) / statistics.mean(o))
    val_spreads = []
    for p in pairs:
        later = [v.dt for v in p.full.vals[1:]]
        if len(later) >= 2:
            val_spreads.append(statistics.pstdev(later) / statistics.mean(later))
    posts = [(p.probe.post_time, p.full.post_time) for p in pairs
             if p.probe.post_time and p.full.post_time and not p.cut]
    post_rel = (statistics.median(abs(a - b) / b for a, b in posts) * 2) if posts else 0.2
    # start-up: the probe's T_init against the full run's (another process, another moment)
    inits = [(p.probe.t_init, p.full.t_init) for p in pairs
             if p.probe.t_init and p.full.t_init and not p.cut]
    init_rel = (statistics.median(abs(b - a) / a for a, b in inits) * 2) if inits else 0.1
    base = Calibration()
    largest = max(overheads, default=base.unseen_boundary_s)
    # every boundary still to come may stall; over many of them what counts is a run's mean
    # stall, not its single largest: the cap is the largest mean a recorded run had
    means = [statistics.mean(o) for p in pairs if (o := boundary_overheads(p.full))]
    worst_mean = max(means, default=largest)
    # a mechanism whose boundaries stalled (a run's mean boundary >= 5 % of its epoch) gets no
    # absolute cap: Keras' stalls grew with the data set in the long runs (35 s at 216 000
    # samples, against <= 10 s on the small ones); one that never stalled is capped near what
    # it cost
    shares = [statistics.mean(o) / epoch_seconds(p.full) for p in pairs
              if (o := boundary_overheads(p.full)) and epoch_seconds(p.full) > 0]
    stalls = max(shares, default=1.0) >= STALL_SHARE
    return replace(
        base,
        mechanism=mech,
        # the largest stall: the high side's allowance for each boundary still to come
        unseen_boundary_s=round(largest, 2),
        stall_cap_s=None if stalls else round(max(1.5 * worst_mean, 0.1), 1),
        boundary_min_s=round(max(0.0, min(overheads, default=base.boundary_min_s)), 3),
        # typical spreads around what a probe saw (the stalls are in the allowance above)
        boundary_rel=round(statistics.median(rel_spreads), 3) if rel_spreads else base.boundary_rel,
        boundary_abs_s=(round(max(statistics.median(abs_spreads), 0.01), 3) if abs_spreads
                        else base.boundary_abs_s),
        val_rel=round(statistics.median(val_spreads) * 2, 3) if val_spreads else base.val_rel,
        post_rel=round(post_rel, 3),
        init_rel=round(init_rel, 3),
    )


MAX_STALL_RATIO = 4.0


def needed_stall_ratio(pairs: list[Pair], cal: Calibration) -> list[float]:
    """Per calibration run: the smallest stall_ratio that puts its real total inside. A run no
    stall allowance covers (its miss is start-up or step noise, not a boundary) is left to q."""
    out = []
    for p in pairs:
        lo, hi = 0.0, MAX_STALL_RATIO
        if (r := evaluate([p], replace(cal, stall_ratio=0.0))) and r[0].pair.truth <= r[0].high:
            out.append(0.0)
            continue
        if (r := evaluate([p], replace(cal, stall_ratio=hi))) and r[0].pair.truth > r[0].high:
            continue
        for _ in range(24):  # bisection: coverage grows with the ratio
            mid = (lo + hi) / 2
            r = evaluate([p], replace(cal, stall_ratio=mid))
            if r and r[0].pair.truth <= r[0].high:
                hi = mid
            else:
                lo = mid
        out.append(hi)
    return out


def conformal(values: list[float], coverage: float = COVERAGE) -> float:
    """Split conformal: the ceil((n+1)*coverage)-th smallest value (the max if that is n+1)."""
    ranked = sorted(values)
    k = min(len(ranked), math.ceil((len(ranked) + 1) * coverage))
    return ranked[k - 1] if ranked else math.nan


def fit_mechanism(pairs: list[Pair], mech: str) -> Calibration:
    measured = replace(measure(pairs, mech), q=2.0)  # the symmetric part: about 95 % if normal
    ratios = needed_stall_ratio(pairs, measured)
    ratio = conformal(ratios) if ratios else 0.0
    measured = replace(measured, stall_ratio=round(ratio, 3))
    q = max(1.0, conformal([r.needed_q for r in evaluate(pairs, replace(measured, q=1.0))]))
    programs = sorted({p.program for p in pairs})
    return replace(measured, q=round(q, 3), source=(
        f"benchmarks/accuracy.py --fit on {len(pairs)} recorded runs of {len(programs)} programs "
        f"({', '.join(programs)}), {dt.date.today()}, {platform.machine()} {platform.node()}"))


def fit_all(pairs: list[Pair]) -> Calibrations:
    """One set per mechanism; a mechanism without runs of its own gets the cautious set."""
    cals = {m: fit_mechanism(ps, m) for m in MECHANISMS
            if (ps := [p for p in pairs if p.mechanism == m])}
    for m in MECHANISMS:
        if m not in cals:
            cals[m] = replace(max(cals.values(), key=lambda c: c.stall_ratio), mechanism=m)
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
                                    other.pair.truth * k_o / (lead.pair.truth * k_l)))
    return out


def _sides(lead: Result, other: Result) -> tuple[float, float]:
    """The scales p_ahead uses: the lead's upper side, the other's lower side."""
    return (log_scales(lead.est, lead.low, lead.high)[1],
            log_scales(other.est, other.low, other.high)[0])


def fit_pairs(results: list[Result], target: float = 0.05) -> PairConstants:
    """rho: the correlation of two runs' standardised errors (one program, same / other host
    kind), measured; kappa: the smallest scale on the difference's spread at which the claims
    made (P >= the threshold, by time and by cost) are wrong at most ``target`` of the time on
    these pairs - counted conservatively, (wrong + 1) / (claims + 1), as split conformal does."""
    def z(r: Result) -> float:
        below, above = log_scales(r.est, r.low, r.high)
        scale = above if r.log_err > 0 else below
        return r.log_err / scale if scale > 0 else 0.0

    same: list[tuple[float, float]] = []
    other: list[tuple[float, float]] = []
    unit = PairConstants(kappa=1.0)
    made = decisions(results, unit)
    for d in made:
        if d.view != "time":
            continue
        za, zb = z(d.lead), z(d.other)
        (same if d.lead.pair.cores == d.other.pair.cores else other).extend([(za, zb), (zb, za)])
    rho_same, rho_other = _corr(same), _corr(other)
    # the gap in units of the difference's spread, and whether the claim would be wrong
    gaps = []
    for d in made:
        lead, other_ = _vals(d.lead, d.view), _vals(d.other, d.view)
        s_a, s_b = _sides(d.lead, d.other)
        rho = rho_same if d.lead.pair.cores == d.other.pair.cores else rho_other
        s_d = math.sqrt(max(s_a * s_a + s_b * s_b - 2 * rho * s_a * s_b, 1e-12))
        gaps.append((math.log(other_[0] / lead[0]) / s_d, d.wrong))
    kappa = 4.0
    for step in range(5, 401):
        k = step / 100
        claims = [wrong for g, wrong in gaps if g / k >= BOUND_Z]
        if (sum(claims) + 1) / (len(claims) + 1) <= target:
            kappa = k
            break
    return PairConstants(rho_same_host=round(rho_same, 3), rho_other_host=round(rho_other, 3),
                         kappa=kappa)


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


def cross_validate(pairs: list[Pair], cut: bool) -> tuple[list[Result], list[Decision]]:
    """Every program judged with constants measured on the others (always on recorded probes;
    ``cut``: the judged program's probes are cut from its full runs). A program is held out from
    every corpus at once (the long jobs run some of the same scripts on more data)."""
    results, made = [], []
    programs = sorted({p.program for p in pairs})
    for program in programs:
        rest = [p for p in pairs if p.program != program]
        cals = fit_all(rest)
        pc = fit_pairs(evaluate(rest, cals))
        held = [p.as_cut() if cut else p for p in pairs if p.program == program]
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
        thr = PairConstants.load().threshold
        big = [d for d in ds if d.differs]
        decided_big = sum(d.p >= thr for d in big)
        decided = [d for d in ds if d.p >= thr]
        wrong = sum(d.wrong for d in decided)
        word = "faster" if view == "time" else "cheaper"
        rows.append((f"pairs differing >= 10 % ({word}) decided",
                     f"{decided_big}/{len(big)} = {_pct(decided_big, len(big))}"))
        # the ceiling of any rule: a pair the point estimates put in the wrong order can only be
        # left undecided or decided wrongly
        ordered = sum(not d.wrong for d in big)
        rows.append((f"... ordered right by the point estimates ({word})",
                     f"{ordered}/{len(big)} = {_pct(ordered, len(big))}"))
        rows.append((f"wrong claims among decided pairs ({word})",
                     f"{wrong}/{len(decided)} = {_pct(wrong, len(decided))}"))
        apart = sum(_vals(d.lead, view)[2] < _vals(d.other, view)[1] for d in big)
        rows.append((f"... decided by the old rule, intervals apart ({word})",
                     f"{apart}/{len(big)} = {_pct(apart, len(big))}"))
    return rows


def _pct(a: int, b: int) -> str:
    return f"{a / b:.0%}" if b else "-"


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
                 f"{'bounds':>17} {'in':>3}")
    for r in sorted(results, key=lambda r: r.pair.name):
        lines.append(f"  {r.pair.name[:40]:<40} {r.pair.epochs:>6} {r.pair.truth:>6.1f}s "
                     f"{r.est:>6.1f}s {r.err:>+6.1%} {r.low:>7.1f}-{r.high:<7.1f}s "
                     f"{'yes' if r.inside else 'NO':>3}{' cut' if r.pair.cut else ''}")
    thr = PairConstants.load().threshold
    lines.append("")
    lines.append("  decisions by time (P that the one estimated faster really is; real ratio):")
    for d in sorted((d for d in made if d.view == "time"), key=lambda d: (d.program, -d.p)):
        verdict = ("WRONG" if d.wrong else "right") if d.p >= thr else "undecided"
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


def corpus_title(path: str) -> str:
    return Path(path).name


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
    ap.add_argument("--cut", action="store_true",
                    help="only the figures from probes cut out of the full runs")
    ap.add_argument("--recorded", action="store_true",
                    help="only the figures from the recorded probes")
    ap.add_argument("--detail", action="store_true", help="every run and every pair")
    ap.add_argument("--markdown", action="store_true")
    ns = ap.parse_args()
    corpora = {corpus_title(d): load_pairs([d], corpus_title(d)) for d in ns.logs}
    held_out = {corpus_title(d): load_pairs([d], corpus_title(d)) for d in ns.held_out}
    calib = [p for ps in corpora.values() for p in ps]
    if not calib:
        print("no complete full runs found", file=sys.stderr)
        return 1
    if ns.fit:
        write_calibration(calib)
    variants = [v for v, off in (("recorded", ns.cut), ("cut", ns.recorded)) if not off]
    all_cals = fit_all(calib)
    all_pc = fit_pairs(evaluate(calib, all_cals))
    for variant in variants:
        cut = variant == "cut"
        what = ("probes cut from the full runs" if cut else "the recorded probes")
        judged: dict[str, tuple[list[Result], list[Decision]]] = {}
        everything = [p for ps in corpora.values() for p in ps]
        res_all, made_all = cross_validate(everything, cut)
        for name, pairs in corpora.items():
            fulls = {id(p.full) for p in pairs}
            judged[f"{name} (each program held out)"] = (
                [r for r in res_all if id(r.pair.full) in fulls],
                [d for d in made_all if id(d.lead.pair.full) in fulls])
        for name, pairs in held_out.items():
            res = evaluate([p.as_cut() if cut else p for p in pairs], all_cals)
            judged[f"{name} (never calibrated on)"] = (res, decisions(res, all_pc))
        print(f"=== from {what}\n")
        if ns.markdown:
            print("\n".join(table(judged)) + "\n")
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
        print(f"{m}: q={c.q} stall_ratio={c.stall_ratio} largest stall={c.unseen_boundary_s}s "
              f"boundary_rel={c.boundary_rel} boundary_abs={c.boundary_abs_s}s "
              f"val_rel={c.val_rel} post_rel={c.post_rel} init_rel={c.init_rel}")
    print(f"pairs: rho same host {pc.rho_same_host}, other host {pc.rho_other_host}, "
          f"kappa {pc.kappa}; wrote {out}\n")


if __name__ == "__main__":
    sys.exit(main())
