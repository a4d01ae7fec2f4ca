"""The agent's command line. Runs on the probe host with the stdlib and a DL framework only.

    python3 -m probecast.core.agent run --target-ci 0.02 -- python train.py --lr 0.1
    python3 probecast-agent.pyz run --max-steps 30 -- bash run.sh
    python3 probecast-agent.pyz run -- torchrun --nproc_per_node 2 train.py
    python3 -m probecast.core.agent workload mnist-cnn --batch-size 256 --max-steps 40

The command runs as it is, in a process group of its own; every Python process it starts gets
the hook (the agent zip's sitecustomize). Events go to stdout (one flushed line each; nothing
else is ever written there) and to --out; the program's own output goes to stderr and --output.
Whatever happens - the program raises, is interrupted or never trains - an `end` is written.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from . import leftovers
from .emit import Emitter
from .policy import DEFAULT_MAX_STEPS, DEFAULT_MIN_STEADY_S, probe_length, steady_floor
from .process import LaunchOptions, Launcher


def add_stop_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("when to stop")
    g.add_argument("--max-steps", type=int, default=None,
                   help=f"stop after N training steps (default {DEFAULT_MAX_STEPS} unless "
                        "--target-ci/--max-seconds/--full)")
    g.add_argument("--min-steady-seconds", type=float, default=None, metavar="S",
                   help="past --max-steps, go on until the steady steps add up to S seconds (up to "
                        f"100x the steps; default {DEFAULT_MIN_STEADY_S:g} with the default step "
                        "limit, else 0: a given step count is kept)")
    g.add_argument("--max-seconds", type=float, default=None, help="stop after S seconds of training")
    g.add_argument("--target-ci", type=float, default=None,
                   help="stop once the step time's 95%% CI half-width is within X (e.g. 0.02)")
    g.add_argument("--min-steps", type=int, default=10, help="steps before --target-ci may stop")
    g.add_argument("--full", action="store_true", help="run the whole training (no early stop)")
    g.add_argument("--boundary-budget", type=float, default=30.0,
                   help="after enough steps, go on up to S seconds to reach the next epoch and time "
                        "one epoch boundary (0: never; default 30)")
    g.add_argument("--val-batches", type=int, default=5,
                   help="validation batches per timed pass after an early stop")
    g.add_argument("--first-step-timeout", type=float, default=300.0,
                   help="stop the program if no training step is seen within S seconds (default 300)")
    g.add_argument("--post-budget", type=float, default=600.0,
                   help="seconds the program may run after training (its post-training work) "
                        "before it is stopped (default 600)")
    m = p.add_argument_group("what to record")
    m.add_argument("--out", help="also append the events to this file")
    m.add_argument("--output", help="also append the program's own output (stdout+stderr) here")
    m.add_argument("--probe", default="", help="probe id (default: random)")
    m.add_argument("--instance", default="", help="instance type label for the log")
    m.add_argument("--host-label", default="", help="host label (default: hostname)")
    m.add_argument("--price-per-hour", type=float, default=None, help="price for the log")
    m.add_argument("--sample-interval", type=float, default=1.0,
                   help="hardware sample period in seconds (0: off)")
    m.add_argument("--watch-stdin", action="store_true",
                   help="stop when stdin closes (the SSH channel went away)")
    m.add_argument("--own-dir", default=None,
                   help="a probecast-* directory to remove when the agent exits (its upload)")


def policy_config(ns: argparse.Namespace) -> dict[str, Any]:
    floor = steady_floor(ns.max_steps, ns.target_ci, ns.max_seconds, ns.full, ns.min_steady_seconds)
    max_steps = probe_length(ns.max_steps, ns.target_ci, ns.max_seconds, ns.full)
    return {"max_steps": max_steps, "max_seconds": ns.max_seconds, "target_ci": ns.target_ci,
            "min_steady_s": floor,
            "min_steps": ns.min_steps, "full": ns.full,
            "boundary_budget": 0.0 if ns.full else ns.boundary_budget}


def _watch_stdin(launcher: Launcher, grace: float) -> None:
    """Run by probecast over SSH: EOF on stdin means "stop" (OpenSSH ignores signal requests for
    root logins; the channel closing is what we react to)."""

    def watch() -> None:
        try:
            # os.read, not sys.stdin: a daemon thread blocked in a buffered read makes the
            # interpreter abort at exit.
            while os.read(0, 65536):
                pass
        except OSError:
            pass
        launcher.cancel("reader gone (stdin closed)")
        time.sleep(grace + 15)
        os._exit(137)  # last resort: the launcher did not manage to stop in time

    threading.Thread(target=watch, name="probecast-stdin-watch", daemon=True).start()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="probecast-agent", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_run = sub.add_parser("run", help="probe a command, unchanged: run -- CMD ARGS")
    add_stop_arguments(p_run)
    p_run.add_argument("--workload-label", default="", help="workload name for the log")
    p_run.add_argument("--batch-size", type=int, default=None,
                       help="batch size for the log (the value the command was given)")
    p_run.add_argument("--epochs", type=int, default=None, help="planned epochs for the log")
    p_run.add_argument("--steps-per-epoch", type=int, default=None,
                       help="N_it for custom loops that iterate no tf.data dataset of known size")
    p_run.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD ARGS")
    from .workloads import add_workload_arguments

    p_wl = sub.add_parser("workload", help="run a built-in workload")
    add_workload_arguments(p_wl)
    add_stop_arguments(p_wl)
    return parser


def _workload_command(ns: argparse.Namespace, meta: dict[str, Any]) -> list[str]:
    """The built-in workload as a command of its own; its settings go into the log's meta."""
    meta.update(workload=ns.name, batch_size=ns.batch_size, epochs=ns.epochs,
                extra={"train_size": ns.train_size, "val_size": ns.val_size,
                       "threads": ns.threads, "pipeline": ns.pipeline,
                       "explicit_steps": ns.explicit_steps, "autotune": ns.autotune})
    return [sys.executable, "-m", "probecast_agent.workloads", ns.name,
            "--batch-size", str(ns.batch_size), "--epochs", str(ns.epochs),
            "--train-size", str(ns.train_size), "--val-size", str(ns.val_size),
            "--seed", str(ns.seed), "--noise", str(ns.noise), "--threads", str(ns.threads),
            "--gpus", str(ns.gpus), "--pipeline", ns.pipeline,
            *(["--lr", str(ns.learning_rate)] if ns.learning_rate is not None else []),
            *([] if ns.autotune else ["--no-autotune"]),
            *(["--explicit-steps"] if ns.explicit_steps else [])]


