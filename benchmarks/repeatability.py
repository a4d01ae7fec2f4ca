"""How much does the same full run vary from one run to the next on this machine? The floor under
any point estimate's error: a probe cannot predict the run better than the run repeats itself.

    python benchmarks/repeatability.py [--repeat 4] [--only NAME ...]

Runs settings of the corpus (benchmarks/corpus/record.py) to completion ``--repeat`` times each,
back to back, and reports per setting the spread of the real totals and of the steady step time:
median absolute deviation from the median, and (max - min) / median.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks" / "corpus"))
sys.path.insert(0, str(ROOT))

import record  # noqa: E402

from probecast.core.model.logstore import load_probe  # noqa: E402

DEFAULT = ["torch_accumulate-b32-e4-c2", "torch_mnist-b256-e5-c2", "workload:torch-cnn-b64-e3-c1",
           "mnist_convnet-b256-e8-c2"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=4)
    ap.add_argument("--only", nargs="*", default=DEFAULT)
    ns = ap.parse_args()
    env = {"PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "3", "PATH": "/usr/bin:/bin"}
    print("| setting | runs | total: median | MAD / median | (max-min) / median | step: (max-min) / median |")
    print("|---|---:|---:|---:|---:|---:|")
    spreads = []
    for name in ns.only:
        totals, steps = [], []
        with tempfile.TemporaryDirectory() as d:
            for i in range(ns.repeat):
                out = Path(d) / f"r{i}"
                out.mkdir()
                subprocess.run(record.command(name, out), cwd=record.workdir(name), env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
                (log,) = out.glob("*.jsonl")
                st = load_probe(log).state
                if st.end is None or st.end.status != "complete":
                    continue
                totals.append(st.end.t)
                steps.append(st.step_time()[0])
        if len(totals) < 2:
            print(f"| {name} | {len(totals)} | - | - | - | - |")
            continue
        med = statistics.median(totals)
        mad = statistics.median(abs(t - med) for t in totals) / med
        spread = (max(totals) - min(totals)) / med
        step_spread = (max(steps) - min(steps)) / statistics.median(steps)
        spreads.append(mad)
        print(f"| {name} | {len(totals)} | {med:.1f} s | {mad:.1%} | {spread:.1%} | {step_spread:.1%} |",
              flush=True)
    if spreads:
        print(f"\nmedian over settings of the MAD/median: {statistics.median(spreads):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
