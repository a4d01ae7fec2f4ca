"""Predicting candidates nobody probed: each MLPerf system's time to train from its hardware and
the other systems' complete runs (core/model/predict/model.py), and the plan that probes only the
contenders (core/model/predict/plan.py).

    python benchmarks/mlperf.py --extract /work/.mirror/mlcommons+training_results_v3.1/repo /tmp/mlp/v3.1
    python benchmarks/predict.py /tmp/mlp/v3.1 /tmp/mlp/v4.0 [--cache /tmp/mlp/systems.json]
    python benchmarks/predict.py --fixture tests/data/predict/mlperf_systems.json /tmp/mlp/v3.1 /tmp/mlp/v4.0

Every complete run is read through ``probecast import mlperf``'s code (benchmarks/mlperf.py's
``load``); a system's time is the median of its complete runs (init to run_stop). Cases, each
system predicted with no run of its own:

- leave-one-system-out per benchmark and release, against three simpler models (nearest
  neighbour in total FLOP/s scaled by it; the same fit with compute only, f = 1; bandwidth
  only, f = 0): median |error|, share inside the bounds, Spearman rank correlation;
- across generations: each GPU model's systems from the other GPU models' runs;
- the project's own GPU recordings (benchmarks/corpus/runs-gpu-*), one GPU model from another;
- the plan: probe the newest, the oldest and the median by compute, predict the rest, probe while
  a prediction's bounds overlap the leader's; did it find the fastest, and how many probes?
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from probecast.core.model.predict.model import (Hardware, Observed, Prediction,  # noqa: E402
                                                predict, speed)
from probecast.core.model.predict import plan as planner  # noqa: E402

try:
    from probecast.core.model.predict.gpus import gpu_spec  # noqa: E402
except ImportError:  # the GPU table lands beside this; until then a stand-in (datasheet figures)
    gpu_spec = None


@dataclass(frozen=True)
class _Gpu:
    key: str
    vendor: str
    bf16_tflops: float
    memory_bw_gbs: float
    year: int


# stand-in only until core/model/predict/gpus.py exists: dense BF16 TFLOP/s, memory GB/s
_STAND_IN = (("H200", _Gpu("H200", "nvidia", 989, 4800, 2024)),
             ("H100-PCIe", _Gpu("H100-PCIe", "nvidia", 756, 2000, 2022)),
             ("H100-SXM5-96", _Gpu("H100-96GB", "nvidia", 989, 3350, 2023)),
             ("H100", _Gpu("H100", "nvidia", 989, 3350, 2022)),
             ("A100-SXM-40", _Gpu("A100-40GB", "nvidia", 312, 1555, 2020)),
             ("A100 - PCIe", _Gpu("A100-PCIe", "nvidia", 312, 1935, 2020)),
             ("A100-PCIe", _Gpu("A100-PCIe", "nvidia", 312, 1935, 2020)),
             ("A100", _Gpu("A100", "nvidia", 312, 2039, 2020)),
             ("A30", _Gpu("A30", "nvidia", 165, 933, 2021)),
             ("L40S", _Gpu("L40S", "nvidia", 362, 864, 2023)),
             ("L40", _Gpu("L40", "nvidia", 181, 864, 2022)),
             ("L4", _Gpu("L4", "nvidia", 121, 300, 2023)),
             ("A10G", _Gpu("A10G", "nvidia", 70, 600, 2021)),
             ("A5000", _Gpu("RTX-A5000", "nvidia", 111, 768, 2021)),
             ("4090", _Gpu("RTX-4090", "nvidia", 165, 1008, 2022)),
             ("Gaudi", _Gpu("Gaudi2", "intel", 432, 2450, 2022)),
             ("7900", _Gpu("RX-7900XTX", "amd", 123, 960, 2022)))


def gpu_of(name: str, memory_gb: float | None = None):  # type: ignore[no-untyped-def]
    if gpu_spec is not None:
        return gpu_spec(name, memory_gb)
    return next((g for k, g in _STAND_IN if k.lower() in name.lower()), None)


@dataclass(frozen=True)
class System:
    release: str
    benchmark: str
    name: str
    accelerator: str
    per_node: int
    nodes: int
    memory_mb: float | None
    runs: int
    total_s: float
    files: tuple[str, ...] = ()  # the result files, under the release
    init_s: float | None = None  # the median start-up (init_start to init_stop)


def collect(roots: list[str]) -> list[System]:
    """Every system's median complete run per benchmark, read as `import mlperf` reads them
    (the runs benchmarks/mlperf.py judges: timed in blocks, target reached, run_stop seen);
    every benchmark, later releases' new ones too."""
    from probecast.core.model.estimate.blocks import is_block_log, reached
    from probecast.core.model.mlperf.runs import read_run, to_events
    from probecast.core.model.state import fold_all

    per: dict[tuple[str, str, str], list] = defaultdict(list)
    for root in roots:
        for path in sorted(Path(root).glob("*/results/*/*/result_*.txt")):
            try:
                run = read_run(path)
                state = fold_all(to_events(run))
            except (OSError, ValueError) as exc:  # a file the importer cannot read: say so
                print(f"skipped {path}: {exc}", file=sys.stderr)
                continue
            if is_block_log(state) and reached(state) and state.end is not None:
                name = f"{path.parts[-5]}/{path.parts[-3]}"
                per[(Path(root).name, run.benchmark, name)].append(
                    (run.system, state.end.t, str(path.relative_to(root)), state.t_init))
    out = []
    for (release, bench, name), runs in sorted(per.items()):
        sysinfo = runs[0][0]
        out.append(System(release, bench, name, sysinfo.accelerator,
                          sysinfo.accelerators_per_node, sysinfo.nodes,
                          sysinfo.accelerator_memory_mb, len(runs),
                          statistics.median(t for _, t, _, _ in runs),
                          tuple(f for _, _, f, _ in runs),
                          statistics.median(i or 0.0 for *_, i in runs)))
    return out


