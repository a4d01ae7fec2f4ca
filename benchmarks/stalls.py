"""Do Keras epoch boundaries wait for the tf.data autotuner's next wake-up? Every boundary of
every recorded full run against the prediction of core/model/estimate/stalls.py.

    .venv/bin/python benchmarks/stalls.py benchmarks/corpus/runs benchmarks/corpus/runs-long \
        sample_logs/cpu-keras [--detail]

For each boundary: the lifetime of the iterator it tears down (the epoch before it, its first
step counted as a steady one), the stall predicted for that lifetime (the time to the next
wake-up: 10 ms, 30 ms, 70 ms ... 10.23 s, 20.47 s, 40.95 s, 81.91 s, then every 60 s), and what
the boundary cost besides a steady step. A boundary whose predicted stall is long enough to tell
(>= 0.3 s) either *stalled as predicted* (its cost within 25 % or 0.3 s of the prediction) or
did not. Reported per number of cores the run could use: how often the stall came, and how close
the prediction was when it did; then by the epoch's length (do longer epochs, with longer waits,
stall more or less often?); then the same for the teardown when fit() returned.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from probecast.core.model.estimate.bounds import TF, mechanism  # noqa: E402
from probecast.core.model.logstore import discover_logs, load_probe  # noqa: E402
from probecast.core.model.estimate.stalls import cores_usable  # noqa: E402
from probecast.core.model.estimate.wakeups import (INFORMATIVE_S, epoch_lifetimes,  # noqa: E402
                                                   observe, stall_after)
from probecast.core.model.state import ProbeState  # noqa: E402


def full_runs(paths: list[str]) -> list[tuple[str, ProbeState]]:
    files, errors = discover_logs(paths)
    for e in errors:
        print(e, file=sys.stderr)
    out = []
    for f in files:
        if f.name.startswith("probe-"):
            continue
        st = load_probe(f).state
        if st.end is not None and st.end.status == "complete" and mechanism(st) == TF:
            out.append((f.name.split(".jsonl")[0], st))
    return out


LENGTHS = ((0, 2), (2, 5), (5, 10), (10, 20), (20, 40), (40, None))


def by_length(told: list[tuple[str, float, bool, str]]) -> list[str]:
    """How often a boundary stalled, by cores and the epoch's length (its iterator's lifetime):
    ``told`` holds (cores, lifetime, stalled, run) of each boundary long enough to tell."""
    out = ["| cores | epoch length | boundaries | stalled | runs |", "|---|---|---|---|---|"]
    for key in sorted({k for k, _, _, _ in told}):
        for lo, hi in LENGTHS:
            inside = [(hit, run) for k, life, hit, run in told
                      if k == key and lo <= life and (hi is None or life < hi)]
            if inside:
                stalled = sum(hit for hit, _ in inside)
                span = f"{lo}-{hi} s" if hi is not None else f">= {lo} s"
                out.append(f"| {key} | {span} | {len(inside)} | {stalled} = "
                           f"{stalled / len(inside):.0%} | {len({r for _, r in inside})} |")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logs", nargs="+", help="directories of full runs (probes are skipped)")
    ap.add_argument("--detail", action="store_true", help="every boundary of every run")
    ns = ap.parse_args()
    runs = full_runs(ns.logs)
    by_cores: dict[str, dict[str, list[float]]] = {}
    ends: dict[str, list[tuple[float, float]]] = {}
    boundaries: list[tuple[str, float, bool, str]] = []
    for name, st in runs:
        t_it = st.step_time("trimmed")[0]
        cores = cores_usable(st)
        key = "1 core" if cores == 1 else f"{cores or '?'} cores"
        row = by_cores.setdefault(key, {"stalled": [], "cheap": [], "untold": [], "runs": []})
        seen = observe(st, t_it, stalls=True)
        row["runs"].append(seen.stalled / max(1, seen.stalled + seen.cheap))
        lines = []
        for lifetime, cost, gap in epoch_lifetimes(st, t_it):
            predicted = stall_after(lifetime)
            if predicted < INFORMATIVE_S:
                row["untold"].append(cost)
                verdict = "untold"
            elif abs(cost - predicted) <= max(0.25 * predicted, INFORMATIVE_S):
                row["stalled"].append(abs(cost - predicted))
                verdict = "stalled"
            else:
                row["cheap"].append(cost)
                verdict = "cheap"
            if verdict != "untold":
                boundaries.append((key, lifetime, verdict == "stalled", name))
            lines.append(f"    epoch {lifetime:7.2f} s  predicted {predicted:6.2f} s  "
                         f"cost {cost:6.2f} s  {verdict}")
        # the teardown when fit() returned: the last epoch's iterator
        record = epoch_lifetimes(st, t_it)
        if st.fit_end_time is not None and record:
            last = st.time_by_epoch.get(max(st.steps_by_epoch), 0.0) - (st.boundary_steps[-1]
                                                                      if st.boundary_steps
                                                                      else 0.0) + t_it
            ends.setdefault(key, []).append((stall_after(last), st.fit_end_time))
        if ns.detail:
            print(f"{name} ({key}, {seen.stalled} stalled, {seen.cheap} cheap, "
                  f"{seen.untold} too short to tell)")
            print("\n".join(lines))
    print(f"{len(runs)} Keras full runs; boundaries whose predicted stall is >= "
          f"{INFORMATIVE_S} s:\n")
    print("| cores | boundaries | stalled as predicted | prediction error when stalled: "
          "median / p90 / max | runs' share stalled: min / median / max |")
    print("|---|---|---|---|---|")
    for key, row in sorted(by_cores.items()):
        told = len(row["stalled"]) + len(row["cheap"])
        errs = sorted(row["stalled"])
        p90 = errs[min(len(errs) - 1, int(0.9 * len(errs)))] if errs else 0.0
        shares = row["runs"]
        print(f"| {key} | {told} | {len(errs)} = {len(errs) / max(1, told):.0%} | "
              f"{statistics.median(errs) if errs else 0:.2f} / {p90:.2f} / "
              f"{max(errs, default=0):.2f} s | {min(shares):.0%} / "
              f"{statistics.median(shares):.0%} / {max(shares):.0%} |")
    print("\nby the epoch's length:\n")
    print("\n".join(by_length(boundaries)))
    print()
    for key, pairs in sorted(ends.items()):
        told = [(p, c) for p, c in pairs if p >= INFORMATIVE_S]
        hit = [abs(c - p) for p, c in told if abs(c - p) <= max(0.25 * p, INFORMATIVE_S)]
        print(f"teardown when fit() returned, {key}: {len(hit)} of {len(told)} stalled as "
              f"predicted (median error {statistics.median(hit) if hit else 0:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