def _user_command(ns: argparse.Namespace, meta: dict[str, Any],
                  parser: argparse.ArgumentParser) -> list[str]:
    """The user's own command (after `--`), unchanged."""
    command = list(ns.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        parser.error("run needs a command: run -- python train.py ARGS")
    meta.update(workload=ns.workload_label or " ".join(command)[:200],
                batch_size=ns.batch_size, epochs=ns.epochs)
    return command


def _launcher(ns: argparse.Namespace, command: list[str], meta: dict[str, Any],
              emitter: Emitter) -> Launcher:
    emitter.meta = {k: v for k, v in {**meta, "steps_per_epoch": 0, "val_steps": 0, "devices": [],
                                      "batch_size": meta.get("batch_size")
                                      }.items() if v is not None and k != "extra"}
    opts = LaunchOptions(
        command=command,
        hook_config={"policy": policy_config(ns), "meta": meta, "val_batches": ns.val_batches,
                     "sample_interval": ns.sample_interval or None,
                     "steps_per_epoch": getattr(ns, "steps_per_epoch", None)},
        first_step_timeout=ns.first_step_timeout, post_budget=ns.post_budget,
        output=ns.output)
    launcher = Launcher(emitter, opts)
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        try:
            signal.signal(sig, lambda s, f: launcher.cancel(signal.Signals(s).name))
        except (ValueError, OSError):
            pass
    if ns.watch_stdin:
        _watch_stdin(launcher, opts.grace)
    return launcher


def main(argv: list[str] | None = None) -> int:
    since = time.time()  # a file the program writes is modified after this
    parser = _parser()
    ns = parser.parse_args(argv)
    meta: dict[str, Any] = {"probe": ns.probe, "instance": ns.instance, "host": ns.host_label,
                            "price_per_hour": ns.price_per_hour}
    command = (_workload_command(ns, meta) if ns.cmd == "workload"
               else _user_command(ns, meta, parser))
    emitter = Emitter(path=ns.out)
    if ns.cmd == "run" and not leftovers.inside(os.getcwd(), ns.own_dir):
        emitter.before_end = _left_files(os.getcwd(), since, (ns.out, ns.output))
    try:
        code = _launcher(ns, command, meta, emitter).run()
    finally:
        emitter.close()
        _remove_own_dir(ns.own_dir)
    return code


def _left_files(cwd: str, since: float,
                own: tuple[str | None, ...]) -> Callable[[str], tuple[str, str] | None]:
    """What the probe says before its end when it stopped the program: the files the program
    wrote in its folder meanwhile (leftovers.py). A run to its end leaves what a plain run
    does; a probe's own copy of a project (--own-dir) is removed after."""
    def check(status: str) -> tuple[str, str] | None:
        if status not in ("probe-done", "stopped"):
            return None
        paths, whole = leftovers.written_since(cwd, since, own)
        return (leftovers.LEFT_FILES, leftovers.describe(paths, whole)) if paths else None

    return check


def _remove_own_dir(path: str | None) -> None:
    """Whatever ended the probe, the host keeps nothing of it (only probecast-* directories)."""
    if path and os.path.basename(os.path.normpath(path)).startswith("probecast-"):
        import shutil

        shutil.rmtree(path, ignore_errors=True)