def hardware(s: System) -> Hardware | None:
    if not s.per_node:
        return None
    gpu = gpu_of(s.accelerator, (s.memory_mb or 0) / 1024 or None)
    return Hardware(gpu, s.per_node, s.nodes) if gpu is not None else None


Predictor = Callable[[Hardware, Sequence[Observed]], "Prediction | tuple[float, float, float] | None"]


def nearest(target: Hardware, obs: Sequence[Observed]) -> tuple[float, float, float] | None:
    """The alternative: the system nearest in total FLOP/s, its time scaled by the FLOP/s."""
    if not obs:
        return None
    total = lambda h: h.gpu.bf16_tflops * h.count  # noqa: E731
    o = min(obs, key=lambda o: abs(math.log(total(o.hardware) / total(target))))
    t = o.runtime_s * total(o.hardware) / total(target)
    return t, t, t


MODELS: dict[str, Predictor] = {
    "roofline": lambda h, o: predict(h, o),
    "compute only": lambda h, o: predict(h, o, fixed_f=1.0),
    "bandwidth only": lambda h, o: predict(h, o, fixed_f=0.0),
    "nearest FLOP/s": nearest,
}


def as_observed(systems: Sequence[System]) -> list[tuple[System, Observed]]:
    out = []
    for s in systems:
        hw = hardware(s)
        if hw is not None:
            out.append((s, Observed(s.name, hw, s.total_s, s.init_s)))
    return out


def leave_one_out(group: list[tuple[System, Observed]], model: Predictor,
                  held: Callable[[System, System], bool] = lambda a, b: a.name == b.name,
                  ) -> list[tuple[System, float, float, float]]:
    """(system, predicted, low, high) for every system, from the others' runs (those ``held``
    says are not the same system - or generation)."""
    out = []
    for s, o in group:
        rest = [x for t, x in group if not held(s, t)]
        p = model(o.hardware, rest) if rest else None
        if p is None:
            continue
        t, lo, hi = (p.runtime_s, p.low_s, p.high_s) if isinstance(p, Prediction) else p
        out.append((s, t, lo, hi))
    return out


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    def ranks(v: Sequence[float]) -> list[float]:
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        for pos, i in enumerate(order):
            r[i] = pos
        return r
    rx, ry = ranks(xs), ranks(ys)
    if len(xs) < 3:
        return math.nan
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    den = math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))
    return cov / den if den else math.nan


def scores(rows: list[tuple[System, float, float, float]]) -> tuple[int, float, float, float, float]:
    """n, median |error| %, max |error| %, inside %, Spearman."""
    if not rows:
        return 0, math.nan, math.nan, math.nan, math.nan
    err = [abs(t - s.total_s) / s.total_s for s, t, _, _ in rows]
    inside = sum(lo <= s.total_s <= hi for s, _, lo, hi in rows)
    return (len(rows), 100 * statistics.median(err), 100 * max(err), 100 * inside / len(rows),
            spearman([t for _, t, _, _ in rows], [s.total_s for s, *_ in rows]))


