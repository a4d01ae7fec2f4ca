"""Real OpenSSH servers on loopback for end-to-end tests (root and a non-root user).

Every server listens on a port the kernel found free when it started (``start_sshd`` with no
port), never a fixed one: two test suites on one machine - two clones, or one pinned and one
not - each get their own, and a test that needs distinct hosts still gets distinct loopback
addresses (127.0.0.0/8 is all loopback on Linux)."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
TEST_USER = "pctest"
# Every session these servers start carries this suite's mark in its environment (sshd's SetEnv):
# an agent of ours is told from another suite's on this machine even after its session died.
SUITE_VAR = "PROBECAST_TEST_SUITE"
SUITE = f"{os.getpid()}-{time.time_ns()}"


def available() -> str | None:
    """None when real-sshd tests can run here, else why not."""
    if not os.path.exists(SSHD):
        return "OpenSSH sshd not installed (apt-get install openssh-server; .ci/run does)"
    if os.geteuid() != 0:
        return "real-sshd tests start sshd and a test user: they need root"
    return None


def ensure_test_user() -> None:
    try:
        pwd.getpwnam(TEST_USER)
    except KeyError:
        made = subprocess.run(["useradd", "-m", "-s", "/bin/sh", TEST_USER], check=False,
                              capture_output=True, text=True)
        if made.returncode != 0:  # another suite on this machine made it first: fine
            time.sleep(1)  # (useradd holds /etc/passwd's lock while it writes)
            pwd.getpwnam(TEST_USER)
    # useradd leaves the account locked ("!"), which sshd refuses without PAM; "*" = no password
    subprocess.run(["usermod", "-p", "*", TEST_USER], check=True)


def free_port(*addresses: str) -> int:
    """A TCP port nothing is bound to on any of ``addresses`` now: the kernel picks one on the
    first address (bind to port 0), the others are tried with it. Free now, not reserved:
    ``start_sshd`` tries another when sshd finds it taken."""
    for _ in range(100):
        with socket.socket() as first:
            first.bind((addresses[0], 0))
            port: int = first.getsockname()[1]
            if all(_bindable(a, port) for a in addresses[1:]):
                return port
    raise RuntimeError(f"no port free on all of {addresses}")


def _bindable(address: str, port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((address, port))
        except OSError:
            return False
    return True


def refusing_port(address: str, port: int = 0) -> socket.socket:
    """A socket bound to ``port`` of ``address`` (0: one the kernel picks) that never listens:
    while it is open nothing else can listen there, so a connection to it is refused (a host
    that is down) - on any machine, whatever else runs on it."""
    s = socket.socket()
    s.bind((address, port))
    return s


def keygen(path: Path) -> Path:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    return path


@dataclass
class Sshd:
    address: str
    port: int
    workdir: Path
    proc: subprocess.Popen[bytes]
    host_key: Path

    @property
    def log(self) -> str:
        return (self.workdir / "sshd.log").read_text(errors="replace")

    def known_hosts_line(self) -> str:
        pub = (self.host_key.with_suffix(".pub")).read_text().split()
        return f"[{self.address}]:{self.port} {pub[0]} {pub[1]}\n"

    def session_pids(self) -> list[int]:
        """Per-connection sshd processes (children of the listener)."""
        out = subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True, text=True)
        return [int(p) for p in out.stdout.split()]

    def signal_sessions(self, sig: int) -> None:
        for pid in self.session_pids():
            # the session's own children (privsep) too
            kids = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
            for k in [pid, *map(int, kids)]:
                try:
                    os.kill(k, sig)
                except ProcessLookupError:
                    pass

    def stop(self) -> None:
        self.signal_sessions(signal.SIGCONT)
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def start_sshd(workdir: Path, address: str, port: int | None, authorized_keys: str,
               log_level: str = "VERBOSE", host_key_pair: tuple[str, str] | None = None,
               full_tmp: bool = False) -> Sshd:
    """An sshd on ``address``: on ``port``, or (None) on a free port, trying another if one was
    taken between the look and sshd's bind (another suite on this machine).
    ``host_key_pair`` (private, public): serve that key, as cloud-init installs a given one.
    ``full_tmp``: the server (and every session it starts) sees a /tmp that is full - a tmpfs
    filled to the last byte in a mount namespace of its own; the rest of this machine is as it
    was. ``workdir`` must then be outside /tmp."""
    workdir.mkdir(parents=True, exist_ok=True)
    os.chmod(workdir, 0o755)
    Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege-separation directory
    if host_key_pair is None:
        host_key = keygen(workdir / "host_ed25519")
    else:
        host_key = workdir / "host_ed25519"
        host_key.write_text(host_key_pair[0])
        os.chmod(host_key, 0o600)
        host_key.with_suffix(".pub").write_text(host_key_pair[1] + "\n")
    ak = workdir / "authorized_keys"
    ak.write_text(authorized_keys)
    os.chmod(ak, 0o644)
    tries = 1 if port is not None else 20
    for _ in range(tries):
        listen_port = port if port is not None else free_port(address)
        proc = _launch(workdir, address, listen_port, host_key, ak, log_level, full_tmp)
        if _wait_listening(proc, workdir, address, listen_port):
            return Sshd(address, listen_port, workdir, proc, host_key)
    raise RuntimeError(f"sshd could not bind {address} after {tries} port(s): "
                       f"{(workdir / 'sshd.log').read_text(errors='replace')}")


def _launch(workdir: Path, address: str, port: int, host_key: Path, ak: Path, log_level: str,
            full_tmp: bool) -> subprocess.Popen[bytes]:
    cfg = workdir / "sshd_config"
    cfg.write_text(
        f"ListenAddress {address}:{port}\n"
        f"HostKey {host_key}\n"
        f"PidFile {workdir}/sshd.pid\n"
        f"AuthorizedKeysFile {ak}\n"
        "StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        "PermitRootLogin prohibit-password\nAllowTcpForwarding yes\n"
        "Subsystem sftp internal-sftp\n"
        f"LogLevel {log_level}\nMaxStartups 50\nMaxSessions 50\n"
        f"SetEnv {SUITE_VAR}={SUITE}\n"
    )
    log = open(workdir / "sshd.log", "wb")
    argv = [SSHD, "-D", "-e", "-f", str(cfg)]
    if full_tmp:
        fill = ("mount -t tmpfs -o size=64k tmpfs /tmp && "
                "(dd if=/dev/zero of=/tmp/fill bs=4k >/dev/null 2>&1; true) && exec \"$0\" \"$@\"")
        argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c", fill, *argv]
    return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)


BIND_FAILED = ("Address already in use", "Cannot bind any address")


def _wait_listening(proc: subprocess.Popen[bytes], workdir: Path, address: str,
                    port: int) -> bool:
    """True once this sshd listens; False when it could not bind (the port was taken). Its own
    log says so ("Server listening on"): a connection alone could reach another process that
    holds the port while ours is still starting."""
    says = f"Server listening on {address} port {port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        log = (workdir / "sshd.log").read_text(errors="replace")
        if proc.poll() is not None:
            if any(m in log for m in BIND_FAILED):
                return False
            raise RuntimeError(f"sshd exited: {log}")
        if says in log or not _logs_info(log_level_of(workdir)):
            try:
                with socket.create_connection((address, port), timeout=0.5):
                    return True
            except OSError:
                pass
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"sshd did not start listening on {address}:{port}")


def log_level_of(workdir: Path) -> str:
    for line in (workdir / "sshd_config").read_text().splitlines():
        if line.startswith("LogLevel "):
            return line.split()[1]
    return "INFO"


def _logs_info(level: str) -> bool:
    """Whether sshd at this LogLevel writes its "Server listening" line."""
    return level.upper() not in ("QUIET", "FATAL", "ERROR")


def our_processes(text: str, user: str | None = None) -> list[str]:
    """``pid args`` of the processes this suite's servers started (their sessions, and what
    those left running) whose command line holds ``text``, run by ``user`` if given - not
    another suite's on this machine, though it runs the same agent as the same user."""
    want_uid = pwd.getpwnam(user).pw_uid if user is not None else None
    mark = f"{SUITE_VAR}={SUITE}".encode()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            args = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if text not in args or (want_uid is not None and proc.stat().st_uid != want_uid):
                continue
            if mark in (proc / "environ").read_bytes().split(b"\0"):
                found.append(f"{proc.name} {args.strip()}")
        except OSError:  # it ended while we looked
            continue
    return found
