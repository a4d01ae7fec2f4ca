"""The probe's own cost on the job: the same small job (a PyTorch loop, or Keras' fit()) run
plainly and under the agent (``--full``: the agent sees the whole run, so its run must take as
long as the plain one), in alternating repetitions, with each part of the agent switched off
in turn; and the client's own CPU while it probes the job locally.

    .venv/bin/python benchmarks/overhead.py                      # CPU, the defaults below
    .venv/bin/python benchmarks/overhead.py --device cuda --steps 2000 --reps 5
    .venv/bin/python benchmarks/overhead.py --framework keras    # the same through Keras' fit()
    .venv/bin/python benchmarks/overhead.py --steps 20 --reps 1  # a smoke run (the e2e test's)

Run it on a quiet machine: every figure is a wall time. Per variant, the median over the
repetitions of
  first step  launch to the end of the program's first optimizer step (its own print),
  step        the program's own mean step between its first and last step (ms),
  agent step  the agent's mean step over the same steps (its log: what the estimate sees),
  end         its last step to the process's exit (the agent's included),
  total       launch to exit,
  CPU         CPU seconds of the whole process tree (agent, hook, program),
and the differences from the plain run. The program prints the monotonic clock itself, so the
agent's view of its steps is not what is measured. Each agent run's log is checked: the dt of its
timed events add up to its `end`.

The agent's parts are switched off by environment variables the hook reads (internal, for this
measure only - a user has no reason to set them):
  PROBECAST_SAMPLER=0  no hardware sampler thread (sampler.py)
  PROBECAST_NVML=0     no NVML and no nvidia-smi, for the sampler and `start`'s devices
  PROBECAST_LENGTH=0   the job's length is not read from the program at its first step (length.py)

The client: ``probecast probe --local --json`` probing the same job, in a wrapper that reports
the client process's own CPU seconds (getrusage of itself: its threads, not the agent it starts)
per second of its wall time - the share of a core a local client takes from the job it times.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
MARK = "overhead-mark"
COLUMNS = ("variant", "runs", "first_s", "agent_init_s", "step_ms", "agent_step_ms", "end_s",
           "total_s", "cpu_s", "d_first_s", "d_first_left_s", "d_step_pct", "d_end_s",
           "d_total_s", "d_total_pct")

JOB_TORCH = '''
import argparse, time
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=400)
p.add_argument("--batch-size", type=int, default=64)
p.add_argument("--device", default="cpu")
p.add_argument("--threads", type=int, default=1)
a = p.parse_args()
torch.set_num_threads(a.threads)
torch.manual_seed(0)
per_epoch = max(1, a.steps // 2)
x = torch.randn(per_epoch * a.batch_size, 256)
y = (x[:, 0] > 0).long()
loader = DataLoader(TensorDataset(x, y), batch_size=a.batch_size, shuffle=True)
model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                      nn.Linear(512, 2)).to(a.device)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn = nn.CrossEntropyLoss()
done = 0
while done < a.steps:
    for xb, yb in loader:
        xb, yb = xb.to(a.device, non_blocking=True), yb.to(a.device, non_blocking=True)
        opt.zero_grad(set_to_none=True)
        loss_fn(model(xb), yb).backward()
        opt.step()
        done += 1
        if done == 1 or done == a.steps:
            if a.device != "cpu":
                torch.cuda.synchronize()  # the program's own clock reads the device's end
            print("%s %s %d %.6f" % ("MARK", "first" if done == 1 else "last", done,
                                      time.monotonic()), flush=True)
        if done == a.steps:
            break
'''.replace('"MARK"', repr(MARK))

JOB_KERAS = '''
import argparse, math, time
import numpy as np
import tensorflow as tf
import keras

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=400)
p.add_argument("--batch-size", type=int, default=64)
p.add_argument("--device", default="cpu")  # TensorFlow takes a GPU where it sees one
p.add_argument("--threads", type=int, default=1)
a = p.parse_args()
tf.config.threading.set_intra_op_parallelism_threads(a.threads)
per_epoch = max(1, a.steps // 2)
rng = np.random.default_rng(0)
x = rng.standard_normal((per_epoch * a.batch_size, 256)).astype("float32")
y = (x[:, 0] > 0).astype("int32")
model = keras.Sequential([keras.Input((256,)), keras.layers.Dense(512, activation="relu"),
                          keras.layers.Dense(512, activation="relu"), keras.layers.Dense(2)])
model.compile(optimizer="sgd",
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))


class Marks(keras.callbacks.Callback):
    done = 0
    async_safe = True  # a plain fit() stays plain: Keras 3 runs batch-end callbacks on a thread
    # of its own unless one of them is not async-safe - this one, overriding on_train_batch_end,
    # made every plain step wait for its logs, as the agent's callback does

    def on_train_batch_end(self, batch, logs=None):
        Marks.done += 1
        if Marks.done == 1 or Marks.done == a.steps:
            print("%s %s %d %.6f" % ("MARK", "first" if Marks.done == 1 else "last", Marks.done,
                                      time.monotonic()), flush=True)


model.fit(x, y, batch_size=a.batch_size, epochs=math.ceil(a.steps / per_epoch), verbose=0,
          callbacks=[Marks()])
'''.replace('"MARK"', repr(MARK))
JOBS = {"torch": JOB_TORCH, "keras": JOB_KERAS}

VARIANTS: dict[str, dict[str, str] | None] = {
    "plain": None,
    "agent": {},
    "agent, no sampler": {"PROBECAST_SAMPLER": "0"},
    "agent, no NVML": {"PROBECAST_NVML": "0"},
    "agent, no length reading": {"PROBECAST_LENGTH": "0"},
    "agent, none of the three": {"PROBECAST_SAMPLER": "0", "PROBECAST_NVML": "0",
                                 "PROBECAST_LENGTH": "0"},
}


def _pythonpath() -> str:
    """The repository, after what the caller's PYTHONPATH names (a host without the package
    installed names a folder where ``probecast`` links to the checkout)."""
    return os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(ROOT)) if p)


@dataclass
class Run:
    variant: str
    first_s: float
    step_ms: float
    end_s: float
    total_s: float
    cpu_s: float
    log_ok: bool | None  # the agent's dts add up to its end (None: no agent)
    steps_logged: int | None  # the agent's step events: every step the program ran
    agent_step_ms: float | None  # the agent's mean step over the program's steps 2..N
    agent_init_s: float | None  # the agent's own start-up, as its `init` says (taken off T_init)


def job_command(job: Path, ns: argparse.Namespace) -> list[str]:
    return [PY, str(job), "--steps", str(ns.steps), "--batch-size", str(ns.batch_size),
            "--device", ns.device, "--threads", str(ns.threads)]


def agent_command(command: list[str], log: Path, output: Path) -> list[str]:
    return [PY, "-m", "probecast.core.agent", "run", "--full", "--probe", "overhead",
            "--out", str(log), "--output", str(output), "--", *command]


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_once(variant: str, job: Path, work: Path, ns: argparse.Namespace) -> Run:
    """One run, launch to exit; the marks the program printed."""
    switches = VARIANTS[variant]
    command = job_command(job, ns)
    log, output = work / "probe.jsonl", work / "output.txt"
    for path in (log, output):
        path.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": _pythonpath(), **(switches or {})}
    if switches is not None:
        command = agent_command(command, log, output)
    cpu0, launched = children_cpu(), time.monotonic()
    r = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True,
                       timeout=ns.timeout)
    exited, cpu = time.monotonic(), children_cpu() - cpu0
    if r.returncode != 0:
        raise SystemExit(f"{variant}: exit {r.returncode}: {r.stderr[-2000:]}")
    text = output.read_text() if switches is not None else r.stdout
    marks = {parts[1]: (int(parts[2]), float(parts[3])) for parts in
             (line.split() for line in text.splitlines() if line.startswith(MARK))}
    (n0, first), (n1, last) = marks["first"], marks["last"]
    seen = agent_log(log) if switches is not None else (None, None, None, None)
    return Run(variant, first - launched, 1000 * (last - first) / max(1, n1 - n0),
               exited - last, exited - launched, cpu, *seen)


def agent_log(log: Path) -> tuple[bool, int, float | None, float]:
    """What the agent's log says: whether its timed dts add up to its `end` (the schema's
    invariant), how many steps it logged, its mean step after the first (milliseconds), and its
    own start-up (`init.agent_s`)."""
    events = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    timed = [e for e in events if "dt" in e]
    adds_up = bool(timed) and timed[-1].get("ev") == "end" and abs(
        sum(e["dt"] for e in timed) - timed[-1]["t"]) <= 1e-3 + 1e-5 * len(timed)
    steps = [e["dt"] for e in events if e.get("ev") == "step"]
    mean = 1000 * statistics.fmean(steps[1:]) if len(steps) > 1 else None
    own = next((e.get("agent_s", 0.0) for e in events if e.get("ev") == "init"), 0.0)
    return adds_up, len(steps), mean, own


def summarise(runs: list[Run]) -> list[dict[str, Any]]:
    """Medians per variant, and each one's difference from the plain run."""
    rows: list[dict[str, Any]] = []
    for variant in VARIANTS:
        mine = [r for r in runs if r.variant == variant]
        if not mine:
            continue
        row: dict[str, Any] = {"variant": variant, "runs": len(mine)}
        for key in ("first_s", "step_ms", "end_s", "total_s", "cpu_s"):
            row[key] = round(statistics.median(getattr(r, key) for r in mine), 4)
        seen = [r.agent_step_ms for r in mine if r.agent_step_ms is not None]
        row["agent_step_ms"] = round(statistics.median(seen), 4) if seen else "-"
        own = [r.agent_init_s for r in mine if r.agent_init_s is not None]
        row["agent_init_s"] = round(statistics.median(own), 4) if own else 0.0
        rows.append(row)
    plain = rows[0]
    for row in rows:
        row["d_first_s"] = round(row["first_s"] - plain["first_s"], 4)
        # the start-up lag the estimate still carries once the agent's own share is off T_init
        row["d_first_left_s"] = round(row["d_first_s"] - row["agent_init_s"], 4)
        row["d_step_pct"] = round(100 * (row["step_ms"] / plain["step_ms"] - 1), 2)
        row["d_end_s"] = round(row["end_s"] - plain["end_s"], 4)
        row["d_total_s"] = round(row["total_s"] - plain["total_s"], 4)
        row["d_total_pct"] = round(100 * (row["total_s"] / plain["total_s"] - 1), 2)
    return rows