def groups(systems: list[System]) -> dict[tuple[str, str], list[tuple[System, Observed]]]:
    out: dict[tuple[str, str], list[tuple[System, Observed]]] = defaultdict(list)
    for s, o in as_observed(systems):
        out[(s.release, s.benchmark)].append((s, o))
    return out


def distinct(rows: list[tuple[System, float, float, float]]) -> float:
    """Spearman over distinct hardware (GPU model x count): systems of the same hardware differ
    by their software alone, which no hardware model can rank."""
    per: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for s, t, _, _ in rows:
        hw = hardware(s)
        per[hw.label if hw else s.name].append((t, s.total_s))
    pairs = [(statistics.median(p for p, _ in v), statistics.median(r for _, r in v))
             for v in per.values()]
    return spearman([p for p, _ in pairs], [r for _, r in pairs])


def _fmt(sc: tuple[int, float, float, float, float]) -> str:
    n, med, mx, inside, rho = sc
    return f"{n} | {med:.1f} % | {mx:.0f} % | {inside:.0f} % | {rho:.2f}"


def loso_tables(systems: list[System]) -> list[str]:
    by = groups(systems)
    lines = ["| release | benchmark | systems | median err | max err | inside | Spearman |"
             " Spearman, distinct hardware |", "|---|---|---|---|---|---|---|---|"]
    pooled: dict[tuple[str, str], list] = defaultdict(list)
    for (release, bench), group in sorted(by.items()):
        for name, model in MODELS.items():
            rows = leave_one_out(group, model)
            pooled[(release, name)].append(rows)
            if name == "roofline":
                lines.append(f"| {release} | {bench} | {_fmt(scores(rows))} | "
                             f"{distinct(rows):.2f} |")
    lines += ["", "| release | model | systems | median err | max err | inside | "
              "median Spearman |", "|---|---|---|---|---|---|---|"]
    for (release, name), per in sorted(pooled.items()):
        flat = [r for rows in per for r in rows]
        n, med, mx, inside, _ = scores(flat)
        rho = statistics.median(x for x in (scores(r)[4] for r in per) if not math.isnan(x))
        lines.append(f"| {release} | {name} | {n} | {med:.1f} % | {mx:.0f} % | {inside:.0f} % | "
                     f"{rho:.2f} |")
    return lines


def generation_table(systems: list[System]) -> list[str]:
    """Each GPU model's systems predicted from the other GPU models' runs."""
    by = groups(systems)
    per: dict[str, list] = defaultdict(list)
    alternatives: dict[str, list] = defaultdict(list)
    for group in by.values():
        for name, model in MODELS.items():
            rows = leave_one_out(group, model, held=lambda a, b: _gen(a) == _gen(b))
            alternatives[name] += rows
            if name == "roofline":
                for row in rows:
                    per[_gen(row[0])].append(row)
    lines = ["| GPU model predicted | systems | median err | max err | inside | Spearman |",
             "|---|---|---|---|---|---|"]
    for gen, rows in sorted(per.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"| {gen} | {_fmt(scores(rows))} |")
    for name, rows in alternatives.items():
        lines.append(f"| all: {name} | {_fmt(scores(rows))} |")
    return lines


def _gen(s: System) -> str:
    hw = hardware(s)
    return (getattr(hw.gpu, "model", "") or hw.gpu.key) if hw is not None else "?"


def plan_table(systems: list[System]) -> list[str]:
    """The plan over each benchmark's systems as candidates: found the fastest? probes?"""
    lines = ["| release | benchmark | candidates | probed | found the fastest |",
             "|---|---|---|---|---|"]
    found = probed = total = benches = 0
    for (release, bench), group in sorted(groups(systems).items()):
        if len(group) < 4:
            continue
        truth = {o.name: o.runtime_s for _, o in group}
        cands = [planner.Candidate(o.name, o.hardware) for _, o in group]
        result = planner.simulate(cands, truth)
        best = min(truth, key=lambda k: truth[k])
        ok = result.fastest == best or truth[result.fastest] <= truth[best] * 1.0
        found += ok
        probed += len(result.probed)
        total += len(group)
        benches += 1
        lines.append(f"| {release} | {bench} | {len(group)} | {len(result.probed)} | "
                     f"{'yes' if ok else 'no: ' + result.fastest} |")
    lines.append(f"| all | {benches} benchmarks | {total} | {probed} ({100 * probed / total:.0f} %)"
                 f" | {found}/{benches} ({100 * found / benches:.0f} %) |")
    return lines


