"""UI responsiveness through a real pty: time to first frame, event-loop lag and terminal bytes/s
with 16 synthetic live probes at 200 events/s each.

    python benchmarks/ui.py [--seconds 20] [--repeat 3]

1. First frame: `probecast replay sample_logs --speed 0` in a pseudo-terminal (80x24); the time
   from spawn until the screen shows the ranking's title - with Python's bytecode cache written
   (every start after the first), and without one (``PYTHONDONTWRITEBYTECODE``: every module
   compiled at every start).
2. Load: the app in a pty with 16 probes whose runners emit 200 step events/s each (3 200/s in
   all). Inside the app a task sleeps 10 ms in a loop and records how late it wakes (event-loop
   lag); outside, every byte the app writes to the terminal is counted.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import json
import os
import pty
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def spawn_in_pty(args: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[bytes], int]:
    master, slave = pty.openpty()
    import fcntl
    import struct
    import termios

    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    proc = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=ROOT,
                            start_new_session=True)
    os.close(slave)
    return proc, master


def read_until(master: int, needle: bytes, timeout: float) -> tuple[float | None, bytes]:
    buf = b""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        r, _, _ = select.select([master], [], [], 0.05)
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            buf += chunk
            if needle in buf:
                return time.monotonic() - t0, buf
    return None, buf


def first_frame(env: dict[str, str]) -> float | None:
    t0 = time.monotonic()
    proc, master = spawn_in_pty([sys.executable, "-m", "probecast.tui", "replay", "sample_logs", "--speed", "0"], env)
    took, _ = read_until(master, b"Ranking", 30)
    elapsed = None if took is None else time.monotonic() - t0
    os.write(master, b"q")
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    os.close(master)
    return elapsed


# ---- the child: the app under synthetic load ---------------------------------------------------


class SyntheticRunner:
    def __init__(self, key: str, rate: float, seconds: float) -> None:
        from probecast.core.run.runners import ProbeSpec

        self.spec = ProbeSpec(key=key, label=key, instance="g5.xlarge", batch_size=64)
        self.rate = rate
        self.seconds = seconds
        self.stopped = False

    async def stream(self) -> AsyncIterator[object]:
        from probecast.core.model.events import Init, Start, Step
        from probecast.core.run.runners import RunnerStatus

        yield RunnerStatus("running")
        yield Start(0.0, probe=self.spec.key, instance="g5.xlarge", batch_size=64,
                    workload="synthetic", steps_per_epoch=100_000)
        yield Init(1.0, 1.0)
        t, i, t0 = 1.0, 0, time.monotonic()
        batch = max(1, int(self.rate / 50))  # arrive in bursts every 20 ms, like network reads
        while not self.stopped and time.monotonic() - t0 < self.seconds:
            for _ in range(batch):
                dt = 0.005 + (i % 7) * 0.0001
                t += dt
                yield Step(t, dt, 0, i)
                i += 1
            await asyncio.sleep(batch / self.rate)
        yield RunnerStatus("done")

    async def cancel(self) -> None:
        self.stopped = True


def child(seconds: float, out: str) -> None:
    from probecast.core.run.board import Board
    from probecast.core.model.pricing import Catalog
    from probecast.core.model.rank.ranking import Pricing
    from probecast.core.run.session import Session
    from probecast.tui.app import ProbecastApp

    lags: list[float] = []

    class Bench(ProbecastApp):
        def on_mount(self) -> None:
            # no super().on_mount(): Textual calls every class's on_mount along the MRO itself
            # (calling it here pushed a second run screen, and the one beneath repainted the
            # whole terminal whenever it changed - the measure was of that, not of the app)

            async def probe_lag() -> None:
                while True:
                    t = time.perf_counter()
                    await asyncio.sleep(0.01)
                    lags.append(time.perf_counter() - t - 0.01)

            self._lag_task = asyncio.get_running_loop().create_task(probe_lag())

            def done() -> None:
                Path(out).write_text(json.dumps(lags))
                self.exit()

            self.set_timer(seconds, done)

    runners = [SyntheticRunner(f"probe-{i:02d}", 200, seconds + 5) for i in range(16)]
    Bench(Session(Board(Pricing(Catalog.embedded())), runners=runners)).run()


def load_run(env: dict[str, str], seconds: float) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "lags.json")
        proc, master = spawn_in_pty([sys.executable, __file__, "--child", out, "--seconds", str(seconds)], env)
        total = 0
        t0 = time.monotonic()
        first_after = None
        warm = 2.0  # skip start-up frames: measure the steady stream
        counted = 0
        while proc.poll() is None:
            r, _, _ = select.select([master], [], [], 0.1)
            if r:
                try:
                    n = len(os.read(master, 65536))
                except OSError:
                    break
                total += n
                if time.monotonic() - t0 > warm:
                    if first_after is None:
                        first_after = time.monotonic()
                    counted += n
        end = time.monotonic()
        os.close(master)
        lags = json.loads(Path(out).read_text()) if os.path.exists(out) else []
    steady = lags[int(len(lags) * 0.1):]  # drop start-up
    steady.sort()
    span = end - (first_after or end)
    return {
        "lag_p50_ms": 1000 * steady[len(steady) // 2] if steady else float("nan"),
        "lag_p99_ms": 1000 * steady[int(len(steady) * 0.99)] if steady else float("nan"),
        "bytes_per_s": counted / span if span > 0 else float("nan"),
        "bytes_total": float(total),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ns = ap.parse_args()
    if ns.child:
        child(ns.seconds, ns.child)
        return 0
    env = {**os.environ, "TERM": "xterm-256color", "PYTHONPATH": str(ROOT), "COLUMNS": "80", "LINES": "24"}
    # What a user sees from the second start on: Python's bytecode cache written (the first start
    # after an install compiles every module once). A shell with PYTHONDONTWRITEBYTECODE set
    # compiles at every start: measured apart.
    warm = {k: v for k, v in env.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    first_frame(warm)  # writes the cache; not counted
    nocache = tempfile.mkdtemp(prefix="probecast-nocache-")  # a cache folder of its own, empty
    atexit.register(shutil.rmtree, nocache, True)
    cold = {**env, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": nocache}
    for label, e in (("", warm), (", no bytecode cache", cold)):
        frames = [f for f in (first_frame(e) for _ in range(ns.repeat)) if f is not None]
        if frames:
            print(f"first frame (replay, 80x24 pty{label}): median {statistics.median(frames):.3f}s "
                  f"(min {min(frames):.3f}, max {max(frames):.3f}; target <= 0.5 s)")
    for label, extra in (("local", {}), ("over SSH", {"SSH_CONNECTION": "10.0.0.1 50000 10.0.0.2 22"})):
        runs = [load_run({**env, **extra}, ns.seconds) for _ in range(ns.repeat)]
        for key, unit, target in (("lag_p50_ms", "ms", ""), ("lag_p99_ms", "ms", ""),
                                  ("bytes_per_s", "B/s", " (target <= 10 KB/s)")):
            vals = [r[key] for r in runs]
            print(f"16 probes x 200 ev/s, {label}, {key}: median {statistics.median(vals):.1f} {unit} "
                  f"(runs: {', '.join(f'{v:.1f}' for v in vals)}){target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
