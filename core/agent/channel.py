"""The event channel between the user's processes and the agent: a Unix socket of its own.

Events never share a stream with the user's program. The agent listens on a socket in a private
directory and names it in ``PROBECAST_EVENTS``; the hook inside every Python process the command
starts connects to it, sends one JSON line per event and receives commands (``stop``) back. The
program's stdout and stderr - progress bars, prints, C-level logging - go elsewhere, whole.
"""

from __future__ import annotations

import os
import select
import socket
import tempfile
import threading
import time
from collections.abc import Callable

ENV_SOCKET = "PROBECAST_EVENTS"
ENV_SPAWN = "PROBECAST_SPAWN"  # when the launcher started the command: its own time is before
STEP_PREFIX = b'{"ev":"step",'  # how the Emitter writes a step event (ev first, no spaces)
STEP_BATCH = 0.05  # s a step event may wait to be sent with others (live views draw at 4-10 Hz)
STEP_LINES = 256  # ... or until this many wait


CHANNEL_PREFIX = "probecast-events-"  # the channel's private directory: + its agent's pid


def sweep_stale(parent: str) -> None:
    """Remove the channel directories agents that were killed left (SIGKILL, a host's session
    torn down: no exit path of theirs ran) - those of this user whose agent is gone: its pid
    does not run here, and nothing listens on its socket (a pid namespace of its own)."""
    try:
        names = [n for n in os.listdir(parent) if n.startswith(CHANNEL_PREFIX)]
    except OSError:
        return
    for name in names:
        pid, path = name[len(CHANNEL_PREFIX):].partition("-")[0], os.path.join(parent, name)
        try:
            if not pid.isdigit() or os.lstat(path).st_uid != os.getuid() or _runs(int(pid)):
                continue
            sock = os.path.join(path, "events.sock")
            if os.path.exists(sock) and _listened(sock):
                continue
            for entry in os.listdir(path):
                os.unlink(os.path.join(path, entry))
            os.rmdir(path)
        except OSError:
            continue


