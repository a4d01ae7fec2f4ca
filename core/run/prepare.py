"""Before a host's first probe: its copy of the project and its setup - once per host per session.

A ``Preparation`` is what every host of a session gets (from ``[probe] project, setup, env``);
a ``HostPrep`` is one host's, shared by all of that host's probes: the first probe to need it
starts it, the others wait for the same result, and a failure fails only that host's probes.
The work runs in a task of its own over a connection of its own, so a cancelled probe does not
cancel it for the others. ``finish()`` removes the host's copy at the end of the session
(unless kept).

Beside the logs: ``<host>.project.json`` (what was sent), ``<host>.setup.output`` (setup's
stdout and stderr) and ``<host>.setup.json`` (its command, exit status, wall time). Values of
``env`` are never written anywhere; those read from this machine's environment are masked in the
outputs.
"""

from __future__ import annotations

import asyncio
import codecs
import json
import logging
import os
import re
import shlex
import signal
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .config import Host, ProbeSettings, resolve_env
from .project import DEFAULT_EXCLUDE, LocalProject, ProjectError, scan_project
from .project_copy import Shipped, release, ship
from .runners import ProbeSpec
from .sinks import OutputSink
from .status import RunnerStatus

log = logging.getLogger("probecast.prepare")
TAIL_LINES = 3


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


@dataclass
class Preparation:
    """What every host of a session gets before its first probe."""

    project: Path | None
    log_dir: Path
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    limit_mb: float = 200.0
    keep: bool = False
    setup: str | None = None
    setup_timeout: float = 1800.0
    workdir: str | None = None  # with a project: relative to its copy
    env: dict[str, str] = field(default_factory=dict, repr=False)
    secrets: tuple[str, ...] = field(default=(), repr=False)
    _scanned: LocalProject | None = field(default=None, init=False, repr=False)
    _scan_lock: asyncio.Lock | None = field(default=None, init=False, repr=False)

    @classmethod
    def from_settings(cls, settings: ProbeSettings, log_dir: Path) -> Preparation | None:
        """None when there is nothing to prepare (no project, no setup, no env)."""
        if settings.project is None and settings.setup is None and not settings.env:
            return None
        env, secrets = resolve_env(settings.env)
        exclude = [*DEFAULT_EXCLUDE, *settings.exclude]
        project = Path(settings.project).expanduser().resolve() if settings.project else None
        if project is not None:
            try:  # the session's own logs, should they be inside the project
                exclude.append(log_dir.resolve().relative_to(project).as_posix())
            except ValueError:
                pass
        return cls(project, log_dir, tuple(exclude), settings.project_limit_mb,
                   settings.keep_project, settings.setup, settings.setup_timeout,
                   settings.workdir, env, secrets)

    def scan(self) -> LocalProject:
        """The project's files and manifest (ProjectError when it cannot go: over the limit)."""
        assert self.project is not None
        if self._scanned is None:
            self._scanned = scan_project(self.project, self.exclude, self.limit_mb)
        return self._scanned

    async def scanned(self) -> LocalProject:
        """``scan`` once for every host of the session, off the event loop."""
        if self._scan_lock is None:
            self._scan_lock = asyncio.Lock()
        async with self._scan_lock:
            if self._scanned is None:
                await asyncio.to_thread(self.scan)
        assert self._scanned is not None
        return self._scanned

    def workdir_in(self, base: str | None) -> str | None:
        """Where setup and the command run: the workdir inside the project's copy, or as set."""
        if base is None:
            return self.workdir
        return f"{base}/{self.workdir}" if self.workdir else base


@dataclass
class Prepared:
    """A prepared host: what its probes need to know."""

    workdir: str | None
    env: dict[str, str] = field(repr=False)
    redact: tuple[str, ...] = field(repr=False)

    def apply(self, spec: ProbeSpec) -> ProbeSpec:
        return replace(spec, workdir=self.workdir, env=dict(self.env), redact=self.redact)


class PrepError(Exception):
    """A preparation that failed, phrased for the probe's status."""


