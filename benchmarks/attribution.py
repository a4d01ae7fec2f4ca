"""Where the estimate's error comes from: each probe/full-run pair's signed error split into terms.

    .venv/bin/python benchmarks/attribution.py [CORPUS ...] [--mlperf DIR ...] [--detail]
        [--markdown]

For every probe (``probe-NAME``) and the full run of the same setting (``NAME`` / ``full-NAME``)
the full run is estimated from the probe as accuracy.py does (the run's real length given: its
epochs, or its steps for a job of one pass; the constants shipped in calibration.json), and the
signed error ``estimate - real`` is split, in seconds, into:

- ``startup``: T_init + T_it1, the probe's against the full run's;
- ``steady``: (steps - 1) x (the estimate's step time - the full run's mean step over the same
  steps the probe's steady window covered): the probe's level and statistic against the run's
  own at that moment (run-to-run, the trimmed mean's choice);
- ``drift``: (steps - 1) x (the full run's mean over that early window - its mean over the whole
  run): the step time's trend over the run;
- ``length``: (the estimate's steps - the full run's) x the full run's mean step;
- ``periodic``: the work every K steps (evaluations, checkpoints), estimated against measured
  (each slow step's excess over the run's mean step, plus evaluations inside the pass);
- ``boundaries``: epoch boundaries (each later epoch's first step over the mean step);
- ``validation``: per-epoch validation passes;
- ``end``: the end of training (teardown) and the program's post-training work to its exit;
- ``residual``: the rest, so that the terms add up to the total error exactly - what neither
  side puts in a term above (the real run: the time its log does not cover by a term, e.g. the
  `done` events between fit() calls that are not a boundary; the estimate: the boundaries'
  forecast beyond the seen mean, a post-training time assumed).

For Eq. 5.1 (whole epochs extrapolated) the estimate's later epochs are split with the probe's
own boundary and validation times; the rest is its step term. A probe that saw the whole run
(``measured``) is split as a second full run.

MLPerf runs (``--mlperf``: the folders ``benchmarks/mlperf.py --extract`` makes) are timed in
blocks: each complete run is cut at 10 % of its runtime and estimated from the cut with its own
length (the speed alone is judged): ``drift`` is the rate the cut saw against the rest's,
``validation`` the evaluations to come, ``residual`` the rest.

Per corpus: n pairs, the signed median error, the median |error|, and each term's median
signed contribution as % of the real runtime (the medians of the terms need not add up to the
median of the totals; the means do - also printed).
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import statistics
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from probecast.core.model.calibrate.runs import Pair, load_pairs  # noqa: E402
from probecast.core.model.estimate.runtime import (Estimate, NoEstimate,  # noqa: E402
                                                   estimate_runtime, measured_run)
from probecast.core.model.state import ProbeState  # noqa: E402

TERMS = ("startup", "steady", "drift", "length", "periodic", "boundaries", "validation", "end",
         "residual")
CORPORA = ("runs", "runs-torch", "runs-long", "runs-fresh", "runs-shapes", "runs-gpu-h200",
           "runs-gpu-h100", "runs-gpu-h100-events", "runs-interleaved", "runs-torch-interleaved",
           "runs-shapes-interleaved", "runs-gpu-h100-public")
# public scripts run plainly for the truth (benchmarks/public.py): a plain run has no log to
# split, so these are judged whole - their rows say how far, and the terms stay empty
WHOLE_ONLY = ("runs-public", "runs-gpu-h200-public", "runs-epoch-work")


@dataclass
class Parts:
    """A run's (or an estimate's) seconds by term; ``steps`` counts the steps after the first."""

    startup: float = 0.0
    step_s: float = 0.0  # the mean step, the level the extra terms are measured over
    steps: float = 0.0
    periodic: float = 0.0
    boundaries: float = 0.0
    validation: float = 0.0
    end: float = 0.0

    def accounted(self) -> float:
        return (self.startup + self.steps * self.step_s + self.periodic + self.boundaries
                + self.validation + self.end)


@dataclass
class Split:
    name: str
    corpus: str
    program: str
    truth: float
    estimate: float
    equation: str
    terms: dict[str, float] = field(default_factory=dict)  # seconds, signed
    late_early: float | None = None  # the full run's late-third mean step / its early-third

    @property
    def err(self) -> float:
        return (self.estimate - self.truth) / self.truth


def log_parts(st: ProbeState) -> Parts:
    """A complete log's time by term (its steady mean the level)."""
    m = st.steady.mean() if st.steady.n else (st.last_step_dt or 0.0)
    periodic = sum(dt - m for _, dt in st.periodic_steps)
    if st.vals_are_periodic:
        periodic += sum(v.dt for v in st.vals)
        validation = 0.0
    else:
        validation = sum(v.dt for v in st.vals)
    boundaries = sum(b - m for b in st.boundary_steps)
    startup = (st.t_init or 0.0) - st.agent_init_s + (st.t_it1 or 0.0)  # the program's own
    return Parts(startup=startup, step_s=m,
                 steps=max(0, st.steps - 1), periodic=periodic, boundaries=boundaries,
                 validation=validation, end=(st.fit_end_time or 0.0) + (st.post_time or 0.0))


