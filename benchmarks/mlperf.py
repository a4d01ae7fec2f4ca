"""GPU evidence from public MLPerf Training results: how well a run's start tells its whole run.

    python benchmarks/mlperf.py --extract /path/to/training_results_v3.1 /tmp/mlp/v3.1
    python benchmarks/mlperf.py /tmp/mlp/v3.1 /tmp/mlp/v4.0 [--markdown] [--fit]

``--extract`` copies the result files and systems/*.json out of a results repository's git
directory (``fetch`` gives one with no work tree; large files absent there are skipped). The
judging reads every result_<n>.txt through ``probecast import mlperf``'s own code
(core/model/mlperf/runs.py), cuts each complete run at its first evaluation and at 5, 10 and 20 % of
its runtime (core/model/mlperf/cut.py: what a probe of that length would have seen), and
estimates the whole run from the cut (core/model/estimate/blocks.py) two ways:

- speed: with the run's own length (progress at its target, evaluations on the way) - only the
  extrapolation of speed is judged;
- blind: with the length from complete runs of other systems at the same benchmark and global
  batch size (methodology 1: a full run elsewhere tells the epochs to target), else the same
  system's other runs (leave-one-run-out).

It reports per benchmark and release: error (median |est - real| / real), coverage (real inside
the bounds), median half-width; the spread of the length itself; decisions between systems of
one benchmark from one cut run each; and what start-up, warm-up and evaluation cost on these GPU
systems. ``--fit`` prints the rate ratios the margins of blocks.py were set from (v3.1 only: v4.0
and later releases check them).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from probecast.core.model.estimate.blocks import (RunLength, block_estimate, is_block_log,  # noqa: E402
                                         length_of, reached)
from probecast.core.model.mlperf.runs import read_run, to_events  # noqa: E402
from probecast.core.model.mlperf.cut import Cut, cut_run  # noqa: E402
from probecast.core.model.state import ProbeState, fold_all  # noqa: E402
from probecast.core.model.estimate.training import NoEstimate  # noqa: E402

CUTS = (Cut(first_eval=True), Cut(fraction=0.05), Cut(fraction=0.10), Cut(fraction=0.20))
BENCHMARKS = ("resnet", "bert", "unet3d", "llama2_70b_lora", "stable_diffusion", "ssd",
              "maskrcnn", "rnnt", "dlrm_dcnv2", "gnn", "gpt3")
CLAIM = 0.8  # a decision is claimed at P >= 80 % (the ranking's rule)


def extract(git_dir: str, dest: str) -> None:
    names = subprocess.run(["git", "-C", git_dir, "ls-tree", "-r", "--name-only", "HEAD"],
                           check=True, capture_output=True, text=True).stdout.split("\n")
    wanted = [n for n in names if ("/results/" in n and n.rsplit("/", 1)[-1].startswith("result_"))
              or ("/systems/" in n and n.endswith(".json"))]
    proc = subprocess.Popen(["git", "-C", git_dir, "cat-file", "--batch"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    missing = 0
    for name in wanted:
        proc.stdin.write(f"HEAD:{name}\n".encode())
        proc.stdin.flush()
        head = proc.stdout.readline().split()
        if len(head) < 3 or head[1] != b"blob":
            missing += 1
            continue
        data = proc.stdout.read(int(head[2]))
        proc.stdout.read(1)
        target = Path(dest, name)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    print(f"{len(wanted) - missing} files into {dest} ({missing} absent from the mirror)")


@dataclass
class Run:
    release: str
    benchmark: str
    system: str
    batch: int
    state: ProbeState
    events: list
    total: float


def load(roots: list[str]) -> list[Run]:
    runs = []
    for root in roots:
        release = Path(root).name
        for path in sorted(Path(root).glob("*/results/*/*/result_*.txt")):
            if path.parts[-2] not in BENCHMARKS:
                continue
            run = read_run(path)
            events = to_events(run)
            state = fold_all(events)
            if is_block_log(state) and reached(state) and state.end is not None:
                runs.append(Run(release, run.benchmark, run.system.name, run.batch_size, state,
                                events, state.end.t))
    return runs


def blind_length(run: Run, runs: list[Run]) -> tuple[RunLength | None, str]:
    same = [r for r in runs if r.release == run.release and r.benchmark == run.benchmark
            and r.batch == run.batch]
    others = [r.state for r in same if r.system != run.system]
    if others:
        return length_of(others), "other systems"
    mine = [r.state for r in same if r is not run]
    return (length_of(mine), "same system") if mine else (None, "")


def judge(runs: list[Run], fit: bool) -> dict:
    out: dict = defaultdict(lambda: defaultdict(list))
    ratios: dict = defaultdict(list)
    for run in runs:
        blind, _ = blind_length(run, runs)
        # the run's own length, but how later evaluations and blocks compare with the first
        # from the others (the run's own would be the answer)
        own = replace(length_of([run.state]), eval_ratio=blind.eval_ratio,
                      eval_ratio_low=blind.eval_ratio_low, eval_ratio_high=blind.eval_ratio_high,
                      warm_ratio=blind.warm_ratio, warm_ratio_low=blind.warm_ratio_low,
                      warm_ratio_high=blind.warm_ratio_high) if blind else length_of([run.state])
        for cut in CUTS:
            cut_events = cut_run([_copy(e) for e in run.events], cut)
            state = fold_all(cut_events)
            if not _a_start(state, run):
                continue
            key = (run.release, run.benchmark, cut.describe())
            for kind, length in (("speed", own), ("blind", blind)):
                if length is None:
                    continue
                try:
                    est = block_estimate(state, length)
                except NoEstimate:
                    continue
                out[key][kind].append((est.runtime_s, est.low_s, est.high_s, run.total))
            if fit and run.release == "v3.1":
                ratios[(len(state.blocks) > 1, cut.describe())].append(_rate_ratio(run, state))
    if fit:
        for (many, cut), values in sorted(ratios.items()):
            values = sorted(v for v in values if v is not None)
            if values:
                q = lambda p: values[min(len(values) - 1, int(p * len(values)))]  # noqa: E731
                print(f"fit {'2+ blocks' if many else '1 block'} {cut}: later/seen rate "
                      f"5% {q(0.05):.3f} 50% {q(0.5):.3f} 95% {q(0.95):.3f} (n={len(values)})")
    return out


def _a_start(state: ProbeState, run: Run) -> bool:
    """The cut left a start with a block in it and most of the run to estimate (a first
    evaluation that is also the last - stable_diffusion v3.1's - leaves nothing to estimate)."""
    return (state.end is not None and state.end.status == "probe-done" and bool(state.blocks)
            and state.end.t < 0.95 * run.total)


def _copy(ev):  # cut_run writes the start's note: a copy per cut
    import copy

    return copy.copy(ev)


def _rate_ratio(run: Run, cut: ProbeState) -> float | None:
    """The rate of the rest of the run against the rate the cut saw (blocks.py's r)."""
    blocks = run.state.blocks
    k = len(cut.blocks)
    if k >= len(blocks) or blocks[k - 1].progress is None or blocks[-1].progress is None:
        return None
    rest = sum(b.dt for b in blocks[k:]) / max(1e-9, blocks[-1].progress - blocks[k - 1].progress)
    seen = []
    before = 0.0
    for b in cut.blocks:
        if b.progress and b.progress > before:
            seen.append(b.dt / (b.progress - before))
        before = b.progress or before
    r = statistics.median(seen[1:]) if len(seen) > 1 else seen[0] if seen else None
    return rest / r if r else None


def summary(rows: list[tuple[float, float, float, float]]) -> tuple[int, float, float, float]:
    errors = [abs(e - t) / t for e, _, _, t in rows]
    inside = sum(lo <= t <= hi for _, lo, hi, t in rows)
    half = [(hi - lo) / 2 / e for e, lo, hi, _ in rows if e > 0]
    return len(rows), 100 * statistics.median(errors), 100 * inside / len(rows), \
        100 * statistics.median(half)


def accuracy_table(judged: dict, markdown: bool) -> list[str]:
    lines = ["| release | benchmark | cut | runs | speed: error / inside / half-width |"
             " blind: error / inside / half-width |", "|---|---|---|---|---|---|"]
    for (release, bench, cut), kinds in sorted(judged.items()):
        cells = []
        for kind in ("speed", "blind"):
            rows = kinds.get(kind, [])
            if rows:
                n, err, cov, half = summary(rows)
                cells.append(f"{err:.1f} % / {cov:.0f} % / {half:.1f} %")
            else:
                cells.append("-")
        n = len(kinds.get("speed", []))
        lines.append(f"| {release} | {bench} | {cut} | {n} | {cells[0]} | {cells[1]} |")
    return lines


def pooled(judged: dict) -> list[str]:
    lines = ["| release | cut | speed: runs / error / inside | blind: runs / error / inside |",
             "|---|---|---|---|"]
    for release in sorted({k[0] for k in judged}):
        for cut in [c.describe() for c in CUTS]:
            cells = []
            for kind in ("speed", "blind"):
                rows = [r for k, v in judged.items() if k[0] == release and k[2] == cut
                        for r in v.get(kind, [])]
                if rows:
                    n, err, cov, _ = summary(rows)
                    cells.append(f"{n} / {err:.1f} % / {cov:.0f} %")
                else:
                    cells.append("-")
            lines.append(f"| {release} | {cut} | {cells[0]} | {cells[1]} |")
    return lines


def length_spread(runs: list[Run]) -> list[str]:
    groups: dict = defaultdict(list)
    for r in runs:
        groups[(r.release, r.benchmark, r.batch)].append(r)
    per: dict = defaultdict(list)
    for (release, bench, _), group in groups.items():
        if len(group) >= 3:
            evals = sorted(len(r.state.vals) for r in group)
            per[(release, bench)].append((evals[0], statistics.median(evals), evals[-1]))
    lines = ["| release | benchmark | settings | evaluations to target: median range |",
             "|---|---|---|---|"]
    for (release, bench), values in sorted(per.items()):
        ratios = [(hi - lo) / mid for lo, mid, hi in values if mid]
        if not ratios:
            continue
        spread = statistics.median(ratios)
        lines.append(f"| {release} | {bench} | {len(values)} | ±{50 * spread:.0f} % "
                     f"(e.g. {values[0][0]}-{values[0][2]} around {values[0][1]:g}) |")
    return lines


def costs(runs: list[Run]) -> list[str]:
    per: dict = defaultdict(lambda: defaultdict(list))
    for r in runs:
        s = r.state
        rates = []
        before = 0.0
        for b in s.blocks:
            if b.progress and b.progress > before:
                rates.append(b.dt / (b.progress - before))
            before = b.progress or before
        d = per[(r.release, r.benchmark)]
        d["init"].append(100 * (s.t_init or 0) / r.total)
        if len(rates) > 2:
            d["warm"].append(rates[0] / statistics.median(rates[1:]))
        d["eval"].append(100 * sum(v.dt for v in s.vals) / r.total)
    lines = ["| release | benchmark | runs | start-up (init) | first block's rate / later |"
             " evaluation |", "|---|---|---|---|---|---|"]
    for (release, bench), d in sorted(per.items()):
        warm = f"{statistics.median(d['warm']):.2f}x" if d["warm"] else "-"
        lines.append(f"| {release} | {bench} | {len(d['init'])} | "
                     f"{statistics.median(d['init']):.1f} % | {warm} | "
                     f"{statistics.median(d['eval']):.1f} % |")
    return lines


def decisions(runs: list[Run]) -> list[str]:
    """Between systems of one benchmark, one cut run each (the first result), blind length: the
    claim 'A is faster' at P >= 80 % from the two estimates' bounds, against the real runs."""
    from probecast.core.model.rank.decisions import log_scales, p_ahead

    lines = ["| release | cut | pairs >= 10 % apart | decided | wrong among decided |",
             "|---|---|---|---|---|"]
    for release in sorted({r.release for r in runs}):
        firsts: dict = {}
        for r in runs:
            if r.release == release:
                firsts.setdefault((r.benchmark, r.system), r)
        for cut in CUTS:
            est: dict = {}
            for key, r in firsts.items():
                length, _ = blind_length(r, runs)
                state = fold_all(cut_run([_copy(e) for e in r.events], cut))
                if length is None or not _a_start(state, r):
                    continue
                try:
                    e = block_estimate(state, length)
                except NoEstimate:
                    continue
                est[key] = ((e.runtime_s, e.low_s, e.high_s), r.total)
            pairs = decided = wrong = 0
            keys = sorted(est)
            for i, a in enumerate(keys):
                for b in keys[i + 1:]:
                    if a[0] != b[0]:
                        continue
                    (ea, ta), (eb, tb) = est[a], est[b]
                    if abs(ta - tb) / min(ta, tb) < 0.10:
                        continue
                    pairs += 1
                    p = p_ahead(ea, eb, same_host=False)
                    if max(p, 1 - p) >= CLAIM:
                        decided += 1
                        wrong += (p >= 0.5) != (ta < tb)
            lines.append(f"| {release} | {cut.describe()} | {pairs} | "
                         f"{100 * decided / max(1, pairs):.0f} % ({decided}) | "
                         f"{100 * wrong / max(1, decided):.1f} % ({wrong}) |")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("roots", nargs="+", help="extracted releases (or --extract GIT_DIR DEST)")
    ap.add_argument("--extract", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--fit", action="store_true")
    ns = ap.parse_args()
    if ns.extract:
        extract(ns.roots[0], ns.roots[1])
        return 0
    runs = load(ns.roots)
    print(f"{len(runs)} complete runs read ({os.cpu_count()} CPUs)\n")
    judged = judge(runs, ns.fit)
    for title, table in (("Estimate from the start, pooled", pooled(judged)),
                         ("Per benchmark", accuracy_table(judged, ns.markdown)),
                         ("The length to target, apart from speed", length_spread(runs)),
                         ("Decisions between systems of one benchmark", decisions(runs)),
                         ("Start-up, warm-up and evaluation on GPU systems (share of the run)",
                          costs(runs))):
        print(f"### {title}\n")
        print("\n".join(table) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