class HostPrep:
    """One host's preparation, shared by its probes (a per-host future)."""

    def __init__(self, host: Host, prep: Preparation, hosts: dict[str, Host] | None = None
                 ) -> None:
        self.host = host
        self.prep = prep
        self.hosts = hosts or {}
        self.token = f"{uuid.uuid4().hex[:12]}-{_safe(host.name)}"[:60]
        self.prepared: Prepared | None = None
        self.error: str | None = None
        self.shipped: Shipped | None = None
        self.setup_s: float | None = None
        self._project: LocalProject | None = None
        self._statuses: list[RunnerStatus] = []
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._finished = False

    # ---- what probes see -------------------------------------------------------------------

    @property
    def done(self) -> bool:
        return self._task is not None and self._task.done()

    async def watch(self) -> AsyncIterator[RunnerStatus]:
        """Start the preparation if no probe has yet; yield its statuses until it is over.
        Then ``prepared`` (or ``error``) holds the outcome."""
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())
        seen = 0
        while True:
            changed = self._changed
            while seen < len(self._statuses):
                yield self._statuses[seen]
                seen += 1
            if self._task.done():
                return
            await changed.wait()

    def _say(self, status: str, detail: str) -> None:
        self._statuses.append(RunnerStatus(status, detail))
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def _run(self) -> None:
        try:
            if self.host.kind == "local":
                await self._prepare_local()
            else:
                await self._prepare_ssh()
        except PrepError as exc:
            self.error = str(exc)
        except ProjectError as exc:
            self.error = str(exc)
        except asyncio.CancelledError:
            self.error = "preparation cancelled"
            raise
        except Exception as exc:  # noqa: BLE001 - becomes this host's probes' status
            self.error = f"preparing {self.host.name} failed: {type(exc).__name__}: {exc}"
        finally:
            if self.error:  # the probes' status says it; -v logs it too
                log.info("%s: %s", self.host.name, self.error)
            self._say("failed" if self.error else "running", self.error or "prepared")

    # ---- this machine ----------------------------------------------------------------------

    async def _prepare_local(self) -> None:
        """Local probes use the project in place: nothing is copied."""
        prep = self.prep
        base = str(prep.project) if prep.project is not None else None
        if prep.project is not None:
            self._write_json("project", {"host": self.host.name, "project": base,
                                         "copied": False, "workdir": prep.workdir_in(base),
                                         "note": "local probes run in the project in place"})
        workdir = prep.workdir_in(base)
        if prep.setup:
            await self._setup_local(prep.setup, os.path.expanduser(workdir) if workdir else None)
        self.prepared = Prepared(workdir, prep.env, prep.secrets)

    async def _setup_local(self, command: str, cwd: str | None) -> None:
        env = {**os.environ, **self.prep.env}
        self._say("running", f"setup: {command}")
        output = self._setup_sink()
        started = time.monotonic()
        proc = await asyncio.create_subprocess_exec(
            "/bin/sh", "-c", command, cwd=cwd, env=env, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            start_new_session=True)
        assert proc.stdout is not None
        code: int | None = None
        try:
            async def pump() -> None:
                assert proc.stdout is not None
                text = codecs.getincrementaldecoder("utf-8")(errors="replace")
                while chunk := await proc.stdout.read(65536):
                    output.write(text.decode(chunk))
                output.write(text.decode(b"", final=True))

            await asyncio.wait_for(pump(), self.prep.setup_timeout)
            code = await proc.wait()
        except asyncio.TimeoutError:
            pass
        finally:
            if proc.returncode is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                await proc.wait()
            output.close()
        self._setup_result(command, cwd, code, time.monotonic() - started, output)

    # ---- over SSH --------------------------------------------------------------------------

    async def _prepare_ssh(self) -> None:
        from .ssh import connect, describe_ssh_error

        prep = self.prep
        self._say("connecting", f"{self.host.address} (preparing the host)")
        try:
            conn = await connect(self.host, self.hosts)
        except Exception as exc:  # noqa: BLE001 - said as the probes' status
            raise PrepError(describe_ssh_error(exc, self.host)) from None
        try:
            base: str | None = None
            if prep.project is not None:
                base = await self._ship(conn)
            workdir = prep.workdir_in(base)
            if prep.setup:
                await self._setup_ssh(conn, prep.setup, workdir)
            self.prepared = Prepared(workdir, prep.env, prep.secrets)
        except (PrepError, ProjectError):
            raise
        except Exception as exc:  # noqa: BLE001 - the connection failed under us
            raise PrepError(f"preparing {self.host.name}: {describe_ssh_error(exc, self.host)}") \
                from None
        finally:
            conn.close()
            try:
                await asyncio.wait_for(conn.wait_closed(), 5)
            except Exception:  # noqa: BLE001 - it is closing anyway
                pass

    async def _ship(self, conn: Any) -> str:
        project = await self.prep.scanned()
        self._project = project
        self._say("uploading", f"{project.describe()} -> {self.host.name}")
        log.info("%s: %s", self.host.name, project.describe())
        shipped = await ship(conn, self.host.python, project, self.token)
        self.shipped = shipped
        log.info("%s: %s (%s)", self.host.name, shipped.describe(), shipped.remote_dir)
        self._say("uploading", f"project on {self.host.name}: {shipped.describe()}")
        self._write_json("project", {
            "host": self.host.name, "project": str(project.root), "source": project.source,
            "digest": project.digest, "remote_dir": shipped.remote_dir, "files": shipped.files,
            "bytes": shipped.bytes, "sent_files": shipped.sent_files,
            "sent_bytes": shipped.sent_bytes, "removed_files": shipped.removed_files,
            "updated_from": shipped.seeded_from, "seconds": round(shipped.seconds, 3),
            "scan_seconds": round(project.scan_s, 3), "keep": self.prep.keep,
            "notes": shipped.notes})
        return shipped.remote_dir

    async def _setup_ssh(self, conn: Any, command: str, workdir: str | None) -> None:
        import asyncssh

        from .ssh import ENV_PRELUDE, cd_command, env_line

        env = self.prep.env
        remote = (f"{ENV_PRELUDE if env else ''}{cd_command(workdir)}"
                  f"exec /bin/sh -c {shlex.quote(command)} </dev/null 2>&1")
        self._say("running", f"setup on {self.host.name}: {command}")
        output = self._setup_sink()
        started = time.monotonic()
        code: int | None = None
        proc = await conn.create_process(remote, encoding="utf-8", errors="replace")
        try:
            if env:
                proc.stdin.write(env_line(env).decode())
            proc.stdin.write_eof()

            async def pump() -> None:
                while chunk := await proc.stdout.read(65536):
                    output.write(chunk)

            await asyncio.wait_for(pump(), self.prep.setup_timeout)
            await proc.wait_closed()
            code = proc.exit_status
        except asyncio.TimeoutError:
            try:
                proc.terminate()
            except (asyncssh.Error, OSError):
                pass
            proc.close()
        finally:
            output.close()
        self._setup_result(command, workdir, code, time.monotonic() - started, output)

    # ---- setup's record --------------------------------------------------------------------

    def _setup_sink(self) -> OutputSink:
        return OutputSink(None, self.prep.secrets,
                          path=self.prep.log_dir / f"{_safe(self.host.name)}.setup.output")

    def _setup_result(self, command: str, cwd: str | None, code: int | None, seconds: float,
                      output: OutputSink) -> None:
        self.setup_s = seconds
        where = output.path.name if output.path is not None else "(not kept)"
        self._write_json("setup", {
            "host": self.host.name, "command": command, "cwd": cwd, "exit_status": code,
            "seconds": round(seconds, 3), "timed_out": code is None,
            "env": sorted(self.prep.env), "output": where})
        log.info("%s: setup %s in %.1fs (output: %s)", self.host.name,
                 "ok" if code == 0 else f"failed ({code})", seconds, where)
        if code == 0:
            self._say("running", f"setup on {self.host.name} done in {seconds:.1f}s")
            return
        tail = " | ".join(list(output.tail)[-TAIL_LINES:]) or "no output"
        why = (f"timed out after {self.prep.setup_timeout:g}s (probe.setup_timeout)"
               if code is None else f"exit {code} after {seconds:.1f}s")
        raise PrepError(f"setup failed on {self.host.name} ({why}): {tail} - "
                        f"output: {output.path or 'not kept'}")

    def _write_json(self, kind: str, data: dict[str, Any]) -> None:
        path = self.prep.log_dir / f"{_safe(self.host.name)}.{kind}.json"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        except OSError as exc:  # the record is a convenience: the probes go on
            log.warning("cannot write %s: %s", path, exc.strerror or exc)

    # ---- the end of the session ------------------------------------------------------------

    async def finish(self, timeout: float = 30.0) -> None:
        """Stop a preparation still under way; drop this session's hold on the host's copy
        (removed unless kept, or another session is using it)."""
        if self._finished:
            return
        self._finished = True
        if self._task is not None and not self._task.done():
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001
                pass
        if self.shipped is None or self._project is None:
            return
        from .ssh import connect

        try:
            conn = await asyncio.wait_for(connect(self.host, self.hosts), timeout)
            try:
                removed = await asyncio.wait_for(
                    release(conn, self.host.python, self._project, self.token, self.prep.keep),
                    timeout)
            finally:
                conn.close()
            log.info("%s: project copy %s %s", self.host.name, self.shipped.remote_dir,
                     "removed" if removed else "kept")
        except Exception as exc:  # noqa: BLE001 - best effort: the host may be gone
            log.warning("%s: could not release the project copy %s: %s", self.host.name,
                        self.shipped.remote_dir, exc)

    def summary(self) -> str:
        """One line for the end of a headless run."""
        parts = []
        if self.shipped is not None:
            parts.append(self.shipped.describe())
        if self.setup_s is not None:
            parts.append(f"setup {self.setup_s:.1f}s")
        if self.error:
            parts.append("failed (its probes say why)")
        return f"{self.host.name}: " + ("; ".join(parts) or "prepared")
