"""Smoke runs of every benchmark: they run and print sane numbers (no timing thresholds)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import ROOT


def run(*args: str, timeout: float = 300) -> str:
    r = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True,
                       timeout=timeout)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_ingest_benchmark_smoke() -> None:
    out = run("benchmarks/ingest.py", "--events", "20000", "--repeat", "1")
    # what it read, not how fast: speed targets are the benchmark's, never a test's threshold
    events = int(re.search(r"log: (\d+) events", out).group(1))  # type: ignore[union-attr]
    assert events >= 20000
    assert re.search(r"parse\+fold: median [0-9.]+s = \d+ k events/s", out)
    assert re.search(r"replay to ranking \(headless\): median [0-9.]+s", out)


@pytest.mark.tensorflow
@pytest.mark.timeout(1200)  # records real TensorFlow runs (up to 600 s), then reads them
def test_accuracy_benchmark_smoke(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = run("benchmarks/record_runs.py", str(tmp_path), "--quick", timeout=600)
    assert "full  tabular-mlp-b64-cpu-1core" in out and "probe tabular-mlp-b64-cpu-1core" in out
    out = run("benchmarks/step_statistics.py", str(tmp_path))
    m = re.search(r"trimmed \+boundary\s+median\s+([0-9.]+)%", out)
    assert m and 0 <= float(m.group(1)) < 100
    # the trust report: real probes against their full runs, coverage, errors and decisions
    # held out against the committed PyTorch corpus (leave-one-program-out needs other programs)
    out = run("benchmarks/accuracy.py", str(tmp_path), "benchmarks/corpus/runs-torch")
    m = re.search(r"real total inside \[low, high\]\s+(\d+)/(\d+)", out)
    assert m and int(m.group(2)) >= 1
    assert "point error vs whole process" in out and "pairs differing >= 10 %" in out
    assert "wrong claims among decided pairs" in out
    assert "ordered right by the point estimates" in out


def test_results_md_shows_what_accuracy_py_measures_on_the_committed_corpora() -> None:
    """RESULTS.md §0's tables from the recorded probes are the benchmark's output on the committed
    corpora, verbatim: a change to the model or the constants that moves a figure must update what
    RESULTS says. (The cut and bare probes' tables are left to the command; §0 quotes them in its
    gates table.)"""
    out = run("benchmarks/accuracy.py", "benchmarks/corpus/runs", "benchmarks/corpus/runs-torch",
              "benchmarks/corpus/runs-long", "--held-out", "sample_logs/cpu-keras",
              "benchmarks/corpus/runs-fresh", "--exclude", "15ep", "--markdown")
    tables = re.findall(r"(\| (?:measure|claimed P) \|.*?)(?:\n\n|\Z)", out, re.S)
    # from the recorded probes, from probes cut from the full runs, bare: each its figures and
    # whether P was calibrated; RESULTS shows the recorded probes' two (what a user has)
    assert len(tables) == 6
    results = (ROOT / "benchmarks" / "RESULTS.md").read_text()
    for table in tables[:2]:
        assert table.strip() in results, table


def test_ui_benchmark_smoke() -> None:
    out = run("benchmarks/ui.py", "--seconds", "3", "--repeat", "1", timeout=120)
    assert re.search(r"first frame .*median [0-9.]+s", out)
    p99 = float(re.search(r"lag_p99_ms: median ([0-9.]+)", out).group(1))  # type: ignore[union-attr]
    rate = float(re.search(r"bytes_per_s: median ([0-9.]+)", out).group(1))  # type: ignore[union-attr]
    assert p99 >= 0 and rate > 0


def test_step_statistics_reads_the_committed_pytorch_corpus() -> None:
    """Gzipped logs, and PyTorch's (no `epoch` events: the epochs are its steps')."""
    out = run("benchmarks/step_statistics.py", "benchmarks/corpus/runs-torch")
    m = re.search(r"trimmed \+boundary\s+median\s+([0-9.]+)%.*n=(\d+)", out)
    assert m and int(m.group(2)) == 20


def test_stalls_reads_the_committed_keras_runs_by_cores_and_epoch_length() -> None:
    out = run("benchmarks/stalls.py", "sample_logs/cpu-keras")
    assert re.search(r"\| 1 core \| \d+ \| \d+ = \d+% \|", out)  # the table by cores
    by_length = out.split("by the epoch's length:")[1]
    rows = re.findall(r"\| (1 core|2 cores) \| [0-9>= -]+ s \| (\d+) \| (\d+) = \d+% \| \d+ \|",
                      by_length)
    assert {r[0] for r in rows} == {"1 core", "2 cores"}
    assert all(int(stalled) <= int(n) for _, n, stalled in rows)


def test_epoch_levels_reads_the_committed_pairs() -> None:
    out = run("benchmarks/epoch_levels.py", "benchmarks/corpus/runs-torch-interleaved")
    n = int(re.search(r"(\d+) pairs: correlation", out).group(1))  # type: ignore[union-attr]
    assert n >= 3 and out.count("probe e2/e1") == n
    assert re.search(r"from epoch 2's alone: median \|error\| [0-9.]+ %", out)


def test_memory_benchmark_smoke() -> None:
    """The memory forecast's report on the committed probes (recording them is the slow part)."""
    out = run("benchmarks/memory.py", "benchmarks/memory-runs", "benchmarks/corpus/runs-fresh")
    assert re.search(r"keras: up forecasts of \d+ programs - median [0-9.]+%", out)
    assert re.search(r"torch: up forecasts of \d+ programs - median [0-9.]+%", out)
    assert "gate: median up error <= 15%: PASS" in out