CLIENT = """
import json, resource, sys, time
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
t0 = time.monotonic()
from probecast.core.cli.main import main
t1, c1 = time.monotonic(), cpu()
code = main(sys.argv[2:])
t2, c2 = time.monotonic(), cpu()
with open(sys.argv[1], "w") as fh:
    json.dump({"code": code, "wall_s": t2 - t0, "cpu_s": c2, "import_cpu_s": c1,
               "probe_wall_s": t2 - t1, "probe_cpu_s": c2 - c1}, fh)
"""


def client_cpu(job: Path, work: Path, ns: argparse.Namespace) -> dict[str, Any]:
    """``probecast probe --local`` on the same job: the client process's CPU per wall second."""
    report = work / "client.json"
    command = [PY, "-c", CLIENT, str(report), "probe", "--local", "--json", "--full",
               "-b", str(ns.batch_size), "--", *job_command(job, ns)[:-6],
               "--batch-size", "{batch_size}", "--device", ns.device, "--threads", str(ns.threads)]
    env = {**os.environ, "PYTHONPATH": _pythonpath(), "HOME": str(work), "XDG_CONFIG_HOME": str(work)}
    r = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True,
                       timeout=ns.timeout)
    if r.returncode != 0 or not report.exists():
        raise SystemExit(f"client: exit {r.returncode}: {r.stderr[-2000:]}")
    out: dict[str, Any] = json.loads(report.read_text())
    out["cpu_per_wall_s"] = round(out["cpu_s"] / out["wall_s"], 4)
    out["probe_cpu_per_wall_s"] = round(out["probe_cpu_s"] / out["probe_wall_s"], 4)
    return out


