"""`probecast probe --local ...`: run the agent on this machine and keep its log."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, TextIO

from .events import EventReader, EventWriter, Step, Val
from .stats import ProbeState


def default_out_dir() -> Path:
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("probecast-logs") / stamp


def agent_command(ns: argparse.Namespace, batch_size: int, probe_id: str) -> list[str]:
    cmd = [sys.executable, "-m", "core.agent", "workload", ns.workload,
           "--batch-size", str(batch_size), "--probe", probe_id]
    if ns.instance:
        cmd += ["--instance", ns.instance]
    if ns.epochs:
        cmd += ["--epochs", str(ns.epochs)]
    for flag in ("max_steps", "target_ci", "max_seconds", "train_size", "val_size", "threads"):
        value = getattr(ns, flag)
        if value is not None:
            cmd += ["--" + flag.replace("_", "-"), str(value)]
    if ns.full:
        cmd.append("--full")
    return cmd


def run_local_probe(cmd: list[str], log_path: Path, out: TextIO, label: str) -> ProbeState:
    """Run one agent subprocess, append every line to the log as it arrives, report progress."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    reader = EventReader()
    state = ProbeState()
    stderr_path = log_path.with_suffix(".stderr")
    with EventWriter(log_path) as writer, open(stderr_path, "w") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env,
                                bufsize=1)
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                writer.write_raw(line)
                ev = reader.feed_line(line)
                if ev is None:
                    continue
                state.fold(ev)
                if isinstance(ev, Step) and state.steps % 10 == 0:
                    est, lo, hi = state.step_time()
                    ci = f" +/- {(hi - lo) / 2 * 1000:.1f} ms" if est == est and hi != float("inf") else ""
                    out.write(f"  {label}: {state.steps} steps, step {est * 1000:.1f} ms{ci}\n"
                              if est == est else f"  {label}: {state.steps} steps\n")
                    out.flush()
                elif isinstance(ev, Val):
                    out.write(f"  {label}: validation pass {len(state.vals)} ({ev.dt:.2f}s)\n")
            proc.wait()
        except KeyboardInterrupt:
            proc.terminate()
            proc.wait(timeout=30)
            raise
    if state.end is None:
        out.write(f"  {label}: agent exited ({proc.returncode}) without an end event; "
                  f"see {stderr_path}\n")
    return state


def cmd_probe(ns: argparse.Namespace, out: TextIO) -> int:
    from .cli import CliError, cmd_rank

    if not ns.local:
        raise CliError("probe needs --local (run on this machine) or --config FILE "
                       "(remote hosts; not available in this version)")
    if not ns.headless:
        raise CliError("probe without --headless opens the app: run `probecast` instead, "
                       "or add --headless")
    out_dir = Path(ns.out) if ns.out else default_out_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    logs = []
    for b in ns.batch_size:
        probe_id = f"local-{ns.workload}-b{b}"
        path = out_dir / f"{probe_id}.jsonl"
        out.write(f"probe {probe_id} -> {path}\n")
        state = run_local_probe(agent_command(ns, b, probe_id), path, out, probe_id)
        status = state.end.status if state.end else "truncated"
        reason = f" ({state.end.reason})" if state.end and state.end.reason else ""
        out.write(f"  {probe_id}: {status}{reason}\n")
        logs.append(str(path))
    out.write(f"\nlogs written to {out_dir}/\n\n")
    rank_ns = argparse.Namespace(
        logs=logs, by="time", epochs=ns.epochs, no_validation=False, equation="auto",
        statistic="trimmed", price=[f"{ns.instance}={ns.price_per_hour}"] if ns.price_per_hour
        and ns.instance else None, billing=None, json=False, csv=False)
    return cmd_rank(rank_ns, out)


def add_probe_parser(sub: Any) -> None:
    p = sub.add_parser("probe", help="run probes (here with --local) and save their logs")
    p.add_argument("--local", action="store_true", help="probe on this machine (needs probecast[agent])")
    p.add_argument("--headless", action="store_true", help="no app: progress lines, then the ranking")
    p.add_argument("--workload", default="mnist-cnn",
                   choices=("mnist-cnn", "cifar-resnet", "tabular-mlp"))
    p.add_argument("--batch-size", type=int, action="append", default=None,
                   help="batch size (repeatable; default 64)")
    p.add_argument("--out", help="directory for the logs (default ./probecast-logs/<timestamp>/)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--max-steps", type=int, default=None)
    g.add_argument("--target-ci", type=float, default=None)
    g.add_argument("--full", action="store_true")
    p.add_argument("--max-seconds", type=float, default=None)
    p.add_argument("--epochs", type=int, default=None, help="planned epochs N_ep")
    p.add_argument("--train-size", type=int, default=None)
    p.add_argument("--val-size", type=int, default=None)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--instance", default="local", help="instance label (for prices)")
    p.add_argument("--price-per-hour", type=float, default=None)
    p.set_defaults(func=_probe_entry)


def _probe_entry(ns: argparse.Namespace, out: TextIO) -> int:
    if not ns.batch_size:
        ns.batch_size = [64]
    return cmd_probe(ns, out)
