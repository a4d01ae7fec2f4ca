"""Scale: a directory of 10 000 probe logs, ranked headless and replayed in the app.

    python benchmarks/scale.py [--logs 10000] [--repeat 3]

The logs are copies of a real v2 probe (sample_logs/cpu-keras-v2, 277 events, 20 KB) under
10 instance names x 5 batch sizes, so every log parses and estimates like a real one.

1. `probecast rank DIR`: wall time and peak memory (the child's max RSS).
2. `probecast replay DIR --speed 0` in an 80x24 pseudo-terminal: time to the first frame (the
   ranking's title on screen), time until the status line says every probe ended, and how long
   `q` takes to end the process when pressed while logs are still loading.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from ui import spawn_in_pty  # noqa: E402

SOURCE = ROOT / "sample_logs" / "cpu-keras-v2" / "probe-mnist_convnet-b256-e8-c2.jsonl"
INSTANCES = ("c5.large", "c5.xlarge", "c5.2xlarge", "m5.large", "m5.xlarge", "g4dn.xlarge",
             "g5.xlarge", "p3.2xlarge", "g4dn.2xlarge", "g5.2xlarge")
BATCHES = (32, 64, 128, 256, 512)


def make_logs(directory: Path, n: int) -> None:
    lines = SOURCE.read_text().splitlines()
    head, rest = lines[0], "\n".join(lines[1:]) + "\n"
    for i in range(n):
        inst, batch = INSTANCES[i % len(INSTANCES)], BATCHES[(i // len(INSTANCES)) % len(BATCHES)]
        name = f"probe-{i:05d}-{inst}-b{batch}"
        first = re.sub(r'"probe":"[^"]*"', f'"probe":"{name}"', head)
        first = first.replace('"instance":"cpu-2core"', f'"instance":"{inst}"')
        first = first.replace('"batch_size":256', f'"batch_size":{batch}')
        (directory / f"{name}.jsonl").write_text(first + "\n" + rest)


def rank(directory: Path) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "probecast.tui", "rank", str(directory)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    took = time.monotonic() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return took, max(peak, before) / 1024  # MB (ru_maxrss is in KB on Linux)


def replay(directory: Path, n: int, quit_after: float | None) -> dict[str, float | None]:
    """Read the pty continuously (a reader that stops would block the app's writes)."""
    env = {**os.environ, "TERM": "xterm-256color", "PYTHONPATH": str(ROOT)}
    t0 = time.monotonic()
    proc, master = spawn_in_pty([sys.executable, "-m", "probecast.tui", "replay", str(directory),
                                 "--speed", "0"], env)
    screen = b""
    first = everything = quit_took = None
    quit_sent = None
    done = f"probes {n}/{n} ended".encode()
    while proc.poll() is None and time.monotonic() - t0 < 120:
        r, _, _ = select.select([master], [], [], 0.02)
        if r:
            try:
                screen = (screen + os.read(master, 1 << 16))[-(1 << 16):]
            except OSError:
                break
        now = time.monotonic() - t0
        if first is None and b"Ranking" in screen:
            first = now
        if everything is None and done in screen:
            everything = now
        if quit_sent is None and ((quit_after is not None and first is not None
                                   and now >= first + quit_after) or everything is not None):
            os.write(master, b"q")
            quit_sent = time.monotonic()
    if quit_sent is not None and proc.poll() is not None:
        quit_took = time.monotonic() - quit_sent
    if proc.poll() is None:
        proc.kill()
    os.close(master)
    return {"first": first, "all": everything, "quit": quit_took}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--logs", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ns = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        directory = Path(d)
        make_logs(directory, ns.logs)
        ranks = [rank(directory) for _ in range(ns.repeat)]
        print(f"rank {ns.logs} logs: median {statistics.median(t for t, _ in ranks):.2f} s "
              f"(runs {', '.join(f'{t:.2f}' for t, _ in ranks)}), peak RSS {max(m for _, m in ranks):.0f} MB")
        full = [replay(directory, ns.logs, None) for _ in range(ns.repeat)]
        mid = [replay(directory, ns.logs, 2.0) for _ in range(ns.repeat)]

        def med(runs: list[dict[str, float | None]], key: str) -> str:
            vals = [r[key] for r in runs if r[key] is not None]
            missing = len(runs) - len(vals)
            text = f"{statistics.median(vals):.2f} s" if vals else "never"
            return text + (f" ({missing} of {len(runs)} never)" if vals and missing else "")

        print(f"replay --speed 0, first frame: median {med(full + mid, 'first')} (target <= 1 s)")
        print(f"replay --speed 0, every probe loaded: median {med(full, 'all')}")
        print(f"replay, q pressed 2 s after the first frame (still loading): process gone after "
              f"median {med(mid, 'quit')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
