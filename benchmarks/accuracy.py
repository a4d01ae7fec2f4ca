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
  faster really is) from the two probes jointly (core/model/rank/decisions.py); among the pairs whose
  real totals differ by >= 10 %, how many are decided, and among all decided pairs, how many are
  wrong - by time, by cost at a price per core-hour, and both together (the decision gates:
  >= 80 % of those pairs decided, <= 5 % of decided pairs wrong - RESULTS.md §0);
- whether P is calibrated: every pair of every corpus by the P it was given, the claims that
  were wrong against the number P itself expected (the sum of 1 - P).

Every figure is for a program the constants never saw: **leave one program out** - for each
program, the constants (per mechanism: Keras/TensorFlow and PyTorch, and per mechanism on a GPU
where GPU runs are among the corpora, core/model/estimate/bounds.py; the pair constants of
decisions.py) are measured on all the *other* programs of the corpora, then
that program's runs and pairs are estimated and judged. ``--held-out`` corpora are judged with
the constants measured on every program of the others (``calibration.json``'s). Each figure
is given three times: from the real probes as recorded (another process, another moment:
start-up and the host's speed vary), from probes cut out of the full run's own log (what the
default probe sees - start-up, the first epoch with its validation, one boundary, a few steps of
the next - with the run's post-training work), and bare (cut, the log ending at the cut as a live
probe's does).

The constants themselves are measured by core/model/calibrate/main.py (the fits; this script only
loads the corpora, judges and prints). ``--fit`` measures them on every calibration program and
writes core/model/calibration.json through it - the same file as
``python -m probecast.core.model.calibrate.main --write`` makes from the corpora the file names.
``--shapes DIR`` also judges a shapes corpus (jobs in the shapes people write,
benchmarks/corpus/runs-shapes/) per shape, as a user meets it: the length read from the program
by the probe (benchmarks/shapes.py).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from probecast.core.model.calibrate import main as calibrate  # noqa: E402
from probecast.core.model.estimate.bounds import Calibration, Uncertainty, interval  # noqa: E402
from probecast.core.model.calibrate.bounds import COVERAGE, fit_all, needed_q  # noqa: E402
from probecast.core.model.calibrate.pairs import (Decision, decisions, fit_pairs,  # noqa: E402
                                                  values)
from probecast.core.model.calibrate.runs import (Calibrations, Pair, Result,  # noqa: E402
                                                 evaluate, load_pairs)
from probecast.core.model.rank.decisions import PairConstants  # noqa: E402


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
    ratio_errs = sorted(abs(math.log(values(d.other, "time")[0] / values(d.lead, "time")[0]
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
        apart = sum(values(d.lead, view)[2] < values(d.other, view)[1] for d in big)
        rows.append((f"... decided by the old rule, intervals apart ({word})",
                     f"{apart}/{len(big)} = {_pct(apart, len(big))}"))
    # the decision gates as RESULTS.md §0 words them, over every comparison a user is shown
    # (by time and by cost)
    decided_row, wrong_row = _gate_rows([d for d in made if d.view in ("time", "cost")])
    rows.append(("pairs differing >= 10 % decided (both views)", decided_row))
    rows.append(("wrong claims among decided pairs (both views)", wrong_row))
    return rows


def _gate_rows(ds: list[Decision]) -> tuple[str, str]:
    """The two decision gates over these decisions: the pairs differing >= 10 % that are
    decided, and the decided pairs that are wrong."""
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
        write_calibration(ns.logs, ns.exclude)
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


def write_calibration(corpora: list[str], exclude: str | None) -> None:
    """core/model/calibration.json from these corpora (core/model/calibrate/main.py)."""
    data = calibrate.calibrate(corpora, exclude)
    calibrate.write(data)
    print("\n".join(calibrate.describe(data)) + f"; wrote {calibrate.SHIPPED}\n")


if __name__ == "__main__":
    sys.exit(main())