def own_recordings(corpus: Path) -> list[str]:
    """The project's own GPU recordings (benchmarks/corpus/runs-gpu-*): each full run predicted
    from the same job's full run on another GPU model."""
    from probecast.core.model.logstore import load_probe
    from probecast.core.model.predict.predicted import hardware_of_devices

    runs: dict[str, list[tuple[str, Observed]]] = defaultdict(list)
    for path in sorted(corpus.glob("runs-gpu-*/*.jsonl.gz")):
        if path.name.startswith("probe-"):
            continue
        state = load_probe(path).state
        hw = hardware_of_devices(state.start.devices) if state.start else None
        if hw is None or state.end is None or state.end.status != "complete":
            continue
        runs[path.name.split(".")[0]].append((path.parent.name, Observed(
            path.parent.name, hw, state.end.t, state.t_init)))
    gpus = sorted({o.hardware.gpu.key for v in runs.values() for _, o in v})
    lines = [f"GPU models recorded: {', '.join(gpus) or 'none'}"]
    for job, obs in sorted(runs.items()):
        for where, o in obs:
            others = [x for _, x in obs if x.hardware.gpu.key != o.hardware.gpu.key]
            p = predict(o.hardware, others) if others else None
            if p is not None:
                lines.append(f"{job} on {o.hardware.label}: predicted {p.runtime_s:.1f} s "
                             f"[{p.low_s:.1f}-{p.high_s:.1f}] from {others[0].hardware.label}, "
                             f"real {o.runtime_s:.1f} s "
                             f"({100 * (p.runtime_s - o.runtime_s) / o.runtime_s:+.0f} %)")
    if len(lines) == 1:
        lines.append("one GPU model only: nothing to predict one from another yet")
    return lines


def write_fixture(systems: list[System], path: Path, benches: Sequence[tuple[str, str]]) -> None:
    """A few benchmarks' per-system times, with the result files each came from."""
    rows = [{**s.__dict__, "files": _folder_and_names(s.files)} for s in systems
            if (s.release, s.benchmark) in set(benches)]
    doc = {"source": "MLCommons training_results_v3.1 / training_results_v4.0 (Apache-2.0), "
                     "read by benchmarks/predict.py through probecast import mlperf's code: a "
                     "system's total_s is the median of its complete runs (init_start to "
                     "run_stop); files are its result files under the release",
           "command": "python benchmarks/predict.py /tmp/mlp/v3.1 /tmp/mlp/v4.0 --fixture "
                      + str(path)}
    lines = json.dumps(doc, indent=1)[:-2] + ',\n "systems": [\n'
    lines += ",\n".join("  " + json.dumps(r) for r in rows) + "\n ]\n}\n"
    path.write_text(lines)


def _folder_and_names(files: Sequence[str]) -> list[str]:
    """'submitter/results/system/benchmark/' then result_<n>.txt names: the provenance, short."""
    folder = files[0].rsplit("/", 1)[0] + "/" if files else ""
    return [folder] + [f.rsplit("/", 1)[-1] for f in files]


FIXTURE_BENCHMARKS = (("v3.1", "bert"), ("v4.0", "llama2_70b_lora"), ("v4.0", "resnet"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("roots", nargs="*", help="extracted MLPerf releases (benchmarks/mlperf.py)")
    ap.add_argument("--cache", help="systems read once, kept here (JSON)")
    ap.add_argument("--fixture", help="write the test fixture of a few benchmarks here")
    ns = ap.parse_args()
    if ns.cache and Path(ns.cache).is_file():
        systems = [System(**{**d, "files": tuple(d.get("files", ()))})
                   for d in json.loads(Path(ns.cache).read_text())]
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        systems = collect(ns.roots)
        if ns.cache:
            Path(ns.cache).write_text(json.dumps([s.__dict__ for s in systems], indent=1))
    if ns.fixture:
        write_fixture(systems, Path(ns.fixture), FIXTURE_BENCHMARKS)
    print(f"{len(systems)} systems x benchmarks ({os.cpu_count()} CPUs); GPU facts: "
          f"{'core/model/predict/gpus.py' if gpu_spec else 'the stand-in table'}\n")
    for title, table in (("Leave one system out", loso_tables(systems)),
                         ("Across generations", generation_table(systems)),
                         ("The plan", plan_table(systems)),
                         ("The project's own GPU recordings",
                          own_recordings(Path(__file__).resolve().parent / "corpus"))):
        print(f"### {title}\n\n" + "\n".join(table) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
