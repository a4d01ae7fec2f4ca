"""Runners: where a probe's events come from. Local subprocess, saved log (replay), SSH (sshrun).

Every runner yields schema-v2 events and RunnerStatus updates through one async iterator, so the
board, the app, the headless CLI and the tests consume live probes and replays the same way.
Live runners append every line to the probe's log file the moment it arrives.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, Union

from ..agent.bundle import local_agent_zip
from ..model.events import End, Event, EventReader
from ..model.logstore import open_log
from .sinks import LogSink, OutputSink, output_path
from .status import STATUSES, RunnerStatus

__all__ = ["STATUSES", "LineBatch", "LocalRunner", "ProbeSpec", "ReplayRunner", "Runner",
           "RunnerItem", "RunnerStatus", "output_path", "workload_label"]

@dataclass(frozen=True, slots=True)
class LineBatch:
    """Many raw log lines at once (a replay at full speed): one hop through the async machinery
    instead of one per event, and the receiver parses them with the fast step path."""

    lines: list[str]


RunnerItem = Union[Event, RunnerStatus, LineBatch]


@dataclass
class ProbeSpec:
    """What to probe: one (host, batch size) pair and how long to probe it."""

    key: str
    label: str
    instance: str = ""
    batch_size: int = 64
    workload: str = "mnist-cnn"
    command: str | None = None  # a user command instead of a built-in workload
    workdir: str | None = None
    epochs: int | None = None
    max_steps: int | None = None
    target_ci: float | None = None
    max_seconds: float | None = None
    min_steady_s: float | None = None
    boundary_budget: float | None = None
    full: bool = False
    price_per_hour: float | None = None
    workload_args: list[str] = field(default_factory=list)
    # [probe] env for the command (never in repr: values may be secrets); secret values are
    # masked in the program's output
    env: dict[str, str] = field(default_factory=dict, repr=False)
    redact: tuple[str, ...] = field(default=(), repr=False)

    def agent_args(self) -> list[str]:
        """Agent command-line arguments (after the agent's entry point)."""
        if self.command:
            head = ["run"]
        else:
            head = ["workload", self.workload, "--batch-size", str(self.batch_size)]
            if self.epochs:
                head += ["--epochs", str(self.epochs)]
            head += list(self.workload_args)
        args = head + ["--probe", self.key]
        if self.instance:
            args += ["--instance", self.instance]
        if self.price_per_hour is not None:
            args += ["--price-per-hour", repr(self.price_per_hour)]
        if self.full:
            args.append("--full")
        if self.max_steps is not None:
            args += ["--max-steps", str(self.max_steps)]
        if self.target_ci is not None:
            args += ["--target-ci", repr(self.target_ci)]
        if self.max_seconds is not None:
            args += ["--max-seconds", repr(self.max_seconds)]
        if self.min_steady_s is not None:
            args += ["--min-steady-seconds", repr(self.min_steady_s)]
        if self.boundary_budget is not None:
            args += ["--boundary-budget", repr(self.boundary_budget)]
        if self.command:
            if self.epochs:
                args += ["--epochs", str(self.epochs)]
            # a command that takes the batch size is labelled by it; one that does not, by its
            # own (its DataLoader's, fit()'s), or none ("?") where the program says none
            if "{batch_size}" in self.command:
                args += ["--batch-size", str(self.batch_size)]
            args += ["--workload-label", workload_label(self.command), "--", *self.command_argv()]
        return args

    def command_argv(self) -> list[str]:
        import shlex

        assert self.command is not None
        return shlex.split(self.command.replace("{batch_size}", str(self.batch_size)))


INTERPRETERS = ("python", "python3", "bash", "sh", "torchrun", "accelerate", "deepspeed", "uv",
                "poetry", "conda", "env")


def workload_label(command: str) -> str:
    """The workload's name in rankings: the command without its interpreter and without the
    batch size (which varies between the probes that rankings compare)."""
    import os
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    scripts = [i for i, w in enumerate(words) if w.endswith((".py", ".sh"))]
    if scripts:  # launchers' own options (torchrun --nproc_per_node 2 ...) are not the job
        words = words[scripts[0]:]
    out: list[str] = []
    for w in words:
        if "{batch_size}" in w:
            if out and out[-1].startswith("-") and "=" not in out[-1]:
                out.pop()  # "--batch-size {batch_size}": the option goes with its value
            continue
        if not out and (os.path.basename(w).split(".")[0].rstrip("0123456789.") in INTERPRETERS
                        or w in ("-m", "run", "launch")):
            continue
        out.append(os.path.basename(w) if not out and "/" in w else w)
    return " ".join(out)[:160] or command[:160]


class Runner(Protocol):
    spec: ProbeSpec

    def stream(self) -> AsyncIterator[RunnerItem]: ...

    async def cancel(self) -> None: ...


class LocalRunner:
    """Runs the agent as a subprocess of this machine (the embedded default: no SSH, no cloud)."""

    def __init__(self, spec: ProbeSpec, log_path: Path | None, python: str | None = None) -> None:
        self.spec = spec
        self.log_path = log_path
        self.python = python or sys.executable
        self._proc: asyncio.subprocess.Process | None = None
        self._cancelled = False

    def command(self) -> list[str]:
        # The same one-file agent that SSH hosts get: it runs under any Python the user names,
        # with nothing of probecast installed there.
        return [self.python, str(local_agent_zip()), *self.spec.agent_args()]

    async def stream(self) -> AsyncIterator[RunnerItem]:
        env = dict(os.environ)
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        env["PYTHONUNBUFFERED"] = "1"
        env.update(self.spec.env)
        sink = LogSink(self.log_path)
        output = OutputSink(self.log_path, self.spec.redact)
        yield RunnerStatus("running", "local")
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self.command(), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                stdin=asyncio.subprocess.DEVNULL, env=env, cwd=self.spec.workdir or None,
                start_new_session=True,  # cancel signals the whole group, not just python
                limit=1 << 20,
            )
        except OSError as exc:
            sink.close()
            yield RunnerStatus("failed", f"cannot start the agent: {exc}")
            return
        proc = self._proc
        assert proc.stdout is not None and proc.stderr is not None

        async def drain_stderr() -> None:  # the program's output: kept, never parsed
            assert proc.stderr is not None
            while chunk := await proc.stderr.read(65536):
                output.write(chunk.decode("utf-8", "replace"))

        err_task = asyncio.create_task(drain_stderr())
        final: RunnerStatus | None = None
        try:
            async for raw in proc.stdout:
                ev = sink.line(raw.decode("utf-8", "replace"))
                if ev is not None:
                    yield ev
                if sink.error is not None:
                    final = sink.failure()  # stopped below (finally): its events cannot be kept
                    break
            else:
                code = await proc.wait()
                await err_task
                output.finish()  # what the mask held back, in the tail too
                final = _final_status(self._cancelled, code, sink.saw_end, list(output.tail),
                                      output.error, sink.end)
        except asyncio.CancelledError:  # probecast itself is stopping (Ctrl-C, quit)
            self._cancelled = True
            raise
        finally:
            if proc.returncode is None:
                await self._kill()
            sink.close(final or RunnerStatus("stopped" if self._cancelled else "failed",
                                             "cancelled" if self._cancelled else "interrupted"))
            output.close()
        yield final

    async def _kill(self) -> None:
        proc = self._proc
        if proc is None or proc.returncode is not None:
            return
        for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                await asyncio.wait_for(proc.wait(), wait)
                return
            except asyncio.TimeoutError:
                continue

    async def cancel(self) -> None:
        self._cancelled = True
        await self._kill()