# Each step sleeps 2 ms: its lines come at least 10 ms apart (the stamps' millisecond resolution
# measures them on any machine) and the probe's 1 s of steady steps is at most 500 of the 1 000
TINY = """\
import time
import torch
from torch import nn
torch.manual_seed(0)
model, x, y = nn.Linear(64, 1), torch.randn(256, 64), torch.randn(256, 1)
opt = torch.optim.SGD(model.parameters(), 0.01)
for epoch in range(10):
    for i in range(100):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        time.sleep(0.002)
        if i % 5 == 0:
            print(f"epoch {epoch} step {i} loss {loss.item():.4f}")
print("done")
"""


def test_public_records_both_runs_lines_and_progress_sets_them_side_by_side(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """public.py record times both runs' output line by line (stamp.py); progress.py finds the
    progress line they share and compares the probe's pace and start with the plain run's."""
    pytest.importorskip("torch")
    (tmp_path / "tiny.py").write_text(TINY)
    spec = tmp_path / "spec.json"
    spec.write_text('[{"name": "tiny", "cwd": ".", "argv": ["python", "tiny.py"]}]')
    out = tmp_path / "runs"
    run("benchmarks/public.py", "record", str(spec), str(out), timeout=300)
    for name in ("tiny.lines.gz", "probe-tiny.lines.gz", "tiny.truth.json", "probe-tiny.jsonl.gz"):
        assert (out / name).exists(), name
    text = run("benchmarks/progress.py", str(out))
    row = next(line for line in text.splitlines() if line.startswith("tiny "))
    # the plain run printed 200 lines of the progress key; the probe those of the steps it
    # timed: 1 s of steady steps and an epoch boundary or two, so some come after its stretch
    assert "epoch # step # loss #" in row
    error, lag, pace, late_early, common = row.split()[1:6]
    assert error.endswith("%") or error == "-"
    assert float(pace) > 0 and float(late_early) > 0 and 2 <= int(common) < 200
    assert re.search(r"^pace: median [0-9.]+ over 1 scripts", text, re.M)


def test_public_cost_runs_each_setting_plainly_and_under_full_and_sets_them_side_by_side(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """public.py cost: the agent's cost on a script - the same command plainly and under the
    agent with --full (it sees the whole run), one row each in cost.jsonl, the full run's log
    ending in `end` (complete: it stopped nothing), and the report's ratio of the two walls."""
    import gzip
    import json

    pytest.importorskip("torch")
    (tmp_path / "tiny.py").write_text(TINY)
    spec = tmp_path / "spec.json"
    spec.write_text('[{"name": "tiny", "cwd": ".", "argv": ["python", "tiny.py"]}]')
    out = tmp_path / "cost"
    text = run("benchmarks/public.py", "cost", str(spec), str(out), "--reps", "1", timeout=300)
    rows = [json.loads(line) for line in (out / "cost.jsonl").read_text().splitlines()]
    assert sorted(r["variant"] for r in rows) == ["full", "plain"]
    assert all(r["exit"] == 0 and r["wall_s"] > 0 for r in rows)
    with gzip.open(out / "full-tiny-0.jsonl.gz", "rt") as fh:
        last = json.loads(fh.read().splitlines()[-1])
    assert last["ev"] == "end" and last["status"] == "complete"
    walls = {r["variant"]: r["wall_s"] for r in rows}
    ratio = float(re.search(r"1 pairs: full / plain median ([0-9.]+)", text).group(1))  # type: ignore[union-attr]
    assert ratio == pytest.approx(walls["full"] / walls["plain"], abs=0.001)


def test_progress_pairs_the_gpu_scripts_layouts_and_reads_pace_and_lag(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """progress.py on record_h100.sh's folders: NAME/ beside NAME-plain/, and PART=7's
    JOB-probe-N/ beside the JOB-plain-M/ that ran next. The first line both print came at the
    same moment (lag +0.00 s); the probe took twice as long over the progress lines both printed
    (pace 2.000); the plain run's later lines are twice as far apart as its early ones (late/early
    2.000). The plain run before the probe, 9x slower, is not the one it is set against."""
    import gzip

    def lines(path, times) -> None:  # type: ignore[no-untyped-def]
        path.parent.mkdir(parents=True, exist_ok=True)
        with gzip.open(path, "wt") as fh:
            fh.write("0.100\tstarting\n")
            fh.writelines(f"{t:.3f}\tstep {i} loss 0.{i}\n" for i, t in enumerate(times))

    plain = [1.0, 2.0, 3.0, 5.0, 7.0, 9.0]
    probe = [1.5, 3.5, 5.5]
    for job in ("a", "b-probe-2"):
        lines(tmp_path / job / "probe.lines.gz", probe)
        (tmp_path / job / "probe.jsonl").write_text('{"ev":"step","t":5.5}\n')
    lines(tmp_path / "a-plain" / "plain.lines.gz", plain)
    lines(tmp_path / "b-plain-1" / "plain.lines.gz", [t * 9 for t in plain])  # before: not it
    lines(tmp_path / "b-plain-3" / "plain.lines.gz", plain)
    rows = {line.split()[0]: line.split() for line in
            run("benchmarks/progress.py", str(tmp_path), "--no-estimate").splitlines()}
    for job in ("a", "b-probe-2"):
        assert rows[job][1:6] == ["-", "+0.00s", "2.000", "2.000", "3"], rows[job]


def test_gpu_timeline_pairs_each_job_with_its_cuda_context_and_stops_where_they_part(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    """timeline.py on a made recording: gpu_watch's own device query, then a probe (wall 10 s)
    whose CUDA context held 4-9.5 s of it, a plain run (wall 20 s) from 11.5 to 30, then a job
    that made no context, so the next stretch is not its own: the table says so and stops."""
    rows = []
    for i in range(90):  # 45 s of samples, 500 ms apart
        t = i * 0.5
        held = t < 1.0 or 4.0 <= t <= 9.5 or 11.5 <= t <= 30.0 or 40.0 <= t <= 41.0
        busy = 5.0 <= t <= 9.0 or 12.0 <= t <= 29.0
        rows.append(f"2026/11/28 06:22:{int(t):02d}.{int(t % 1 * 1000):03d}, {50 if busy else 0}, "
                    f"{900 if held else 0}, 1980")
    (tmp_path / "nvidia-smi.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "jobs.txt").write_text("p probe rc=0 wall=7.0\np-plain plain rc=0 wall=20.0\n"
                                       "cpu plain rc=0 wall=3.0\nlast plain rc=0 wall=5.0\n")
    out = run("benchmarks/gpu/timeline.py", str(tmp_path)).splitlines()
    assert out[2] == "| p | probe | 7.0 s | 1.0 s | 6.0 s | 4.5 s | 38 % |", out
    assert out[3] == "| p-plain | plain | 20.0 s | 1.0 s | 19.0 s | 17.5 s | 46 % |", out
    assert out[4].startswith("(from cpu plain on, the stretches do not follow the jobs"), out
    assert len(out) == 5
