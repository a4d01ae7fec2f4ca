"""Run a command with its output timed line by line: a plain run's own progress, which no agent
records (RESULTS §11: "a plain run logs no steps").

    python3 benchmarks/stamp.py OUTPUT LINES -- CMD [ARGS ...]

runs CMD with stdout and stderr together into a pipe, copies them byte for byte to OUTPUT (``-``:
nowhere) and writes LINES: one ``SECONDS<TAB>TEXT`` row per non-empty line (a carriage return
ends a line too: progress bars), SECONDS from the launch to the moment the line arrived. The
child gets ``PYTHONUNBUFFERED=1``: a Python program's prints arrive when made, as they do on a
terminal, not when an 8 KiB buffer fills. Exits with CMD's status (128 + N for a signal); a
SIGTERM (a timeout) is passed on to CMD and its last lines still written down.

Only the standard library: the GPU recording scripts run it on the lent machine
(``benchmarks/gpu/lib.sh``). ``benchmarks/progress.py`` reads a probe's and a plain run's
LINES side by side.
"""

from __future__ import annotations

import gzip
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

_ENDS = re.compile(rb"[\r\n]")


def run_stamped(argv: list[str], output: Path | None, lines: Path, cwd: Path | None = None,
                env: dict[str, str] | None = None) -> tuple[int, float]:
    """(exit status, wall seconds from launch to exit) of ``argv``, its output timed into
    ``lines`` (gzipped where the name ends ``.gz``) and copied to ``output``."""
    env = {**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"}
    opener = gzip.open if lines.suffix == ".gz" else open
    raw: IO[bytes] | None = open(output, "wb") if output is not None else None
    before = signal.getsignal(signal.SIGTERM)
    try:
        with opener(lines, "wt") as rows:  # type: ignore[operator]
            t0 = time.monotonic()
            proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            assert proc.stdout is not None
            # stopped (a job's timeout): the program is told, and its last lines still written
            # down - the files are closed whole, not cut mid-write
            signal.signal(signal.SIGTERM, lambda *_: proc.send_signal(signal.SIGTERM))
            partial = b""
            while chunk := proc.stdout.read1(65536):
                t = time.monotonic() - t0
                if raw is not None:
                    raw.write(chunk)
                *done, partial = _ENDS.split(partial + chunk)
                for line in done:
                    _row(rows, t, line)
            code = proc.wait()
            wall = time.monotonic() - t0
            _row(rows, wall, partial)
    finally:
        signal.signal(signal.SIGTERM, before)  # the caller's own again (public.py runs many)
        if raw is not None:
            raw.close()
    return (128 - code if code < 0 else code), wall


def _row(rows: IO[str], t: float, line: bytes) -> None:
    text = line.decode("utf-8", "replace").rstrip()
    if text.strip():
        rows.write(f"{t:.3f}\t{text}\n")


def read_lines(path: Path) -> list[tuple[float, str]]:
    """A LINES file: (seconds since launch, text) rows."""
    opener = gzip.open if path.suffix == ".gz" else open
    out = []
    with opener(path, "rt", encoding="utf-8", errors="replace") as fh:  # type: ignore[operator]
        for row in fh:
            t, _, text = row.rstrip("\n").partition("\t")
            try:
                out.append((float(t), text))
            except ValueError:
                continue
    return out


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    output = None if argv[0] == "-" else Path(argv[0])
    code, _ = run_stamped(argv[3:], output, Path(argv[1]))
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