def _runs(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _listened(path: str) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(path)
        return True
    except OSError:  # refused: no agent listens there any more
        return False
    finally:
        probe.close()


class EventServer:
    """The agent's end: accepts any number of processes, hands each line to ``on_line``."""

    def __init__(self, on_line: Callable[[int, str], None],
                 on_close: Callable[[int], None] | None = None) -> None:
        parent = tempfile.gettempdir()
        sweep_stale(parent)
        # 0700: nobody else can connect; its pid in the name for the sweep
        self.dir = tempfile.mkdtemp(prefix=f"{CHANNEL_PREFIX}{os.getpid()}-", dir=parent)
        self.path = os.path.join(self.dir, "events.sock")
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(self.path)
        self._sock.listen(64)
        self._sock.setblocking(False)  # taken when select says one waits (_accept)
        self._on_line = on_line
        self._on_close = on_close
        self._conns: dict[int, socket.socket] = {}
        self._lock = threading.Lock()
        self._next = 0
        self._closed = False
        self._readers: list[threading.Thread] = []
        threading.Thread(target=self._accept, name="probecast-events", daemon=True).start()

    def _accept(self) -> None:
        # a connection is taken and its reader started under the lock: drain() sees it either
        # waiting to be accepted or with its reader
        while not self._closed:
            try:
                if not select.select([self._sock], [], [], 0.5)[0]:
                    continue
                with self._lock:
                    try:
                        conn, _ = self._sock.accept()
                    except BlockingIOError:  # (gone before it was taken)
                        continue
                    cid = self._next
                    self._next += 1
                    self._conns[cid] = conn
                    reader = threading.Thread(target=self._read, args=(cid, conn), daemon=True,
                                              name=f"probecast-events-{cid}")
                    reader.start()
                    self._readers.append(reader)
            except (OSError, ValueError):
                return

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

    def drain(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for every line the program's processes sent to be
        handed on: each connection read to its end (a process that exited has closed it). The
        launcher calls it once the program has exited, before its `end`: a process's last lines
        - its steps, `done` - arrive as it exits, and on a loaded host the reader had not run
        yet when `end` was written (a probe of 5 steps logged none). False where some process
        still holds its connection open (a child that outlived the program)."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                readers = list(self._readers)
            for reader in readers:
                reader.join(max(0.0, deadline - time.monotonic()))
            with self._lock:
                try:  # a connection made but not accepted yet: its reader is still to come
                    pending = select.select([self._sock], [], [], 0)[0]
                except (OSError, ValueError):
                    pending = []
                more = len(self._readers) > len(readers)
            if not (pending or more) or time.monotonic() >= deadline:
                return not any(r.is_alive() for r in readers)
            time.sleep(0.01)

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


def step_line(numbers: tuple[float, float, int, int]) -> bytes:
    """A plain step event's line, as the Emitter writes it: t and dt (seconds, rounded to the
    microsecond), epoch, step."""
    t, dt, epoch, step = numbers
    return b'{"ev":"step","t":%r,"dt":%r,"epoch":%d,"step":%d}\n' % (
        round(t, 6), round(dt, 6), epoch, step)


class EventClient:
    """The hook's end, inside the user's process: a file-like writer plus incoming commands."""

    def __init__(self, path: str, on_command: Callable[[str], None]) -> None:
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.connect(path)
        self._lock = threading.Lock()  # what waits (the program's thread appends to it)
        self._sending = threading.Lock()  # taking what waits and sending it, in order
        self._on_command = on_command
        self._waiting: list[bytes | tuple[float, float, int, int]] = []  # not sent yet
        self._wake = threading.Event()
        threading.Thread(target=self._listen, name="probecast-commands", daemon=True).start()
        threading.Thread(target=self._sender, name="probecast-steps", daemon=True).start()

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

    # Step events wait up to STEP_BATCH seconds to go together: one send per event cost a small
    # job ~0.1 ms a step (a system call, and a wake-up of the agent's reader), about 5 % of a
    # 2 ms step. A plain step (``step``) is not even made into its line in the program's step:
    # its four numbers wait, and the sender thread writes the lines (making them was most of
    # the hook's own time in a step: there the interpreter's caches are cold, the framework's
    # work having run in between). Every other event goes at once and takes the waiting steps
    # with it, so nothing the launcher acts on (done, end, memory, a stop's echo) waits; the
    # step clock itself is read in this process.
    def step(self, t: float, dt: float, epoch: int, step: int) -> None:
        """A plain step event (no other field): t and dt (seconds), epoch, step."""
        with self._lock:
            self._waiting.append((t, dt, epoch, step))
            n = len(self._waiting)
        if n == 1:
            self._wake.set()  # the sender sends it within STEP_BATCH if nothing else does
        elif n >= STEP_LINES:
            self._send()

    def write(self, text: str) -> int:
        """A line the Emitter made (write + flush, like a text file): a step waits with the
        others, any other line goes now, with them."""
        data = text.encode("utf-8")
        with self._lock:
            self._waiting.append(data)
            n = len(self._waiting)
        if not data.startswith(STEP_PREFIX) or n >= STEP_LINES:
            self._send()
        elif n == 1:
            self._wake.set()
        return len(text)

    def flush(self) -> None:
        pass  # the Emitter flushes after every line: batching is this class's to decide

    def drain(self) -> None:
        """Send what waits: at the exit (atexit, os._exit paths), before the process ends."""
        self._send()

    def _send(self) -> None:
        with self._sending:  # taken and sent as one: a later send cannot overtake this one
            with self._lock:
                waiting, self._waiting = self._waiting, []
            if waiting:
                self._sock.sendall(b"".join(item if isinstance(item, bytes) else step_line(item)
                                            for item in waiting))

    def _sender(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            time.sleep(STEP_BATCH)
            try:
                self.drain()
            except OSError:
                return  # the agent went away: the Emitter sees it at its next write

    def close(self) -> None:
        try:
            self._sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