def estimate_parts(est: Estimate, probe: ProbeState) -> Parts:
    """The estimate's seconds by term, as its equation adds them up."""
    t = est.terms
    if est.equation == "measured":
        return log_parts(probe)
    n = t.n_it * t.n_ep
    n_b = max(0.0, t.n_ep - 1)
    end = (t.t_fit_end or 0.0) + (t.t_post or 0.0)
    periodic = (t.n_per or 0) * (t.t_per or 0.0)
    startup = t.t_init + (t.t_it1 or 0.0)
    if est.equation == "5.1":
        seen = log_parts(probe)
        n_seen_b = max(1, len(probe.boundary_steps))
        boundaries = n_b * seen.boundaries / n_seen_b
        epochs = max(1, len(probe.epochs_done))
        validation = t.n_ep * seen.validation / epochs
        training = (t.t_ep1 or 0.0) + n_b * (t.t_ep2 or 0.0)
        step_s = (training - (t.t_it1 or 0.0) - boundaries - validation) / max(1.0, n - 1)
        return Parts(startup, step_s, n - 1, periodic, boundaries, validation, end)
    validation = (t.t_val1 or 0.0) + n_b * (t.t_val or 0.0)
    return Parts(startup, t.t_it or 0.0, n - 1, periodic, n_b * t.t_ep, validation, end)


def early_mean(full: ProbeState, k: int) -> float:
    """The full run's mean steady step over its first ``k`` steady steps (the probe's window)."""
    vals = full.steady.values
    k = max(1, min(k, len(vals)))
    return sum(vals[:k]) / k


def late_over_early(full: ProbeState) -> float | None:
    vals = full.steady.values
    third = len(vals) // 3
    if third < 5:
        return None
    early = statistics.median(vals[:third])
    late = statistics.median(vals[-third:])
    return late / early if early > 0 else None


def split(pair: Pair) -> Split | None:
    """The pair's signed error in seconds by term (module docstring)."""
    est = estimate_of(pair)
    if est is None:
        return None
    full = pair.full
    e, f = estimate_parts(est, pair.probe), log_parts(full)
    if est.equation == "measured":
        level = e.step_s
        k = pair.probe.steady.n
    else:
        level = e.step_s
        k = pair.probe.steady.n
    m_early = early_mean(full, k) if est.equation != "measured" else f.step_s
    terms = {
        "startup": e.startup - f.startup,
        "steady": e.steps * (level - m_early),
        "drift": e.steps * (m_early - f.step_s),
        "length": (e.steps - f.steps) * f.step_s,
        "periodic": e.periodic - f.periodic,
        "boundaries": e.boundaries - f.boundaries,
        "validation": e.validation - f.validation,
        "end": e.end - f.end,
    }
    error = est.runtime_s - pair.truth
    terms["residual"] = error - sum(terms.values())
    return Split(pair.name, pair.corpus, pair.program, pair.truth, est.runtime_s, est.equation,
                 terms, late_over_early(full))


