"""Does a probe's second epoch say how fast the run's later epochs go?

    .venv/bin/python benchmarks/epoch_levels.py [CORPUS ...] [--min-steps 10]

A first epoch can run at a level of its own - a tf.data ``.cache()`` filling, a page cache
warming, cuDNN choosing its kernels - and a probe that crossed into epoch 2 could then estimate
the later epochs from epoch 2's steps instead of all it saw. Before the estimate does so, this
checks it on every recorded probe/full-run pair whose probe has at least ``--min-steps`` steps
in each of its first two epochs and whose full run has three epochs or more:

- the probe's epoch-2/epoch-1 level (10 %-trimmed means, each epoch's first step left out)
  against the full run's later-epochs/epoch-1 level: if epoch 2 told of the later epochs, the
  two ratios would go together (their correlation is printed);
- the full run's later-epochs level estimated from the probe's steps of both epochs (what the
  estimate does) and from its epoch-2 steps alone: median |error| and signed median of each.

Pure computation over the recorded logs; nothing is fitted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from probecast.core.model.events import Step, read_log  # noqa: E402

ROOT = Path(__file__).resolve().parent / "corpus"
CORPORA = ("runs", "runs-torch", "runs-long", "runs-fresh", "runs-shapes", "runs-interleaved",
           "runs-torch-interleaved", "runs-shapes-interleaved", "runs-gpu-h200", "runs-gpu-h100",
           "runs-gpu-h100-events")


def trimmed(values: list[float], cut: float = 0.1) -> float:
    ordered = sorted(values)
    k = int(len(ordered) * cut)
    kept = ordered[k:len(ordered) - k] or ordered
    return sum(kept) / len(kept)


def epochs(path: Path) -> dict[int, list[float]]:
    """Each epoch's step times, the program's own (a fit()-in-a-loop's outside work taken off)."""
    events, _ = read_log(path)
    out: dict[int, list[float]] = {}
    for ev in events:
        if isinstance(ev, Step) and not ev.phase:
            out.setdefault(ev.epoch, []).append(ev.dt - ev.outside)
    return out


def pairs(corpus: Path) -> list[tuple[str, Path, Path]]:
    found = []
    for probe in sorted(corpus.glob("probe-*.jsonl.gz")):
        name = probe.name[len("probe-"):-len(".jsonl.gz")]
        for full in (corpus / f"{name}.jsonl.gz", corpus / f"full-{name}.jsonl.gz"):
            if full.exists():
                found.append((name, probe, full))
                break
    return found


def row(probe: Path, full: Path, min_steps: int) -> tuple[float, float, float, float] | None:
    """(probe e2/e1, full later/e1, error of both epochs' level, error of epoch 2's) or None."""
    seen, whole = epochs(probe), epochs(full)
    if len(seen) < 2 or len(whole) < 3:
        return None
    first, second = (seen[e][1:] for e in sorted(seen)[:2])
    if min(len(first), len(second)) < min_steps:
        return None
    order = sorted(whole)
    later = trimmed([dt for e in order[1:] for dt in whole[e][1:]])
    return (trimmed(second) / trimmed(first), later / trimmed(whole[order[0]][1:]),
            trimmed(first + second) / later - 1, trimmed(second) / later - 1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpora", nargs="*", help="corpus folders (default: every one recorded)")
    ap.add_argument("--min-steps", type=int, default=10)
    args = ap.parse_args()
    folders = [Path(c) for c in args.corpora] or [ROOT / c for c in CORPORA if (ROOT / c).is_dir()]
    rows = []
    for corpus in folders:
        for name, probe, full in pairs(corpus):
            r = row(probe, full, args.min_steps)
            if r is not None:
                rows.append(r)
                print(f"{corpus.name:24} {name[:36]:36} probe e2/e1 {r[0]:.3f}  full later/e1 "
                      f"{r[1]:.3f}  both {100 * r[2]:+6.1f} %  epoch 2 {100 * r[3]:+6.1f} %")
    if len(rows) < 3:
        print("fewer than three pairs: nothing to say")
        return 1
    both, second = [r[2] for r in rows], [r[3] for r in rows]
    print(f"\n{len(rows)} pairs: correlation of the probe's e2/e1 with the run's later/e1 "
          f"{statistics.correlation([r[0] for r in rows], [r[1] for r in rows]):+.2f}")
    for label, errs in (("both epochs' steps", both), ("epoch 2's alone", second)):
        print(f"later epochs' level from {label}: median |error| "
              f"{100 * statistics.median(abs(e) for e in errs):.1f} %, signed "
              f"{100 * statistics.median(errs):+.1f} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
