"""Real OpenSSH servers on loopback for end-to-end tests (root and a non-root user)."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
TEST_USER = "pctest"


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
        subprocess.run(["useradd", "-m", "-s", "/bin/sh", TEST_USER], check=True)
    # useradd leaves the account locked ("!"), which sshd refuses without PAM; "*" = no password
    subprocess.run(["usermod", "-p", "*", TEST_USER], check=True)


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


def start_sshd(workdir: Path, address: str, port: int, authorized_keys: str,
               log_level: str = "VERBOSE", host_key_pair: tuple[str, str] | None = None,
               full_tmp: bool = False) -> Sshd:
    """``host_key_pair`` (private, public): serve that key, as cloud-init installs a given one.
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
    )
    log = open(workdir / "sshd.log", "wb")
    argv = [SSHD, "-D", "-e", "-f", str(cfg)]
    if full_tmp:
        fill = ("mount -t tmpfs -o size=64k tmpfs /tmp && "
                "(dd if=/dev/zero of=/tmp/fill bs=4k >/dev/null 2>&1; true) && exec \"$0\" \"$@\"")
        argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c", fill, *argv]
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 10
    import socket

    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"sshd exited: {(workdir / 'sshd.log').read_text()}")
        try:
            with socket.create_connection((address, port), timeout=0.5):
                break
        except OSError:
            time.sleep(0.05)
    else:
        proc.kill()
        raise RuntimeError("sshd did not start listening")
    return Sshd(address, port, workdir, proc, host_key)
