"""The agent's command line. Runs on the probe host with the stdlib and a DL framework only.

    python3 -m probecast.core.agent workload mnist-cnn --batch-size 256 --max-steps 40
    python3 -m probecast.core.agent run --target-ci 0.02 -- python train.py --lr 0.1
    python3 probecast-agent.pyz run --full --out run.jsonl -- python train.py

Events go to stdout (one flushed line each) and to --out if given; diagnostics go to stderr.
Whatever happens - the script raises, is interrupted or never trains - an `end` is written.
"""

from __future__ import annotations

import argparse
import os
import runpy
import signal
import sys
import traceback
from typing import Any

from .emit import Emitter, ProbeCancelled
from .policy import StopPolicy
from . import session as session_module
from .session import ProbeMeta, ProbeSession

def add_stop_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("when to stop")
    g.add_argument("--max-steps", type=int, default=None,
                   help="stop after N training steps (default 30 unless --target-ci/--max-seconds)")
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
    m = p.add_argument_group("what to record")
    m.add_argument("--out", help="also append the events to this file")
    m.add_argument("--probe", default="", help="probe id (default: random)")
    m.add_argument("--instance", default="", help="instance type label for the log")
    m.add_argument("--host-label", default="", help="host label (default: hostname)")
    m.add_argument("--price-per-hour", type=float, default=None)
    m.add_argument("--sample-interval", type=float, default=1.0,
                   help="hardware sample period in seconds (0: off)")
    m.add_argument("--watch-stdin", action="store_true",
                   help="stop when stdin closes (the SSH channel went away); kill the process "
                        "group if the training does not stop within 10 s")


def make_policy(ns: argparse.Namespace) -> StopPolicy:
    max_steps = ns.max_steps
    if max_steps is None and ns.target_ci is None and ns.max_seconds is None:
        max_steps = 30
    return StopPolicy(max_steps=max_steps, max_seconds=ns.max_seconds, target_ci=ns.target_ci,
                      min_steps=ns.min_steps, full=ns.full, boundary_budget=ns.boundary_budget)


def _install_signal_handlers(emitter: Emitter) -> None:
    def cancel(signum: int, frame: Any) -> None:
        name = signal.Signals(signum).name
        if emitter.critical:
            emitter.pending_cancel = name  # raised right after the line is written
        else:
            raise ProbeCancelled(name)

    # SIGPIPE stays ignored (Python's default): a vanished reader shows up as a write error.
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        try:
            signal.signal(sig, cancel)
        except (ValueError, OSError):  # not the main thread / not supported
            pass


def _watch_stdin(grace: float = 10.0) -> None:
    """Run by probecast over SSH: EOF on stdin means "stop". Works for root logins too, where
    OpenSSH ignores signal requests: the channel closing is what we react to."""
    import threading
    import time

    try:
        os.setsid()  # our own process group, so the last resort takes DataLoader workers too
    except OSError:
        pass  # already a group leader (sshd made us one)

    def watch() -> None:
        try:
            # os.read, not sys.stdin: a daemon thread blocked in a buffered read makes the
            # interpreter abort at exit ("could not acquire lock ... at interpreter shutdown").
            while os.read(0, 65536):
                pass
        except OSError:
            pass
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(grace)
        try:
            os.killpg(os.getpgrp(), signal.SIGKILL)
        finally:
            os._exit(137)

    threading.Thread(target=watch, name="probecast-stdin-watch", daemon=True).start()


def _run_guarded(session: ProbeSession, body: Any) -> int:
    """Run the training body; always finish the session with an honest status."""
    try:
        body()
    except SystemExit as exc:
        code = exc.code
        if not session.ended:
            if code in (0, None):
                _finish_normally(session)
            else:
                session.finish("failed", f"script exited with status {code}")
        return code if isinstance(code, int) else (0 if code is None else 1)
    except ProbeCancelled as exc:
        session.finish("stopped", f"cancelled by {exc}")
        return 130
    except BaseException as exc:  # noqa: BLE001 - the user's script may raise anything
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        session.finish("failed", last)
        traceback.print_exc(file=sys.stderr)
        return 1
    _finish_normally(session)
    return 0


def _finish_normally(session: ProbeSession) -> None:
    if session.ended:
        return
    if not session.started:
        session.finish("failed", "the script finished without training (no Keras fit or StepTimer seen)")
    elif session.stop_requested:
        session.finish("probe-done", session.policy.reason)
    else:
        session.finish("complete")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="probecast-agent", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_run = sub.add_parser("run", help="probe an unchanged training script: run -- python train.py ARGS")
    add_stop_arguments(p_run)
    p_run.add_argument("--workload-label", default="", help="workload name for the log")
    p_run.add_argument("--batch-size", type=int, default=None,
                       help="batch size for the log when fit() cannot tell (tf.data input)")
    p_run.add_argument("--epochs", type=int, default=None, help="planned epochs for the log")
    p_run.add_argument("command", nargs=argparse.REMAINDER, help="-- python train.py ARGS")
    from .workloads import add_workload_arguments

    p_wl = sub.add_parser("workload", help="run a built-in workload")
    add_workload_arguments(p_wl)
    add_stop_arguments(p_wl)
    ns = parser.parse_args(argv)

    emitter = Emitter(path=ns.out)
    meta = ProbeMeta(probe=ns.probe, instance=ns.instance, host=ns.host_label,
                     price_per_hour=ns.price_per_hour)
    session = ProbeSession(emitter, make_policy(ns), meta, sample_interval=ns.sample_interval or None)
    session_module.CURRENT = session
    _install_signal_handlers(emitter)
    if ns.watch_stdin:
        _watch_stdin()

    from .keras_probe import KerasHook, install_import_hook

    hook = KerasHook(session, val_batches=ns.val_batches)
    if ns.cmd == "workload":
        from .workloads import WorkloadConfig, run_workload

        cfg = WorkloadConfig(
            name=ns.name, batch_size=ns.batch_size, epochs=ns.epochs, train_size=ns.train_size,
            val_size=ns.val_size, seed=ns.seed, noise=ns.noise, threads=ns.threads, gpus=ns.gpus,
            pipeline=ns.pipeline, learning_rate=ns.learning_rate, explicit_steps=ns.explicit_steps,
            autotune=ns.autotune,
        )
        meta.workload = cfg.name
        meta.batch_size = cfg.batch_size
        meta.epochs = cfg.epochs
        meta.extra = {"train_size": cfg.train_size, "val_size": cfg.val_size,
                      "threads": cfg.threads, "pipeline": cfg.pipeline,
                      "explicit_steps": cfg.explicit_steps, "autotune": cfg.autotune}

        def body() -> None:
            install_import_hook(hook)
            run_workload(cfg)
    else:
        command = list(ns.command)
        if command and command[0] == "--":
            command = command[1:]
        if not command:
            parser.error("run needs a command: run -- python train.py ARGS")
        if os.path.basename(command[0]).startswith("python"):
            command = command[1:]
        if not command:
            parser.error("run needs a script or -m module after python")
        meta.workload = ns.workload_label or " ".join(command)[:120]
        meta.batch_size = ns.batch_size
        meta.epochs = ns.epochs

        def body() -> None:
            install_import_hook(hook)
            if command[0] == "-m":
                sys.argv = [command[1], *command[2:]]
                runpy.run_module(command[1], run_name="__main__", alter_sys=True)
            else:
                sys.argv = list(command)
                script_dir = os.path.dirname(os.path.abspath(command[0]))
                sys.path.insert(0, script_dir)
                runpy.run_path(command[0], run_name="__main__")

    code = _run_guarded(session, body)
    emitter.close()
    return code
