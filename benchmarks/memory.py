"""How well does the memory forecast hold? From probes at two batch sizes of one program, the
forecast of peak memory at a third, against the peak measured there (core/model/memory/forecast.py).

    .venv/bin/python benchmarks/memory.py --record benchmarks/memory-runs   # ~15 min: probes
    .venv/bin/python benchmarks/memory.py benchmarks/memory-runs benchmarks/corpus/runs-fresh

Two sources. ``--record`` probes programs of the calibration corpus (benchmarks/corpus/scripts:
Keras and PyTorch, as users write them, and the built-in workloads) at three batch sizes each,
4x apart, with the agent (schema v3: each probe's `memory` event has the peak RSS of the
training processes, exact - the kernel's high-water mark). The corpus's ``runs-fresh/`` has two
Keras programs at three batch sizes (full runs and probes, schema v2: RSS sampled once a second).

For each program and each choice of two batch sizes, the line through their peaks forecasts the
third: ``up`` is the one that matters (the two smaller forecast the largest, a 4x reach), ``in``
and ``down`` are shown beside it. Memory is not a timing: a loaded machine does not spoil it.
The gate (RESULTS.md §6): median error of the ``up`` forecasts <= 15 %.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import re
import shutil
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT.parent))
SCRIPTS = ROOT / "benchmarks" / "corpus" / "scripts"

from probecast.core.model.logstore import load_probe  # noqa: E402
from probecast.core.model.memory.forecast import HOST, MemoryPoint, fit_memory, memory_point  # noqa: E402

GATE = 0.15
# program: (framework, batch sizes, samples) - the corpus's settings, a third batch size added
PROGRAMS: dict[str, tuple[str, tuple[int, int, int], int]] = {
    "mnist_convnet": ("keras", (64, 256, 1024), 36000),
    "imdb_lstm": ("keras", (64, 256, 1024), 6000),
    "cifar_tfdata": ("keras", (64, 256, 1024), 12000),
    "fit_loop": ("keras", (128, 512, 2048), 24000),
    "custom_loop": ("keras", (64, 256, 1024), 18000),
    "workload:mnist-cnn": ("keras", (128, 512, 2048), 16000),
    "torch_mnist": ("torch", (64, 256, 1024), 6000),
    "torch_accumulate": ("torch", (32, 128, 512), 24000),
    "lightning_cnn": ("torch", (64, 256, 1024), 8000),
    "hf_trainer": ("torch", (16, 64, 256), 2500),
    "workload:torch-cnn": ("torch", (64, 256, 1024), 5000),
}
STEPS = 6


def record_command(program: str, batch: int, samples: int, out: Path) -> list[str]:
    tag = f"{program.replace('workload:', 'workload-')}-b{batch}"
    agent = [sys.executable, "-m", "probecast.core.agent"]
    common = ["--probe", tag, "--instance", "cpu", "--max-steps", str(STEPS),
              "--boundary-budget", "0", "--out", str(out / f"{tag}.jsonl"),
              "--first-step-timeout", "900"]
    if program.startswith("workload:"):
        return [*agent, "workload", program.split(":", 1)[1], "--batch-size", str(batch),
                "--epochs", "2", "--train-size", str(samples), "--threads", "1", *common]
    return [*agent, "run", *common, "--workload-label", program, "--batch-size", str(batch),
            "--", sys.executable, str(SCRIPTS / f"{program}.py"), "--batch-size", str(batch),
            "--epochs", "2", "--samples", str(samples), "--threads", "1"]


def record(out: Path, only: list[str] | None) -> None:
    out = out.resolve()  # the commands run in scripts/: an --out relative to here must not move
    out.mkdir(parents=True, exist_ok=True)
    for program, (_, batches, samples) in PROGRAMS.items():
        if only and program not in only:
            continue
        for b in batches:
            cmd = record_command(program, b, samples, out)
            log = Path(cmd[cmd.index("--out") + 1])
            if log.with_suffix(".jsonl.gz").exists():
                continue
            print(f"recording {log.name}", file=sys.stderr, flush=True)
            subprocess.run(cmd, cwd=SCRIPTS, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=1800, check=False)
            if log.exists():
                with open(log, "rb") as src, gzip.open(log.with_suffix(".jsonl.gz"), "wb") as dst:
                    shutil.copyfileobj(src, dst)
                log.unlink()


NAME = re.compile(r"^(?:(?P<kind>full|probe)-)?(?P<program>.+?)-b(?P<batch>\d+)(?P<rest>.*?)\.jsonl(\.gz)?$")


def groups(dirs: list[Path]) -> dict[str, dict[int, MemoryPoint]]:
    """Logs grouped into programs (one setting apart from the batch size): name's batch size
    taken out, the directory and the log kind kept."""
    out: dict[str, dict[int, MemoryPoint]] = defaultdict(dict)
    for d in dirs:
        for path in sorted(d.glob("*.jsonl*")):
            m = NAME.match(path.name)
            if m is None:
                continue
            state = load_probe(path).state
            point = memory_point(state)
            if point is None or point.ran_out or point.host_mb is None:
                continue
            rest = re.sub(r"-e\d+", "", m["rest"])  # epochs do not change memory
            key = f"{d.name}/{m['kind'] or 'probe'}-{m['program']}{rest}"
            out[key][int(m["batch"])] = point
    return {k: v for k, v in out.items() if len(v) >= 3}


def forecasts(points: dict[int, MemoryPoint]) -> list[tuple[str, int, float, float]]:
    """(direction, batch size, forecast, measured) for each choice of two batch sizes."""
    sizes = sorted(points)[:3]
    rows = []
    for pair in itertools.combinations(sizes, 2):
        (third,) = set(sizes) - set(pair)
        fit = fit_memory([points[b] for b in pair], HOST)
        if fit is None:
            continue
        way = "up" if third > max(pair) else "down" if third < min(pair) else "in"
        measured = points[third].host_mb
        assert measured is not None
        rows.append((way, third, fit.at(third), measured))
    return rows


def framework_of(key: str) -> str:
    for program, (framework, _, _) in PROGRAMS.items():
        if program.replace("workload:", "workload-") in key:
            return framework
    return "keras"  # runs-fresh: the built-in Keras workloads


def report(dirs: list[Path]) -> int:
    found = groups(dirs)
    if not found:
        print("no program with probes at three batch sizes in " + ", ".join(map(str, dirs)))
        return 1
    print("| program | framework | peak RSS at batch sizes (MB) | up: forecast / measured | "
          "error up | error in | error down |")
    print("|---|---|---|---|---:|---:|---:|")
    ups: list[float] = []
    every: list[float] = []
    by_framework: dict[str, list[float]] = defaultdict(list)
    for key in sorted(found):
        pts = found[key]
        rows = {way: (b, f, m) for way, b, f, m in forecasts(pts)}
        errs = {way: abs(f - m) / m for way, (b, f, m) in rows.items()}
        peaks = ", ".join(f"b{b} {pts[b].host_mb:.0f}" for b in sorted(pts)[:3])
        b, f, m = rows["up"]
        fw = framework_of(key)
        ups.append(errs["up"])
        by_framework[fw].append(errs["up"])
        every += list(errs.values())
        print(f"| {key} | {fw} | {peaks} | b{b}: {f:.0f} / {m:.0f} | {errs['up']:.1%} | "
              f"{errs.get('in', float('nan')):.1%} | {errs.get('down', float('nan')):.1%} |")
    print()
    for fw, errs in sorted(by_framework.items()):
        print(f"{fw}: up forecasts of {len(errs)} programs - median {statistics.median(errs):.1%}, "
              f"max {max(errs):.1%}")
    med = statistics.median(ups)
    print(f"all: up forecasts of {len(ups)} programs - median {med:.1%}, max {max(ups):.1%}; "
          f"every direction ({len(every)}): median {statistics.median(every):.1%}, "
          f"max {max(every):.1%}")
    print(f"gate: median up error <= {GATE:.0%}: {'PASS' if med <= GATE else 'FAIL'}")
    return 0 if med <= GATE else 2


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="*", type=Path, help="directories of probe logs")
    ap.add_argument("--record", type=Path, default=None,
                    help="probe the corpus programs at three batch sizes into this directory")
    ap.add_argument("--only", nargs="*", default=None, help="with --record: these programs")
    ns = ap.parse_args()
    if ns.record is not None:
        record(ns.record, ns.only)
        return 0
    return report(ns.dirs or [ROOT / "benchmarks" / "memory-runs",
                              ROOT / "benchmarks" / "corpus" / "runs-fresh"])


if __name__ == "__main__":
    raise SystemExit(main())
