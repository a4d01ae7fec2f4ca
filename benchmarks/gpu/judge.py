"""What the real GPU recordings (benchmarks/corpus/runs-gpu-h200, made by benchmarks/gpu/record.sh
on one NVIDIA H200) show that a CPU cannot: the hook's cost, NVML against nvidia-smi, the
memory a probe reports against what the GPU holds, torch.compile's first step, start-up.

    python benchmarks/gpu/judge.py [benchmarks/corpus/runs-gpu-h200]

The estimate's accuracy on these runs is benchmarks/accuracy.py's (RESULTS §9 quotes both).
"""

from __future__ import annotations

import datetime as dt
import gzip
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT.parent))

from probecast.core.model.events import Sample, Start, read_log  # noqa: E402
from probecast.core.model.state import fold_all  # noqa: E402
from timeline import smi_rows  # noqa: E402 - beside this script: nvidia-smi's samples

ITER = re.compile(r"^iter (\d+): loss [\d.]+, time ([\d.]+)ms")


def _text(path: Path) -> str:
    return gzip.open(path, "rt").read() if path.suffix == ".gz" else path.read_text()


def printed_iterations(path: Path) -> list[list[float]]:
    """nanoGPT's own per-iteration times (ms, every 10th iteration), one list per run in the
    output (it restarts at iter 0); iteration 0 and the evaluation iterations left out."""
    runs: list[list[float]] = []
    for line in _text(path).splitlines():
        m = ITER.match(line)
        if not m:
            continue
        it, ms = int(m.group(1)), float(m.group(2))
        if it == 0:
            runs.append([])
        elif it % 200 and runs:
            runs[-1].append(ms)
    return runs


def nvml_vs_smi(log: Path, smi: list[tuple[dt.datetime, float, float]]) -> list[tuple[float, float]]:
    """(NVML's memory in the agent's sample, nvidia-smi's at the nearest moment) in MB."""
    events, _ = read_log(log)
    start = next(e for e in events if isinstance(e, Start))
    t0 = dt.datetime.fromisoformat(start.time) - dt.timedelta(seconds=start.t)
    out = []
    for e in events:
        if isinstance(e, Sample) and e.gpu_mem_mb:
            when = t0 + dt.timedelta(seconds=e.t)
            near = min(smi, key=lambda r: abs((r[0] - when).total_seconds()))
            if abs((near[0] - when).total_seconds()) < 1.5:
                out.append((e.gpu_mem_mb[0], near[2]))
    return out


def main() -> int:
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "benchmarks/corpus/runs-gpu-h200"
    print(f"# {corpus.name}: {(corpus / 'env.txt').read_text().split(chr(10))[1]}\n")
    hooked = printed_iterations(corpus / "gpt_loop-b64.output.gz")
    plain = printed_iterations(corpus / "gpt_loop-b64-without-probecast.output.gz")
    state = fold_all(read_log(corpus / "gpt_loop-b64.jsonl.gz")[0])
    print("The hook's cost (gpt_loop b64, bf16, nanoGPT's own iteration timer, ms):")
    print(f"  with probecast (full run): median {statistics.median(hooked[-1]):.2f} "
          f"({len(hooked[-1])} iterations)")
    print(f"  without it:                median {statistics.median(plain[-1]):.2f} "
          f"({len(plain[-1])} iterations)")
    print(f"  the hook's own step time:  median {1000 * statistics.median(state.steady.values):.2f}"
          f" ({state.steady.n} steady steps)")
    walls = dict(re.findall(r"^(\S+ \S+) rc=\d+ wall=([\d.]+)", (corpus / "jobs.txt").read_text(),
                            re.M))
    print(f"  whole command: {walls['gpt-b64 full']} s with, {walls['gpt-b64-plain plain']} s "
          "without (one run each)\n")
    smi = smi_rows(corpus / "nvidia-smi.csv.gz")
    print("GPU memory: the agent's NVML samples against nvidia-smi, and the allocator's peak:")
    for log in sorted(corpus.glob("[!p]*.jsonl.gz")):
        pairs = nvml_vs_smi(log, smi)
        s = fold_all(read_log(log)[0])
        peak = s.memory.device_peak_mb if s.memory else None
        if pairs:
            diff = statistics.median(abs(a - b) for a, b in pairs)
            print(f"  {log.name.split('.')[0]:<22} {len(pairs):3} samples, |NVML - smi| median "
                  f"{diff:6.1f} MB; NVML peak {max(a for a, _ in pairs):7.0f} MB, allocator "
                  f"peak {peak or 0:7.0f} MB")
    print("\nStart-up and the first step (T_init, T_it1; probe, then the full run after it):")
    for name in ("gpt_loop-b64", "gpt_loop_compile-b64", "torch_cnn-b512", "lightning_cnn-b256",
                 "hf_trainer-b64"):
        p = fold_all(read_log(corpus / f"probe-{name}.jsonl.gz")[0])
        f = fold_all(read_log(corpus / f"{name}.jsonl.gz")[0])
        print(f"  {name:<22} T_init {p.t_init:5.2f} / {f.t_init:5.2f} s   T_it1 {p.t_it1:6.3f} / "
              f"{f.t_it1:6.3f} s   steady {1000 * statistics.median(f.steady.values):.2f} ms")
    oom = fold_all(read_log(corpus / "probe-gpt_loop-b65536.jsonl.gz")[0])
    assert oom.end is not None
    print(f"\nOut of memory: {oom.end.status} after {oom.end.t:.1f} s - {oom.end.reason[:140]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