def _final_status(cancelled: bool, code: int | None, saw_end: bool, stderr_tail: list[str],
                  output_error: str | None = None, end: End | None = None) -> RunnerStatus:
    if cancelled:
        return RunnerStatus("stopped", "cancelled")
    if end is not None and end.status == "does-not-fit":  # an answer: the others go on
        return RunnerStatus("does-not-fit", end.reason or "does not fit")
    if code == 0 and saw_end:
        return RunnerStatus("done", output_error or "")
    tail = " | ".join(stderr_tail[-3:]) if stderr_tail else "no output on stderr"
    if any("No module named 'tensorflow'" in line or "No module named 'keras'" in line
           for line in stderr_tail):
        tail = ("TensorFlow is not installed for the Python that ran the job (on that host, or "
                "the `python` your command names): pip install tensorflow there ('probecast[agent]' "
                "for the built-in workloads), or name the Python that has it | " + tail)
    elif any("No module named 'torch'" in line for line in stderr_tail):
        tail = ("PyTorch is not installed for the Python that ran the job (on that host, or "
                "the `python` your command names): pip install torch there, or name the Python "
                "that has it in the command | " + tail)
    if not saw_end:
        return RunnerStatus("failed", f"agent exited ({code}) without an end event: {tail}")
    return RunnerStatus("failed", f"agent exited with status {code}: {tail}")


