"""A run the probe saw whole is its own answer; do its bounds hold a repeat of it? Every setting
recorded whole (`--full`) in two corpora at different times - `runs` and `runs-interleaved`
(Keras), `runs-torch` and `runs-torch-interleaved`, `runs-shapes` and `runs-shapes-interleaved`
(hours apart) - is a real pair: each log read as a probe that saw the whole run (the estimate's
`Eq. measured`, runtime.measured_run) against the other's measured total, both ways.

    python benchmarks/repeats.py [A B ...] [--markdown]

Pairs of folders (default: the three above). Prints, per corpus pair, how often the repeat lay
inside the measured run's bounds, the relative half-widths, and the repeat's differences.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from probecast.core.model.estimate.length import ended_by_itself  # noqa: E402
from probecast.core.model.estimate.runtime import (NoEstimate, estimate_runtime,  # noqa: E402
                                                   measured_run)
from probecast.core.model.logstore import load_probe  # noqa: E402
from probecast.core.model.state import ProbeState  # noqa: E402

CORPUS = ROOT / "benchmarks" / "corpus"
DEFAULT = ["runs", "runs-interleaved", "runs-torch", "runs-torch-interleaved", "runs-shapes",
           "runs-shapes-interleaved"]


def whole_runs(folder: Path) -> dict[str, ProbeState]:
    """The folder's full runs by setting name (not its probes), each ended by itself."""
    out = {}
    for path in sorted(folder.glob("*.jsonl.gz")):
        name = path.name[: -len(".jsonl.gz")]
        if name.startswith("probe-"):
            continue
        state = load_probe(path).state
        if ended_by_itself(state):
            out[name.removeprefix("full-")] = state
    return out


def measured(state: ProbeState) -> tuple[float, float, float] | None:
    """(total, low, high) of the run read as a probe that saw it whole."""
    try:
        est = estimate_runtime(state, float(max(len(state.epochs_done), 1)))
    except NoEstimate:
        return None
    m = measured_run(state, est)
    if m.equation != "measured":
        return None
    return m.runtime_s, m.low_s, m.high_s


def total(state: ProbeState) -> float:
    assert state.end is not None
    return state.end.t - state.agent_init_s


def judge(a: Path, b: Path) -> list[tuple[str, float, float, bool]]:
    """(setting, repeat's difference, half-width, inside) both ways for the settings in both."""
    ra, rb = whole_runs(a), whole_runs(b)
    rows = []
    for name in sorted(set(ra) & set(rb)):
        for seen, repeat in ((ra[name], rb[name]), (rb[name], ra[name])):
            m = measured(seen)
            if m is None:
                continue
            est, low, high = m
            truth = total(repeat)
            rows.append((name, truth / est - 1, (high - low) / 2 / est, low <= truth <= high))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folders", nargs="*", default=[str(CORPUS / d) for d in DEFAULT])
    ap.add_argument("--detail", action="store_true", help="a line per pair")
    ns = ap.parse_args()
    if len(ns.folders) % 2:
        ap.error("folders come in pairs: A B [A B ...]")
    print("| corpora | checks | inside | half-width, median | repeat's difference: median abs, "
          "90th pct, max |")
    print("|---|---:|---:|---:|---:|")
    every = []
    for a, b in zip(ns.folders[::2], ns.folders[1::2]):
        rows = judge(Path(a), Path(b))
        every += rows
        if ns.detail:
            for name, diff, half, inside in rows:
                print(f"  {name:<40} {diff:+7.1%} +-{half:5.1%} {'yes' if inside else 'NO'}")
        print(line(f"{Path(a).name} / {Path(b).name}", rows))
    print(line("all", every))
    return 0


def line(label: str, rows: list[tuple[str, float, float, bool]]) -> str:
    if not rows:
        return f"| {label} | 0 | - | - | - |"
    diffs = sorted(abs(r[1]) for r in rows)
    p90 = diffs[min(len(diffs) - 1, int(0.9 * len(diffs)))]
    inside = sum(r[3] for r in rows)
    return (f"| {label} | {len(rows)} | {inside}/{len(rows)} ({inside / len(rows):.0%}) | "
            f"{statistics.median(r[2] for r in rows):.1%} | {statistics.median(diffs):.1%}, "
            f"{p90:.1%}, {diffs[-1]:.1%} |")


if __name__ == "__main__":
    raise SystemExit(main())
