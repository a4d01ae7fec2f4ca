"""Every training job as it is written: the shapes corpus, judged the way a user meets it.

    .venv/bin/python benchmarks/shapes.py benchmarks/corpus/runs-shapes [--markdown]

Pairs every real probe (``probe-NAME``) with the real full run of the same setting (``NAME``)
and asks of each what the product answers with nothing configured (``probecast rank`` on the
probe: the job's length as the probe read it from the program, the constants shipped in
core/model/calibration.json - none was measured on these programs): is there an estimate, is
the length the one the full run really trained (its steps), is the real total - launch to exit
- inside the bounds, how far off is the estimate. A probe whose length was not found is ranked
per 1 000 steps; that is reported, and judged against the full run's steady time per step.

Per shape (one program each, at its batch sizes) and over the whole corpus: coverage (gate
>= 90 %) and the median absolute error (gate <= 10 %). Also called by benchmarks/accuracy.py
``--shapes DIR``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from probecast.core.model.logstore import discover_logs, load_probe  # noqa: E402
from probecast.core.model.pricing import Catalog  # noqa: E402
from probecast.core.model.rank.ranking import Pricing, RankOptions, estimate_row  # noqa: E402
from probecast.core.model.rows import Candidate, RankedRow  # noqa: E402
from probecast.core.model.state import ProbeState  # noqa: E402


@dataclass
class Judged:
    name: str
    shape: str
    batch: int
    truth: float  # the full run, launch to exit
    true_steps: int
    row: RankedRow | None
    why: str = ""  # no row: why

    @property
    def err(self) -> float | None:
        if self.row is None or self.row.per_steps:
            return None
        return (self.row.runtime_s - self.truth) / self.truth

    @property
    def inside(self) -> bool | None:
        if self.row is None or self.row.per_steps:
            return None
        return self.row.runtime_low_s <= self.truth <= self.row.runtime_high_s

    @property
    def length_found(self) -> str:
        r = self.row
        if r is None:
            return "-"
        if r.per_steps:
            return "unknown (per 1 000 steps)"
        n = r.steps or round(r.epochs * int(r.terms.get("n_it") or 0))
        return f"{n} of {self.true_steps}" + ("" if n == self.true_steps else " (!)")


def shape_of(name: str) -> str:
    return name.split("-b")[0]


def judge(directory: str) -> list[Judged]:
    files, errors = discover_logs([directory])
    for e in errors:
        print(e, file=sys.stderr)
    by_name = {f.name.split(".jsonl")[0]: f for f in files}
    pricing = Pricing(Catalog.embedded())
    out = []
    for name, path in sorted(by_name.items()):
        if name.startswith("probe-") or f"probe-{name}" not in by_name:
            continue
        full = load_probe(path).state
        if full.end is None or full.end.status != "complete":
            print(f"{name}: the full run did not complete ({full.status})", file=sys.stderr)
            continue
        record = load_probe(by_name[f"probe-{name}"])
        state: ProbeState = record.state
        candidate = Candidate(name, name, state, path=str(record.path))
        try:
            row = estimate_row(candidate, pricing, RankOptions())
            why = ""
        except Exception as exc:  # noqa: BLE001 - a benchmark reports every failure
            row, why = None, f"{type(exc).__name__}: {exc}"
        out.append(Judged(name, shape_of(name), full.start.batch_size if full.start else 0,
                          full.end.t, full.steps, row, why))
    return out


def _pct(xs: list[bool]) -> str:
    return f"{sum(xs)}/{len(xs)} ({sum(xs) / len(xs):.0%})" if xs else "-"


def _median_abs(errs: list[float]) -> str:
    return f"{statistics.median(abs(e) for e in errs):.1%}" if errs else "-"


def report(judged: list[Judged], markdown: bool = False) -> list[str]:
    lines = []
    head = ("| shape | runs | estimated | length exact | inside bounds | median error | "
            "max error |")
    lines += [head, "|" + "---|" * 7] if markdown else [head]
    shapes = sorted({j.shape for j in judged})
    every_err: list[float] = []
    every_in: list[bool] = []
    for shape in [*shapes, "all"]:
        js = [j for j in judged if shape in ("all", j.shape)]
        errs = [e for j in js if (e := j.err) is not None]
        ins = [i for j in js if (i := j.inside) is not None]
        found = [j.row is not None and not j.row.per_steps and "(!)" not in j.length_found
                 for j in js]
        if shape != "all":
            every_err += errs
            every_in += ins
        mx = f"{max(abs(e) for e in errs):.1%}" if errs else "-"
        lines.append(f"| {shape} | {len(js)} | {_pct([j.row is not None for j in js])} | "
                     f"{_pct(found)} | {_pct(ins)} | {_median_abs(errs)} | {mx} |")
    lines.append("")
    ok_cov = every_in and sum(every_in) / len(every_in) >= 0.9
    ok_err = every_err and statistics.median(abs(e) for e in every_err) <= 0.10
    lines.append(f"gates: inside the bounds >= 90 %: {'met' if ok_cov else 'MISSED'}; "
                 f"median error <= 10 %: {'met' if ok_err else 'MISSED'}")
    return lines


def detail(judged: list[Judged]) -> list[str]:
    lines = []
    for j in judged:
        r = j.row
        if r is None:
            lines.append(f"{j.name:<34} no estimate: {j.why}")
            continue
        if r.per_steps:
            lines.append(f"{j.name:<34} per {r.per_steps} steps {r.runtime_s:8.1f}s "
                         f"(truth {j.truth:.1f}s for {j.true_steps} steps) - {r.length_unknown}")
            continue
        lines.append(f"{j.name:<34} {r.runtime_s:8.1f}s [{r.runtime_low_s:7.1f}, "
                     f"{r.runtime_high_s:7.1f}] truth {j.truth:7.1f}s err {j.err:+6.1%} "
                     f"{'in ' if j.inside else 'OUT'} eq {r.equation:<5} steps {j.length_found}"
                     f" <- {r.epochs_source[:70]}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", nargs="+")
    ap.add_argument("--markdown", action="store_true")
    ns = ap.parse_args()
    judged = [j for d in ns.corpus for j in judge(d)]
    if not judged:
        print("no probe/full-run pairs found", file=sys.stderr)
        return 1
    print(f"shapes corpus: {', '.join(ns.corpus)} - {dt.date.today()} on {platform.node()} "
          f"({platform.machine()})")
    print("\n".join(report(judged, ns.markdown)))
    print()
    print("\n".join(detail(judged)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