def measure(ns: argparse.Namespace) -> dict[str, Any]:
    """Every variant once per repetition, in turn (a slow minute hits all of them alike)."""
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="probecast-overhead-") as d:
        work = Path(d)
        job = work / "job.py"
        job.write_text(JOBS[ns.framework])
        for rep in range(ns.reps):
            for variant in ns.variants:
                runs.append(run_once(variant, job, work, ns))
                print(f"rep {rep + 1}/{ns.reps} {variant}: total {runs[-1].total_s:.2f} s",
                      file=sys.stderr, flush=True)
        client = client_cpu(job, work, ns) if ns.client else None
    return {"job": {k: getattr(ns, k) for k in ("framework", "steps", "batch_size", "device",
                                                 "threads")},
            "rows": summarise(runs), "runs": [asdict(r) for r in runs], "client": client,
            "logs_add_up": all(r.log_ok for r in runs if r.log_ok is not None),
            "every_step_logged": all(r.steps_logged == ns.steps for r in runs
                                     if r.steps_logged is not None)}


def markdown(result: dict[str, Any]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|---|" + "---:|" * (len(COLUMNS) - 1)]
    lines += ["| " + " | ".join(str(row[c]) for c in COLUMNS) + " |" for row in result["rows"]]
    lines.append(f"every agent log's dts add up to its end: {result['logs_add_up']}; "
                 f"every step the program ran is in it: {result['every_step_logged']}")
    c = result["client"]
    if c:
        lines.append(f"client (probecast probe --local --full): {c['cpu_s']:.2f} CPU s over "
                     f"{c['wall_s']:.2f} s = {c['cpu_per_wall_s']:.3f} of a core; after its "
                     f"imports ({c['import_cpu_s']:.2f} CPU s) {c['probe_cpu_s']:.2f} CPU s over "
                     f"{c['probe_wall_s']:.2f} s = {c['probe_cpu_per_wall_s']:.3f} of a core")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--framework", choices=list(JOBS), default="torch",
                    help="the job: a PyTorch loop or a Keras fit()")
    ap.add_argument("--steps", type=int, default=400, help="optimizer steps of the job")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--device", default="cpu", help="cpu or cuda")
    ap.add_argument("--threads", type=int, default=1, help="torch threads of the job")
    ap.add_argument("--reps", type=int, default=5, help="repetitions of every variant")
    ap.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument("--no-client", dest="client", action="store_false",
                    help="skip the client's CPU measure")
    ap.add_argument("--json", help="also write the result here")
    ap.add_argument("--timeout", type=float, default=600, help="seconds a run may take")
    ns = ap.parse_args()
    if "plain" not in ns.variants:
        ns.variants.insert(0, "plain")  # every difference is from it
    result = measure(ns)
    if ns.json:
        Path(ns.json).write_text(json.dumps(result, indent=1))
    print(markdown(result))
    return 0 if result["logs_add_up"] and result["every_step_logged"] else 1


if __name__ == "__main__":
    sys.exit(main())
