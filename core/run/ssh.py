"""SshRunner: a probe on a remote host over asyncssh, bastions included.

Host keys are verified against known_hosts (unknown keys are refused with a message saying how to
trust them). The agent goes up by SFTP into a per-run temp dir, runs with ``--watch-stdin`` so it
stops when the channel closes (OpenSSH ignores signal requests for root logins, so signals alone
cannot be relied on), and the temp dir is removed afterwards. Every stdout line is appended to the
local log the moment it arrives.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import logging
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path
from typing import Any

import asyncssh

from ..agent.bundle import zipapp_bytes
from .config import Host
from .runners import ProbeSpec, RunnerItem, RunnerStatus, _final_status
from .sinks import LogSink, OutputSink

KEEPALIVE_COUNT = 3
log = logging.getLogger("probecast.ssh")


class SshProbeError(Exception):
    """A failure phrased for the user (the runner reports it as the probe's status)."""


# Environment variables ([probe] env) reach the remote command through its stdin, never its
# command line (which any user of the host can read in ps): the first line of stdin holds
# `export NAME='value'` lines as octal escapes, which the shell reads, decodes and evaluates
# before it execs the command (`read` takes that line alone: the rest of stdin is the agent's).
ENV_PRELUDE = ('IFS= read -r __probecast_env && eval "$(printf "$__probecast_env")" && '
               'unset __probecast_env && ')


def env_line(env: dict[str, str]) -> bytes:
    """The stdin line that ENV_PRELUDE turns into exported variables."""
    script = "".join(f"export {name}={shlex.quote(value)}\n" for name, value in env.items())
    return ("".join(f"\\{b:03o}" for b in script.encode()) + "\n").encode()


def cd_command(workdir: str | None) -> str:
    """``cd`` into workdir (``~`` is the remote user's home), quoted; empty without one."""
    if not workdir:
        return ""
    if workdir == "~" or workdir.startswith("~/"):
        rest = workdir[2:]
        return 'cd "$HOME"' + (f"/{shlex.quote(rest)}" if rest else "") + " && "
    return f"cd {shlex.quote(workdir)} && "


def remote_command(python: str, agent_path: str, args: list[str], workdir: str | None,
                   env_on_stdin: bool = False) -> str:
    """The remote shell command. Every value is quoted: no injection from config values."""
    # --watch-stdin belongs to the subcommand (run/workload), before any "-- user command"
    own = agent_path.rsplit("/", 1)[0]  # the agent removes its directory when it exits
    run = " ".join(shlex.quote(a) for a in [python, agent_path, args[0], "--watch-stdin",
                                             "--own-dir", own, *args[1:]])
    return f"{ENV_PRELUDE if env_on_stdin else ''}{cd_command(workdir)}exec {run}"


def describe_ssh_error(exc: BaseException, host: Host) -> str:
    where = f"{host.user + '@' if host.user else ''}{host.address}:{host.port or 22}"
    if isinstance(exc, SshProbeError):
        return str(exc)
    if isinstance(exc, asyncssh.HostKeyNotVerifiable):
        return (f"unknown host key for {where} - check it, then add it to "
                f"{host.known_hosts or '~/.ssh/known_hosts'} (ssh-keyscan -p {host.port or 22} "
                f"{host.address}), or set accept_new_host_key = true for host {host.name!r} to "
                "trust a key never seen before on first contact")
    if isinstance(exc, asyncssh.PermissionDenied):
        return (f"authentication failed for {where}: the key was refused"
                + (f" (identity_file {host.identity_file})" if host.identity_file else
                   " (no identity_file; ssh-agent and ~/.ssh keys tried)"))
    if isinstance(exc, asyncssh.ConnectionLost):
        return f"connection to {where} lost: {exc.reason or exc}"
    if isinstance(exc, asyncssh.DisconnectError):
        return f"{where} disconnected: {exc.reason or exc}"
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return f"{where} did not answer within {host.connect_timeout:g}s (host down or filtered?)"
    if isinstance(exc, ConnectionRefusedError):
        return f"{where} refused the connection (no SSH server on that port?)"
    if isinstance(exc, OSError):
        return f"cannot reach {where}: {exc.strerror or exc}"
    return f"{where}: {type(exc).__name__}: {exc}"


async def _trust_new_host_key(host: Host, known_hosts: Path, tunnel: Any) -> None:
    """accept_new_host_key: fetch the server's key and record it (trust on first use)."""
    key = await asyncio.wait_for(
        asyncssh.get_server_host_key(host.address, host.port or 22,
                                     tunnel=tunnel if tunnel is not None else ()),
        host.connect_timeout)
    if key is None:
        raise SshProbeError(f"{host.address} offered no host key")
    known_hosts.parent.mkdir(parents=True, exist_ok=True)
    name = host.address if not host.port or host.port == 22 else f"[{host.address}]:{host.port}"
    with open(known_hosts, "a") as fh:
        fh.write(f"{name} {key.export_public_key().decode().strip()}\n")


def _known_keys(known: Path, host: Host) -> list[Any]:
    """The keys known_hosts already holds for this host (hashed entries included)."""
    if not known.exists():
        return []
    try:
        entries = asyncssh.read_known_hosts(str(known))
        trusted = entries.match(host.address, "", host.port or 22)[0]
    except (OSError, ValueError, asyncssh.Error):
        return []
    return list(trusted)


async def _changed_key_message(host: Host, known: Path, known_keys: list[Any], tunnel: Any) -> str:
    where = host.address if not host.port or host.port == 22 else f"[{host.address}]:{host.port}"
    try:
        offered = await asyncio.wait_for(asyncssh.get_server_host_key(
            host.address, host.port or 22, tunnel=tunnel if tunnel is not None else ()),
            host.connect_timeout)
        now = offered.get_fingerprint() if offered is not None else "none"
    except (OSError, asyncssh.Error, asyncio.TimeoutError):
        now = "unknown (could not fetch it again)"
    was = ", ".join(k.get_fingerprint() for k in known_keys)
    return (f"HOST KEY CHANGED for {where}: {known} has {was}, the server now offers {now}. "
            "Someone may be intercepting the connection; probecast will not connect "
            f"(accept_new_host_key trusts only keys never seen). If the change is legitimate "
            f"(the host was rebuilt), remove the old key: ssh-keygen -R '{where}' -f {known}")


def _known_hosts_path(host: Host) -> Path:
    return Path(os.path.expanduser(host.known_hosts or "~/.ssh/known_hosts"))


async def connect(host: Host, hosts: dict[str, Host] | None = None, tunnel: Any = None) -> Any:
    """Open an SSH connection to host, through its jump host if it has one."""
    if tunnel is None and host.jump:
        jump = (hosts or {}).get(host.jump) or Host(name=host.jump, address=host.jump)
        tunnel = await connect(jump, hosts)
    known = _known_hosts_path(host)
    options: dict[str, Any] = {
        # no file: trust nothing, so an unknown host is refused, never accepted silently
        "known_hosts": str(known) if known.exists() else asyncssh.import_known_hosts(""),
        "keepalive_interval": host.keepalive_interval,
        "keepalive_count_max": KEEPALIVE_COUNT,
        "connect_timeout": host.connect_timeout,
        "login_timeout": host.connect_timeout,
    }
    if host.port:
        options["port"] = host.port
    if host.user:
        options["username"] = host.user
    if host.identity_file:
        key = os.path.expanduser(host.identity_file)
        if not os.path.isfile(key):
            raise SshProbeError(f"identity_file {host.identity_file} of host {host.name!r}: no "
                                "such file (check the path in the config)")
        options["client_keys"] = [key]
    if tunnel is not None:
        options["tunnel"] = tunnel
    try:
        return await asyncssh.connect(host.address, **options)
    except asyncssh.HostKeyNotVerifiable:
        known_keys = _known_keys(known, host)
        if known_keys:  # a CHANGED key is refused whatever the config says
            raise SshProbeError(await _changed_key_message(host, known, known_keys, tunnel)) \
                from None
        if not host.accept_new_host_key:
            raise
        await _trust_new_host_key(host, known, tunnel)  # a key never seen: trust on first use
        options["known_hosts"] = str(known)
        return await asyncssh.connect(host.address, **options)


class SshRunner:
    def __init__(self, host: Host, spec: ProbeSpec, log_path: Path | None,
                 hosts: dict[str, Host] | None = None) -> None:
        self.host = host
        self.spec = spec
        self.log_path = log_path
        self.hosts = hosts or {}
        self._process: Any = None
        self._conn: Any = None
        self._cancelled = False
        self.remote_dir: str | None = None
        self.upload_note = ""  # where the agent went when the first choice failed, and why

    async def stream(self) -> AsyncIterator[RunnerItem]:
        sink = LogSink(self.log_path)
        output = OutputSink(self.log_path, self.spec.redact)
        yield RunnerStatus("connecting", self.host.address)
        try:
            self._conn = await connect(self.host, self.hosts)
        except Exception as exc:  # noqa: BLE001 - every failure becomes this probe's status
            sink.close()
            yield RunnerStatus("failed", describe_ssh_error(exc, self.host))
            return
        conn = self._conn
        try:
            yield RunnerStatus("uploading", "agent")
            try:
                agent = await self._upload(conn)
            except (asyncssh.Error, OSError) as exc:
                yield RunnerStatus("failed", f"upload to {self.host.address} failed: {exc}")
                return
            cmd = remote_command(self.host.python, agent, self.spec.agent_args(), self.spec.workdir,
                                 env_on_stdin=bool(self.spec.env))
            yield RunnerStatus("running", self.host.name + (f" ({self.upload_note})"
                                                            if self.upload_note else ""))
            self._process = await conn.create_process(cmd, encoding="utf-8", errors="replace")
            proc = self._process
            if self.spec.env:
                proc.stdin.write(env_line(self.spec.env).decode())
            async with contextlib.aclosing(self._relay(proc, sink, output)) as relay:
                async for item in relay:  # closed with this stream, whatever ends it
                    yield item
        except asyncio.CancelledError:  # probecast itself is stopping (Ctrl-C, quit)
            self._cancelled = True
            raise
        finally:
            sink.close(RunnerStatus("stopped" if self._cancelled else "failed",
                                    "cancelled" if self._cancelled else "interrupted"))
            output.close()
            await self._cleanup()

    async def _relay(self, proc: Any, sink: LogSink, output: OutputSink
                     ) -> AsyncGenerator[RunnerItem, None]:
        """The agent's events as they come, then this probe's final status (written to the log)."""
        code: int | None = None
        err_task = asyncio.create_task(self._drain(proc.stderr, output))
        try:
            async for line in proc.stdout:
                ev = sink.line(line)
                if ev is not None:
                    yield ev
                if sink.error is not None:  # disk full here: stop it, nothing more is kept
                    failed = sink.failure()
                    sink.close(failed)
                    yield failed
                    return
            # EOF: a partial last line (no newline) was delivered above and counted malformed
            await proc.wait_closed()
            code = proc.exit_status
        except (asyncssh.Error, OSError) as exc:
            lost = RunnerStatus("failed", describe_ssh_error(exc, self.host)
                                + f" after {sink.reader.report.events} events (kept in the log)")
            sink.close(lost)
            yield lost
            return
        finally:
            try:  # the rest of the program's output, briefly
                await asyncio.wait_for(err_task, 2)
            except (asyncio.TimeoutError, asyncssh.Error, OSError):
                err_task.cancel()
        output.finish()  # what the mask held back, in the tail too
        final = _final_status(self._cancelled, code, sink.saw_end, list(output.tail),
                              output.error, sink.end)
        sink.close(final)
        yield final

    @staticmethod
    async def _drain(stream: Any, output: OutputSink) -> None:
        """The program's output (the channel's stderr): kept whole beside the log."""
        try:
            while chunk := await stream.read(65536):
                output.write(chunk)
        except (asyncssh.Error, OSError):
            pass

    async def _upload(self, conn: Any) -> str:
        """The agent into a fresh directory: /tmp, else ~/.cache/probecast, else /var/tmp (a full
        or read-only /tmp is said, not fatal), through the exec channel (mkdir + cat: no SFTP). Stale
        directories of earlier sessions (over a day old, ours) are swept first."""
        await self._sweep(conn)
        data = zipapp_bytes()
        name = f"probecast-{uuid.uuid4().hex[:12]}"
        problems: list[str] = []
        for base in ("/tmp", "$HOME/.cache/probecast", "/var/tmp"):
            d = f"{base}/{name}"
            path = f"{d}/probecast-agent.pyz"
            quoted = f'"{d}"' if base.startswith("$HOME") else shlex.quote(d)
            target = f'"{path}"' if base.startswith("$HOME") else shlex.quote(path)
            r = await conn.run(f"mkdir -p {quoted} && chmod 700 {quoted} && cat > {target} && "
                               f"echo {quoted}", input=data, encoding=None, check=False)
            if r.exit_status == 0:
                self.remote_dir = r.stdout.decode().strip()
                if problems:
                    self.upload_note = f"agent in {self.remote_dir}: " + "; ".join(problems)
                    log.info("%s: agent uploaded to %s (%s)", self.host.name, self.remote_dir,
                             "; ".join(problems))
                return f"{self.remote_dir}/probecast-agent.pyz"
            why = (r.stderr or b"").decode("utf-8", "replace").strip().splitlines()
            problems.append(f"{base}: {why[-1] if why else f'exit {r.exit_status}'}")
            await conn.run(f"rm -rf {quoted}", check=False)
        raise SshProbeError("cannot write the agent on the host: " + "; ".join(problems))

    @staticmethod
    async def _sweep(conn: Any, min_age_minutes: int = 10) -> None:
        """Directories left by earlier sessions whose agent died without cleaning up (kill -9,
        host reboot): ours, older than ``min_age_minutes``, and with no agent running from them
        - a concurrent session's directory is never touched."""
        await conn.run(
            'h=[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]; '
            'for d in /tmp/probecast-$h /var/tmp/probecast-$h "$HOME"/.cache/probecast/probecast-$h; '
            'do '
            '[ -d "$d" ] && [ -O "$d" ] || continue; '
            f'[ -n "$(find "$d" -maxdepth 0 -mmin +{int(min_age_minutes)})" ] || continue; '
            'pgrep -f "$d/probecast-agent[.]pyz" >/dev/null 2>&1 && continue; '
            'rm -rf "$d"; done; true', check=False)

    async def _cleanup(self) -> None:
        conn = self._conn
        if conn is None:
            return
        try:
            if self.remote_dir:
                # The agent stops on EOF; this takes care of anything it left (and of a hung run).
                # "[.]" keeps the pattern from matching this very shell's command line.
                d = shlex.quote(self.remote_dir)
                pattern = shlex.quote(f"{self.remote_dir}/probecast-agent[.]pyz")
                await asyncio.wait_for(conn.run(
                    f"pkill -TERM -f {pattern} 2>/dev/null; sleep 0.2; "
                    f"pkill -KILL -f {pattern} 2>/dev/null; rm -rf {d}", check=False), 15)
        except (asyncssh.Error, OSError, asyncio.TimeoutError):
            pass
        finally:
            conn.close()
            try:
                await asyncio.wait_for(conn.wait_closed(), 5)
            except (asyncio.TimeoutError, asyncssh.Error, OSError):
                pass
            self._conn = None

    async def cancel(self) -> None:
        self._cancelled = True
        proc = self._process
        if proc is not None:
            try:
                proc.stdin.write_eof()  # the agent's --watch-stdin turns this into a clean stop
            except (asyncssh.Error, OSError, BrokenPipeError):
                pass
            try:
                await asyncio.wait_for(proc.wait_closed(), 15)
            except (asyncio.TimeoutError, asyncssh.Error, OSError):
                proc.close()
