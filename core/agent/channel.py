"""The event channel between the user's processes and the agent: a Unix socket of its own.

Events never share a stream with the user's program. The agent listens on a socket in a private
directory and names it in ``PROBECAST_EVENTS``; the hook inside every Python process the command
starts connects to it, sends one JSON line per event and receives commands (``stop``) back. The
program's stdout and stderr - progress bars, prints, C-level logging - go elsewhere, whole.
"""

from __future__ import annotations

import os
import socket
import tempfile
import threading
from collections.abc import Callable

ENV_SOCKET = "PROBECAST_EVENTS"


class EventServer:
    """The agent's end: accepts any number of processes, hands each line to ``on_line``."""

    def __init__(self, on_line: Callable[[int, str], None],
                 on_close: Callable[[int], None] | None = None) -> None:
        self.dir = tempfile.mkdtemp(prefix="probecast-")  # 0700: nobody else can connect
        self.path = os.path.join(self.dir, "events.sock")
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(self.path)
        self._sock.listen(64)
        self._on_line = on_line
        self._on_close = on_close
        self._conns: dict[int, socket.socket] = {}
        self._lock = threading.Lock()
        self._next = 0
        self._closed = False
        threading.Thread(target=self._accept, name="probecast-events", daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with self._lock:
                cid = self._next
                self._next += 1
                self._conns[cid] = conn
            threading.Thread(target=self._read, args=(cid, conn), daemon=True,
                             name=f"probecast-events-{cid}").start()

    def _read(self, cid: int, conn: socket.socket) -> None:
        pending = b""
        try:
            while True:
                data = conn.recv(65536)
                if not data:
                    break
                pending += data
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    if line.strip():
                        self._on_line(cid, line.decode("utf-8", "replace"))
        except OSError:
            pass
        finally:
            with self._lock:
                self._conns.pop(cid, None)
            if self._on_close is not None:
                self._on_close(cid)

    @property
    def connections(self) -> int:
        return self._next

    def send(self, line: str, only: int | None = None) -> None:
        """A command to every connected process (or one): ``stop``."""
        with self._lock:
            targets = [c for cid, c in self._conns.items() if only is None or cid == only]
        for c in targets:
            try:
                c.sendall(line.encode() + b"\n")
            except OSError:
                pass

    def close(self) -> None:
        self._closed = True
        try:
            self._sock.close()
        except OSError:
            pass
        with self._lock:
            conns = list(self._conns.values())
        for c in conns:
            try:
                c.close()
            except OSError:
                pass
        for name in (self.path,):
            try:
                os.unlink(name)
            except OSError:
                pass
        try:
            os.rmdir(self.dir)
        except OSError:
            pass


class EventClient:
    """The hook's end, inside the user's process: a file-like writer plus incoming commands."""

    def __init__(self, path: str, on_command: Callable[[str], None]) -> None:
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.connect(path)
        self._lock = threading.Lock()
        self._on_command = on_command
        threading.Thread(target=self._listen, name="probecast-commands", daemon=True).start()

    def _listen(self) -> None:
        pending = b""
        try:
            while True:
                data = self._sock.recv(4096)
                if not data:
                    return
                pending += data
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    self._on_command(line.decode().strip())
        except OSError:
            return

    # the Emitter writes through this (write + flush, like a text file)
    def write(self, text: str) -> int:
        with self._lock:
            self._sock.sendall(text.encode("utf-8"))
        return len(text)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        try:
            self._sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
