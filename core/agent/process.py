"""The agent's launcher: runs the user's command as it is, as a child, with the hook in every
Python process it starts, and relays the hook's events - and only those - to probecast.

    command ──▶ child process group (any launcher: python, python -m, bash, torchrun, …)
                 │  PYTHONPATH starts with the agent zip: its sitecustomize installs the hook
                 │  PROBECAST_EVENTS names a Unix socket: events go there, never to stdout
                 ▼
    agent ◀── events (socket) ── relayed to stdout and --out, one flushed line each
          ◀── the program's stdout+stderr (one pipe) ── copied whole to stderr / --output

The agent owns the clock (``t`` = seconds since the agent started; `init` says its own share)
and the last word: after the program exits it writes ``end`` with the program's exit status, so
the time from the end of training to the exit - the program's own post-training work - is measured.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import IO, Any

from . import limits, memory
from .channel import ENV_SOCKET, ENV_SPAWN, EventServer
from .emit import Emitter
from .looked_for import NO_STEP, no_step_help

ENV_CONFIG = "PROBECAST_CONFIG"
ENV_T0 = "PROBECAST_T0"

@dataclass
class LaunchOptions:
    command: list[str]
    hook_config: dict[str, Any] = field(default_factory=dict)  # read by the hook (policy, meta)
    first_step_timeout: float = 300.0  # no training step by then: stop, say what was looked for
    post_budget: float = 600.0  # seconds the program may run after training before it is stopped
    grace: float = 10.0  # cancel: seconds between asking the hook to stop and SIGTERM/SIGKILL
    output: str | None = None  # also append the program's output to this file
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)


def hook_path() -> str:
    """A zip holding sitecustomize.py and the agent package, for the child's PYTHONPATH."""
    here = os.path.dirname(os.path.abspath(__file__))
    outer = os.path.dirname(here)
    if os.path.isfile(outer) and outer.endswith((".pyz", ".zip")):  # running from the agent zip
        return outer
    from .bundle import local_agent_zip  # running from a source tree or an installed package

    return str(local_agent_zip())


