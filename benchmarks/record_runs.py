"""Record real trainings of the built-in workloads with the agent: full runs and short probes of each setting.

    python benchmarks/record_runs.py OUT_DIR [--quick]

For each workload x batch size x host configuration (1 CPU thread pinned to one core, or 2
threads on two cores - standing in for two instance types) it runs the whole training with
``--full`` and, separately, a real probe with the default stop policy. The logs feed
benchmarks/accuracy.py and sample_logs/. Run it on a quiet machine: other load skews timings.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MATRIX = {
    "mnist-cnn": {"batches": (64, 128, 256), "args": ["--epochs", "6", "--train-size", "12000",
                                                      "--val-size", "2000"]},
    "cifar-resnet": {"batches": (64, 128, 256), "args": ["--epochs", "5", "--train-size", "4000",
                                                         "--val-size", "1000"]},
}
# The same settings with steps_per_epoch passed to fit(): does the advice the agent gives fix
# the epoch-boundary stall, and do short probes then predict the whole training?
EXPLICIT = {
    "mnist-cnn-explicit": {"workload": "mnist-cnn", "batches": (64, 256),
                           "args": ["--epochs", "6", "--train-size", "12000", "--val-size", "2000",
                                    "--explicit-steps"]},
    "cifar-resnet-explicit": {"workload": "cifar-resnet", "batches": (64,),
                              "args": ["--epochs", "5", "--train-size", "4000", "--val-size", "1000",
                                       "--explicit-steps"]},
}
# A blind check of the committed constants: the same two programs at sizes, epochs and batch
# sizes no committed corpus has (recorded after the constants were measured, never fitted on)
FRESH = {
    "mnist-cnn": {"batches": (96, 192, 384), "args": ["--epochs", "7", "--train-size", "15000",
                                                      "--val-size", "2500"]},
    "cifar-resnet": {"batches": (48, 96, 192), "args": ["--epochs", "6", "--train-size", "5000",
                                                        "--val-size", "1000"]},
}
# the test suite's smoke run: the smallest job (its trust report adds a committed corpus, so that
# a program is held out against others)
QUICK = {
    "tabular-mlp": {"batches": (64,), "args": ["--epochs", "3", "--train-size", "2000", "--val-size", "400"]},
}
HOSTS = {"cpu-1core": ("0", "1"), "cpu-2core": (None, "2")}


def record(out: Path, name: str, workload: str, batch: int, host: str, extra: list[str],
           mode: list[str]) -> float:
    cpus, threads = HOSTS[host]
    cmd = [sys.executable, "-m", "probecast.core.agent", "workload", workload, "--batch-size", str(batch),
           "--threads", threads, "--probe", name, "--instance", host, "--out", str(out / f"{name}.jsonl"),
           *extra, *mode]
    if cpus is not None and shutil.which("taskset"):
        cmd = ["taskset", "-c", cpus, *cmd]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "3"}
    (out / f"{name}.jsonl").unlink(missing_ok=True)
    t0 = time.monotonic()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.monotonic() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--quick", action="store_true", help="tiny sizes (the test suite's smoke run)")
    ap.add_argument("--explicit", action="store_true",
                    help="the settings with steps_per_epoch given to fit() (the stall fix)")
    ap.add_argument("--fresh", action="store_true",
                    help="sizes, epochs and batch sizes no committed corpus has (a blind check)")
    ns = ap.parse_args()
    out = Path(ns.out)
    out.mkdir(parents=True, exist_ok=True)
    matrix: dict[str, dict] = (QUICK if ns.quick else EXPLICIT if ns.explicit  # type: ignore[type-arg]
                               else FRESH if ns.fresh else MATRIX)
    hosts = ["cpu-1core"] if ns.quick else list(HOSTS)
    for name, spec in matrix.items():
        workload = spec.get("workload", name)
        for batch in spec["batches"]:
            for host in hosts:
                tag = f"{name}-b{batch}-{host}"
                if (out / f"full-{tag}.jsonl").exists() and (out / f"probe-{tag}.jsonl").exists():
                    continue  # recorded already (an interrupted recording goes on)
                wall = record(out, f"full-{tag}", workload, batch, host, spec["args"], ["--full"])
                print(f"full  {tag:<32} {wall:7.1f}s", flush=True)
                wall = record(out, f"probe-{tag}", workload, batch, host, spec["args"], [])
                print(f"probe {tag:<32} {wall:7.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
