"""An agent killed where no exit path of its own runs (SIGKILL; a host's session torn down)
leaves its channel's directory; the next agent removes those whose agent is gone - its pid runs
no more and nothing listens on its socket - and no other."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

from probecast.core.agent.channel import CHANNEL_PREFIX, EventServer, sweep_stale


def a_dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def channel_dir(parent: Path, pid: int, listening: bool = False) -> tuple[Path, socket.socket]:
    d = Path(tempfile.mkdtemp(prefix=f"{CHANNEL_PREFIX}{pid}-", dir=parent))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(d / "events.sock"))
    if listening:
        sock.listen(1)
    else:
        sock.close()  # what a killed agent leaves: the socket's file, nobody listening
    return d, sock


def test_only_the_channels_of_gone_agents_are_removed() -> None:
    parent = Path(tempfile.mkdtemp(prefix="pc-sweep-", dir="/tmp"))  # (a socket's path is short)
    try:
        dead = a_dead_pid()
        stale, _ = channel_dir(parent, dead)
        empty = Path(tempfile.mkdtemp(prefix=f"{CHANNEL_PREFIX}{dead}-", dir=parent))
        live, _ = channel_dir(parent, os.getpid())  # this process runs
        elsewhere, listener = channel_dir(parent, dead, listening=True)  # (another pid namespace)
        other = parent / "probecast-0123abcd"  # an upload's directory, or anything else
        other.mkdir()
        sweep_stale(str(parent))
        assert not stale.exists() and not empty.exists()
        assert live.exists() and elsewhere.exists() and other.exists()
        listener.close()
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def test_the_server_sweeps_where_it_makes_its_own_and_removes_its_own_on_close() -> None:
    parent = Path(tempfile.mkdtemp(prefix="pc-sweep-", dir="/tmp"))
    old = tempfile.tempdir
    tempfile.tempdir = str(parent)
    try:
        stale, _ = channel_dir(parent, a_dead_pid())
        server = EventServer(lambda cid, text: None)
        mine = Path(server.dir)
        assert not stale.exists()
        assert mine.parent == parent and mine.name.startswith(f"{CHANNEL_PREFIX}{os.getpid()}-")
        server.close()
        assert not mine.exists()
    finally:
        tempfile.tempdir = old
        shutil.rmtree(parent, ignore_errors=True)