class ReplayRunner:
    """A saved log, replayed at the recorded pace x speed (0: as fast as possible).

    ``pause()``/``resume()`` and ``speed`` can change while it plays.
    """

    def __init__(self, spec: ProbeSpec, path: Path, speed: float = 1.0) -> None:
        self.spec = spec
        self.path = path
        self.speed = speed
        self._running = asyncio.Event()
        self._running.set()
        self._cancelled = False

    def pause(self) -> None:
        self._running.clear()

    def resume(self) -> None:
        self._running.set()

    @property
    def paused(self) -> bool:
        return not self._running.is_set()

    async def stream(self) -> AsyncIterator[RunnerItem]:
        reader = EventReader()
        yield RunnerStatus("running", f"replay of {self.path.name}")
        last_t: float | None = None
        saw_end = False
        ran_out = False  # the log's `end` says does-not-fit: its replay ends so too
        try:
            fh = open_log(self.path)  # as `rank` reads it: gzipped logs (the corpus) too
        except OSError as exc:
            yield RunnerStatus("failed", f"cannot read {self.path}: {exc.strerror or exc}")
            return
        with fh:
            if self.speed <= 0:
                # as fast as possible: raw lines in batches, cooperative between them
                while True:
                    lines = fh.readlines(1 << 20)
                    if not lines:
                        break
                    tail = EventReader()  # the log is finished if its last event is a whole `end`
                    ends = [ev for ln in lines[-3:] if isinstance(ev := tail.feed_line(ln), End)]
                    saw_end = saw_end or bool(ends)
                    ran_out = ran_out or any(e.status == "does-not-fit" for e in ends)
                    yield LineBatch(lines)
                    if self._cancelled:
                        yield RunnerStatus("stopped", "cancelled")
                        return
                    if not self._running.is_set():
                        await self._running.wait()
            else:
                for line in fh:
                    if self._cancelled:
                        yield RunnerStatus("stopped", "cancelled")
                        return
                    ev = reader.feed_line(line)
                    if ev is None:
                        continue
                    if last_t is not None and ev.t > last_t:
                        await self._sleep((ev.t - last_t) / self.speed)
                    if not self._running.is_set():
                        await self._running.wait()
                    last_t = ev.t
                    saw_end = saw_end or isinstance(ev, End)
                    ran_out = ran_out or (isinstance(ev, End) and ev.status == "does-not-fit")
                    yield ev
        bad = reader.report.malformed
        note = f"; {len(bad)} malformed line(s) skipped: {reader.report.describe_malformed(1)}" \
            if bad else ""
        if ran_out:
            yield RunnerStatus("does-not-fit", "replayed" + note)
        elif saw_end:
            yield RunnerStatus("done", "replayed" + note)
        else:
            yield RunnerStatus("done", "replayed (log truncated: no end event)" + note)

    async def _sleep(self, seconds: float) -> None:
        # Sleep in slices so a speed change or a pause takes effect promptly.
        remaining = min(seconds, 30.0)
        while remaining > 0 and not self._cancelled:
            chunk = min(remaining, 0.1)
            await asyncio.sleep(chunk)
            remaining -= chunk
            await self._running.wait()

    async def cancel(self) -> None:
        self._cancelled = True
        self._running.set()