class Launcher:
    def __init__(self, emitter: Emitter, opts: LaunchOptions) -> None:
        self.emitter = emitter
        self.opts = opts
        self.lead: int | None = None  # the connection whose training is the probe's
        self.lead_started = False
        self.done: dict[str, Any] | None = None
        self.others_trained: set[int] = set()
        self.cancel_reason: str | None = None
        self.post_cut = False
        self.loop_ended_at: float | None = None  # the probe ended a loop, no phase began since:
        self.phases = 1  # the post-training budget's start where `done` comes at the exit only
        self.output_tail: deque[str] = deque(maxlen=40)
        # hook failures (any process, often before anything trained): said once each, after start
        self.hook_failures: set[str] = set()
        self.pending_logs: list[str] = []
        self.proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self.memory = memory.GroupWatch()  # the program's processes' memory, from outside
        self.oom_before: dict[str, int] = {}  # the kernel's OOM-kill counters at the launch
        self.hook_memory: dict[str, Any] = {}  # the lead's latest `memory` event (its device)
        self.own_cid: int | None = None  # the first process the hook was set up in, and
        self.own_s = 0.0  # the agent's own start-up in it (taken off a run with no step)

    # ---- events from the hooks -------------------------------------------------------------

    def on_line(self, cid: int, line: str) -> None:
        try:
            obj = json.loads(line)
        except ValueError:
            return  # not ours; the hook only writes JSON lines
        if not isinstance(obj, dict):
            return
        with self._lock:
            ev = obj.get("ev")
            if ev in ("own", "hello"):  # a process's agent start-up; it imported a framework
                own = obj.get("own_s")
                if isinstance(own, (int, float)) and self.own_cid in (None, cid):
                    self.own_cid, self.own_s = cid, float(own)  # the command's own process
                if ev == "hello":  # named if nothing trains
                    self.frameworks.add(str(obj.get("framework")))
                return
            if ev == "log" and obj.get("code") == "hook-failed":
                self._hook_failed(line, str(obj.get("msg", "")))
                return
            if self.lead is None and ev == "start" and not obj.get("rank"):
                self.lead = cid  # the first process to train; of a distributed job, rank 0
            if cid != self.lead:
                if ev == "start":
                    self.others_trained.add(cid)
                return
            if ev == "start":
                self.lead_started = True
            if "dt" in obj and isinstance(obj.get("t"), (int, float)):
                self.emitter.sync_timed(float(obj["t"]))
            if ev == "memory":
                self.hook_memory = obj
            if ev == "done":
                self.done = obj
                self._wake.set()
            if ev == "log" and obj.get("code") == "phase":
                self.loop_ended_at = time.monotonic()
            elif ev == "phase":  # training went on (a fit()'s `done` ended the last phase only)
                self.loop_ended_at, self.done, self.phases = None, None, self.phases + 1
            self.emitter.write_line(line)
            if ev == "start":
                self._flush_pending()
        if ev == "done" and obj.get("status") == "probe-done":
            self.server.send("stop")  # other processes of the job stop with the lead

    def _hook_failed(self, line: str, msg: str) -> None:
        """A process could not hook its framework: the log says so once (every rank of a job
        says the same), after `start` - which may come from another process, or at the end."""
        if msg in self.hook_failures:
            return
        self.hook_failures.add(msg)
        if self.lead_started or self.emitter.started:
            self.emitter.write_line(line)
        else:
            self.pending_logs.append(line)

    def _flush_pending(self) -> None:
        for line in self.pending_logs:
            self.emitter.write_line(line)
        self.pending_logs.clear()

    # ---- the run ---------------------------------------------------------------------------

    def run(self) -> int:
        self.server = EventServer(self.on_line)
        self.frameworks: set[str] = set()  # imported by the program's processes (hello lines)
        try:
            return self._run()
        finally:
            self.server.close()

    def _child_env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.opts.env)
        hook = hook_path()
        env["PYTHONPATH"] = hook + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env[ENV_SOCKET] = self.server.path
        env[ENV_T0] = repr(self.emitter.t0)
        env[ENV_CONFIG] = json.dumps(self.opts.hook_config)
        env.setdefault("PYTHONUNBUFFERED", "1")
        return {**env, ENV_SPAWN: repr(time.monotonic())}  # the last thing before it starts

    def _run(self) -> int:
        try:
            self.proc = subprocess.Popen(
                self.opts.command, cwd=self.opts.cwd or None, env=self._child_env(),
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                start_new_session=True)  # its own group: a stop reaches every process it starts
        except OSError as exc:
            self._start_if_needed()
            self.emitter.end("failed", f"cannot start {self.opts.command[0]!r}: "
                                       f"{exc.strerror or exc}")
            return 127
        self.oom_before = limits.oom_kills()
        relay = threading.Thread(target=self._relay_output, name="probecast-output", daemon=True)
        relay.start()
        code = self._supervise()
        relay.join(timeout=5)
        self.server.drain(timeout=5)  # its processes' last lines, before the `end` they precede
        return self._finish(code)

    def _supervise(self) -> int | None:
        """Wait for the program; stop it on cancel, on the first-step timeout, past the post
        budget. Returns its exit status (None when it had to be killed)."""
        proc = self.proc
        assert proc is not None
        launched = time.monotonic()
        done_at: float | None = None
        phases = self.phases
        while True:
            try:
                return proc.wait(timeout=0.2)
            except subprocess.TimeoutExpired:
                pass
            try:
                self.memory.poll(proc.pid)
            except Exception:  # noqa: BLE001 - a reading that fails must not end the probe
                pass
            now = time.monotonic()
            if self.emitter.orphaned and self.cancel_reason is None:
                self.cancel_reason = "reader gone (stdout closed)"
            if self.cancel_reason is not None:
                return self._stop(self.cancel_reason)
            if not self.lead_started and now - launched > self.opts.first_step_timeout:
                self.cancel_reason = "first-step timeout"
                self._stop("first-step timeout")
                return None
            if phases != self.phases:  # a phase began since that `done`: the budget waits again
                phases, done_at = self.phases, None
            if self.done is not None and done_at is None:
                done_at = now
            ended = done_at if done_at is not None else self.loop_ended_at
            if ended is not None and now - ended > self.opts.post_budget:
                self.post_cut = True
                self._stop("post-training budget")
                return None

    def _stop(self, why: str) -> int | None:
        """Ask the hooks to stop (clean: `end` keeps its meaning), then the group, harder."""
        proc = self.proc
        assert proc is not None
        self.server.send("cancel")
        for sig, wait in ((None, min(3.0, self.opts.grace)), (signal.SIGTERM, self.opts.grace),
                          (signal.SIGKILL, 5.0)):
            if sig is not None:
                try:
                    os.killpg(proc.pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
            try:
                proc.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
        return None

    def cancel(self, reason: str) -> None:
        """From a signal handler or the stdin watcher: stop the program, end as stopped."""
        if self.cancel_reason is None:
            self.cancel_reason = reason

    def _relay_output(self) -> None:
        """The program's output, byte for byte, to our stderr (and --output); a tail is kept
        for the failure message. Never parsed."""
        proc = self.proc
        assert proc is not None and proc.stdout is not None
        sink: IO[bytes] | None = None
        if self.opts.output:
            os.makedirs(os.path.dirname(os.path.abspath(self.opts.output)), exist_ok=True)
            sink = open(self.opts.output, "ab")
        err = getattr(sys.stderr, "buffer", None)
        partial = b""
        try:
            while True:
                chunk = proc.stdout.read1(65536) if hasattr(proc.stdout, "read1") \
                    else proc.stdout.read(65536)
                if not chunk:
                    break
                for out in (err, sink):
                    if out is None:
                        continue
                    try:
                        out.write(chunk)
                        out.flush()
                    except (OSError, ValueError):
                        pass  # our reader is gone; the program must not block on its output
                partial += chunk
                *lines, partial = partial.replace(b"\r", b"\n").split(b"\n")
                for line in lines:
                    text = line.decode("utf-8", "replace").strip()
                    if text:
                        self.output_tail.append(text[:300])
                partial = partial[-4096:]
        finally:
            if partial.strip():
                self.output_tail.append(partial.decode("utf-8", "replace").strip()[:300])
            if sink is not None:
                sink.close()

    # ---- the last word ---------------------------------------------------------------------

    def _start_if_needed(self) -> None:
        if not self.lead_started:
            self.emitter.fallback_start()
        with self._lock:
            self._flush_pending()

    def _tail(self, n: int = 3) -> str:
        lines = [line for line in self.output_tail if line]
        return " | ".join(lines[-n:]) if lines else "no output"

    def _say_memory(self) -> dict[str, Any]:
        fields = memory.merged(self.hook_memory, self.memory)
        self.emitter.emit("memory", **fields)
        return fields

    def _does_not_fit(self, code: int | None, done: dict[str, Any] | None) -> bool:
        """The program ran out of memory: its own error said so (the hook's `done`), or it was
        killed by a signal where the OOM killer or a memory limit shows, or it failed saying
        an allocation failed. Then the log ends `does-not-fit`, with the memory it reached."""
        said = done is not None and done.get("status") == "does-not-fit"
        if done is not None and not said:
            return False  # training ended; what failed after it is not this batch size's fit
        if said:
            assert done is not None
            reason = str(done.get("reason") or "")
        else:
            why = memory.killed_by_memory(code, self.oom_before, limits.oom_kills(), self.memory)
            said_so = memory.oom_in_output(self.output_tail) if code not in (0, None) else None
            if why is not None and said_so:
                why += f"; its output: {said_so}"
            why = why or said_so
            if why is None:
                return False
            self._start_if_needed()
            fields = self._say_memory()
            m = self.opts.hook_config.get("meta", {})
            reason = memory.does_not_fit_reason(m.get("batch_size"), fields, why)
            self.emitter.log("error", reason, code="out-of-memory")
        if said:
            self._say_memory()
        self.emitter.end("does-not-fit", reason, exit_code=code)
        return True

    def _finish(self, code: int | None) -> int:
        if self.others_trained:
            self.emitter.log("info", f"{len(self.others_trained)} other process(es) trained too; "
                                     "the one timed is rank 0 of a distributed job, else the "
                                     "first to train (the others stopped with it)",
                             code="multi-process")
        done = self.done
        if self.cancel_reason == "first-step timeout":
            self._start_if_needed()
            seen = self.server.connections
            where = (f"{seen} Python process(es) started with the hook, none trained"
                     if seen else "no Python process started with the hook (python -I, or not "
                                  "Python?)")
            self.emitter.end("failed", f"no training step within {self.opts.first_step_timeout:g}s"
                                       f" ({where}); {no_step_help(self.frameworks)}")
            return 124
        if self.cancel_reason is not None:
            self._start_if_needed()
            self.emitter.end("stopped", f"cancelled by {self.cancel_reason}")
            return 130
        if self._does_not_fit(code, done):
            return 0
        if self.lead_started:
            self._say_memory()
        if done is None and self.lead_started and self.post_cut and self.loop_ended_at:
            # cut after the probe ended its last loop: training was over then (not at the exit)
            self.emitter.timed("done", at=self.loop_ended_at, status="probe-done",
                               reason="the probe ended the training loop")
            done = {"status": "probe-done", "reason": "the probe ended the training loop"}
        if done is None and self.lead_started:  # trained, never said when training ended
            if code == 0:
                self.emitter.end("complete", "training ran to the program's exit",
                                 exit_code=code)
                return 0
            self.emitter.end("failed", f"the program exited with status {code}: {self._tail()}",
                             exit_code=code)
            return code or 1
        if done is None:
            return self._no_training(code)
        status = str(done.get("status") or "probe-done")
        reason = str(done.get("reason") or "")
        if self.post_cut:
            reason += (f"; post-training work stopped after {self.opts.post_budget:g}s "
                       "(its time is at least that)")
            self.emitter.end(status, reason.lstrip("; "))
            return 0
        if code not in (0, None) and status in ("probe-done", "complete"):
            reason += f"; then the program exited with status {code}: {self._tail()}"
        self.emitter.end(status, reason.lstrip("; "), exit_code=code)
        return 0 if status in ("probe-done", "complete") else (code or 1)

    def _no_training(self, code: int | None) -> int:
        """The program exited and no training step was found in it: a failure where it failed;
        else nothing was timed, but it ran to its exit under the probe (hand-written tensor
        updates, no backward pass) - that run, launch to exit, is its time here."""
        self._start_if_needed()
        if code != 0:
            self.emitter.end("failed", f"the program exited with status {code}: {self._tail()}",
                             exit_code=code)
            return code or 1
        self.emitter.log("warning", "no training step found: " + no_step_help(self.frameworks)
                         + "; the program ran to its exit under the probe: its run is the "
                         "answer", code=NO_STEP)
        self.emitter.end("complete", "the program ran to its exit; no training step found",
                         exit_code=code, agent_s=self.own_s)
        return 0