def estimate_of(pair: Pair) -> Estimate | None:
    """The full run estimated from the probe at the run's real length, as the product answers
    a run that gave its length (a probe that saw everything: the measured run)."""
    full = pair.full
    one_pass = len(full.steps_by_epoch) <= 1
    n_ep = 1.0 if one_pass else float(pair.epochs)
    n_it = full.steps if one_pass else None
    try:
        est = estimate_runtime(pair.probe, n_ep, n_it=n_it)
    except NoEstimate as exc:
        print(f"{pair.name}: no estimate ({exc})", file=sys.stderr)
        return None
    return measured_run(pair.probe, est)


# ---- MLPerf: runs timed in blocks ------------------------------------------------------------


def mlperf_splits(roots: list[str], fraction: float = 0.10) -> list[Split]:
    """Each complete MLPerf run cut at ``fraction`` of its runtime, estimated with its own length:
    drift = (the cut's rate - the rest's) x the progress to come; validation = the evaluations
    to come, estimated against real; residual = the rest."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import mlperf  # benchmarks/mlperf.py
    from probecast.core.model.estimate.blocks import block_estimate, length_of
    from probecast.core.model.mlperf.cut import Cut, cut_run
    from probecast.core.model.state import fold_all

    out = []
    runs = mlperf.load(roots)
    for run in runs:
        state = fold_all(cut_run([mlperf._copy(e) for e in run.events], Cut(fraction=fraction)))
        if not mlperf._a_start(state, run):
            continue
        # the run's own length (progress, evaluations); how evaluations and the first block
        # compare from the other systems' complete runs, as benchmarks/mlperf.py judges speed
        blind, _ = mlperf.blind_length(run, runs)
        own = length_of([run.state])
        if blind is not None:
            own = replace(blind, progress=own.progress, evals=own.evals,
                          progress_low=own.progress, progress_high=own.progress,
                          evals_low=own.evals, evals_high=own.evals, source=own.source)
        try:
            est = block_estimate(state, own)
        except NoEstimate:
            continue
        out.append(_block_split(run, state, est))
    return out


def _block_split(run: object, cut: ProbeState, est: Estimate) -> Split:
    full: ProbeState = run.state  # type: ignore[attr-defined]
    t = est.terms
    k = len(cut.blocks)
    rest_s = sum(b.dt for b in full.blocks[k:])
    rest_units = max(0.0, (t.progress_total or 0.0) - (t.progress_seen or 0.0))
    real_val_rest = sum(v.dt for v in full.vals[len(cut.vals):])
    seen = t.t_init + sum(b.dt for b in cut.blocks) + sum(v.dt for v in cut.vals)
    training_rest = rest_units * (t.t_ep2 or 0.0)
    terms = dict.fromkeys(TERMS, 0.0)
    terms["drift"] = training_rest - rest_s
    # what the estimate adds besides the training to come: the evaluations to come
    terms["validation"] = (est.runtime_s - seen - training_rest) - real_val_rest
    error = est.runtime_s - run.total  # type: ignore[attr-defined]
    terms["residual"] = error - terms["drift"] - terms["validation"]
    name = f"{run.benchmark}/{run.system}"  # type: ignore[attr-defined]
    return Split(name, f"mlperf-{run.release}", run.benchmark,  # type: ignore[attr-defined]
                 run.total, est.runtime_s, est.equation, terms,  # type: ignore[attr-defined]
                 _block_late_early(full))


def _block_late_early(full: ProbeState) -> float | None:
    rates = []
    before = 0.0
    for b in full.blocks:
        if b.progress is not None and b.progress > before:
            rates.append(b.dt / (b.progress - before))
            before = b.progress
    third = len(rates) // 3
    if third < 2:
        return None
    return statistics.median(rates[-third:]) / statistics.median(rates[:third])


# ---- what to do about the drift: three ways, judged on the corpora ---------------------------


def strategies(pairs: list[Pair]) -> dict[str, list[float]]:
    """Each pair's signed error three ways: ``whole`` (the step time of every steady step the
    probe saw, as shipped), ``settled`` (where a trend counts, the settled window's step time
    instead: estimate/drift.py settled_window) - both on the real probes, whole runs estimated;
    and on the full run's own series (the same process: drift apart from a level shift between
    two processes), the step time from the probe's first k steps against the run's mean step:
    ``prefix-whole``, ``prefix-settled`` and ``prefix-longer`` (go on probing while the steps
    still move, doubling k up to 4 k and half the run)."""
    from probecast.core.model.estimate.drift import settled_window, window_step_time

    out: dict[str, list[float]] = {k: [] for k in ("whole", "settled", "prefix-whole",
                                                   "prefix-settled", "prefix-longer")}
    for pair in pairs:
        est = estimate_of(pair)
        if est is None or est.equation == "measured" or est.terms.t_it is None:
            continue
        t = est.terms
        w = settled_window(pair.probe.steady.values)
        moved = w.drift is not None and w.drift.significant
        shift = (t.n_it * t.n_ep - 1) * (w.mean_s - t.t_it) if moved else 0.0
        out["whole"].append((est.runtime_s - pair.truth) / pair.truth)
        out["settled"].append((est.runtime_s + shift - pair.truth) / pair.truth)
        series = list(pair.full.steady.values)
        k = pair.probe.steady.n
        if k < 30 or len(series) < 3 * k:
            continue
        run_mean = sum(series) / len(series)
        first = settled_window(series[:k])
        longer, kk = first, k
        while longer.ended_moving and kk < 4 * k and 2 * kk <= len(series) // 2:
            kk *= 2
            longer = settled_window(series[:kk])
        out["prefix-whole"].append(window_step_time(series[:k]) / run_mean - 1)
        out["prefix-settled"].append(first.mean_s / run_mean - 1)
        out["prefix-longer"].append(longer.mean_s / run_mean - 1)
    return out


def strategy_table(by_corpus: dict[str, dict[str, list[float]]]) -> list[str]:
    head = "| corpus | " + " | ".join(STRATEGIES) + " |"
    lines = [head, "|" + "---|" * (len(STRATEGIES) + 1)]
    for corpus, out in by_corpus.items():
        cells = []
        for k in STRATEGIES:
            xs = out[k]
            cells.append(f"{statistics.median(xs):+.1%} / {statistics.median(map(abs, xs)):.1%}"
                         f" (n {len(xs)})" if xs else "-")
        lines.append(f"| {corpus} | " + " | ".join(cells) + " |")
    return lines


STRATEGIES = ("whole", "settled", "prefix-whole", "prefix-settled", "prefix-longer")


# ---- reporting ---------------------------------------------------------------------------------


def table(splits: list[Split], markdown: bool) -> list[str]:
    corpora = list(dict.fromkeys(s.corpus for s in splits))
    head = ["corpus", "n", "signed median", "median abs", *TERMS, "late/early"]
    rows = []
    for c in [*corpora, "all"]:
        ss = [s for s in splits if c in ("all", s.corpus)]
        if c == "all":
            ss = [s for s in ss if not s.corpus.startswith("mlperf")]
        errs = [s.err for s in ss]
        cells = [c, str(len(ss)), f"{statistics.median(errs):+.1%}",
                 f"{statistics.median(abs(e) for e in errs):.1%}"]
        for term in TERMS:
            cells.append(f"{statistics.median(s.terms[term] / s.truth for s in ss):+.1%}")
        ratios = [s.late_early for s in ss if s.late_early is not None]
        cells.append(f"{statistics.median(ratios):.3f}" if ratios else "-")
        rows.append(cells)
    if markdown:
        return (["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
                + ["| " + " | ".join(r) + " |" for r in rows])
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    return [" ".join(f"{v:>{w}}" for v, w in zip(r, widths)) for r in [head, *rows]]


def whole_only(markdown: bool) -> list[str]:
    """The public corpora's rows: n, the signed median and the median |error| against their
    plain runs; no term (a plain run logs no steps)."""
    from public import judge  # benchmarks/public.py, beside this script

    out = []
    for c in WHOLE_ONLY:
        d = ROOT / "benchmarks" / "corpus" / c
        errs = [e for j in judge(d) if (e := j.err) is not None] if d.is_dir() else []
        if not errs:
            continue
        cells = [c, str(len(errs)), f"{statistics.median(errs):+.1%}",
                 f"{statistics.median(abs(e) for e in errs):.1%}", *["-"] * (len(TERMS) + 1)]
        out.append("| " + " | ".join(cells) + " |" if markdown else " ".join(cells))
    return out


def means(splits: list[Split]) -> list[str]:
    """The mean of each term (as % of the real runtime): these do add up to the mean error."""
    out = []
    for c in dict.fromkeys(s.corpus for s in splits):
        ss = [s for s in splits if s.corpus == c]
        parts = " ".join(f"{t} {statistics.mean(s.terms[t] / s.truth for s in ss):+.1%}"
                         for t in TERMS)
        out.append(f"{c}: mean error {statistics.mean(s.err for s in ss):+.1%} = {parts}")
    return out


def detail(splits: list[Split]) -> list[str]:
    out = []
    for s in splits:
        big = " ".join(f"{t} {s.terms[t] / s.truth:+.1%}" for t in TERMS
                       if abs(s.terms[t]) >= 0.005 * s.truth)
        le = f"{s.late_early:.3f}" if s.late_early is not None else "-"
        out.append(f"{s.corpus:<14} {s.name[:40]:<40} {s.equation:<8} real {s.truth:8.1f}s "
                   f"err {s.err:+6.1%}  late/early {le}  {big}")
    return out


def default_corpora() -> list[str]:
    base = ROOT / "benchmarks" / "corpus"
    return [str(base / c) for c in CORPORA if (base / c).is_dir()]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpora", nargs="*", help="corpus folders (default: every one recorded)")
    ap.add_argument("--mlperf", nargs="*", default=[], metavar="DIR",
                    help="MLPerf result folders (benchmarks/mlperf.py --extract)")
    ap.add_argument("--exclude", default="15ep", help="leave out logs whose name matches")
    ap.add_argument("--detail", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--drift", action="store_true",
                    help="also compare what to do about the drift (strategies()): signed "
                         "median / median |error| per corpus")
    ns = ap.parse_args()
    splits = []
    by_corpus: dict[str, dict[str, list[float]]] = {}
    for d in ns.corpora or default_corpora():
        pairs = [p for p in load_pairs([d], Path(d).name, ns.exclude)
                 if not p.cut]  # a full run without a recorded probe is not a pair
        splits += [s for p in pairs if (s := split(p)) is not None]
        if ns.drift:
            by_corpus[Path(d).name] = strategies(pairs)
    for root in ns.mlperf:
        splits += [replace_corpus(s, f"mlperf-{Path(root).name}") for s in mlperf_splits([root])]
    if not splits:
        print("no probe/full-run pairs found", file=sys.stderr)
        return 1
    print(f"attribution - {dt.date.today()} on {platform.node()} ({platform.machine()}); "
          "terms: median signed contribution, % of the real runtime")
    print("\n".join(table(splits, ns.markdown)))
    if not ns.corpora:
        print("\n".join(whole_only(ns.markdown)))
    print()
    print("\n".join(means(splits)))
    if by_corpus:
        print()
        print("what to do about the drift - signed median / median |error| (whole, settled: "
              "the whole run's estimate from the real probe; prefix-*: the step time from the "
              "full run's own first k steps against its mean step)")
        print("\n".join(strategy_table(by_corpus)))
    if ns.detail:
        print()
        print("\n".join(detail(splits)))
    return 0


def replace_corpus(s: Split, corpus: str) -> Split:
    s.corpus = corpus
    return s


if __name__ == "__main__":
    sys.exit(main())
