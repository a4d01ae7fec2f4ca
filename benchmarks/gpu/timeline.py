"""Where a GPU job's wall time went, from the nvidia-smi samples recorded beside it: a plain run
logs no steps, but the GPU saw it - its CUDA context appear and go, and the span the GPU was busy.

    python benchmarks/gpu/timeline.py [benchmarks/corpus/runs-gpu-h200-public]

The folder holds ``nvidia-smi.csv[.gz]`` (``lib.sh``'s ``gpu_watch``: timestamp, utilisation,
memory used, SM clock every 500 ms through one device call) and ``jobs.txt`` (one line a job, in
the order they ran: ``NAME KIND rc=N wall=S``). The jobs ran one after another, so the n-th
stretch of GPU memory in use is the n-th job's (the first stretch is ``gpu_watch``'s own
``torch.cuda.get_device_name()``, left out); jobs after the samples end are left out. That
reading is checked: a job's stretch must fit in its wall time, and from the second job on its
launch (the stretch's end less the wall) must fall where the job before it ended - a job that
made no CUDA context, or work between jobs, breaks the order, and the table stops there and says
so rather than pair a job with another's stretch. Per job:

  context   from its CUDA context's first sample to its last (the process exits with it)
  before    its wall time less that span: launch, imports and data to the first CUDA call
  busy      the first to the last sample with the GPU busy (utilisation > 0)
  util      mean utilisation over the context's span

A job's probe and its plain run side by side say which part of the difference is start-up
(``before``) and which the work on the GPU (``context``). Samples 0.5 s apart: each figure is
good to about a second.
"""

from __future__ import annotations

import datetime as dt
import gzip
import sys
from dataclasses import dataclass
from pathlib import Path

PERIOD_S = 0.5  # nvidia-smi -lms 500
SLACK_S = 2.0  # how far a job's launch may fall from the previous job's end (samples, the shell)


@dataclass(frozen=True)
class Stretch:
    """Samples with GPU memory in use, one after another."""

    first: float
    last: float
    busy_first: float | None
    busy_last: float | None
    util: float

    @property
    def span(self) -> float:
        return self.last - self.first + PERIOD_S


@dataclass(frozen=True)
class Job:
    name: str
    kind: str
    wall: float


def smi_rows(path: Path) -> list[tuple[dt.datetime, float, float]]:
    """(when, utilisation %, memory used MiB) of each sample nvidia-smi wrote (gz or plain, with
    or without the SM clock's column); a header or nvidia-smi's own message is left out."""
    text = gzip.open(path, "rt").read() if path.suffix == ".gz" else path.read_text()
    rows = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        try:
            when = dt.datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").replace(
                tzinfo=dt.timezone.utc)
            rows.append((when, float(parts[1]), float(parts[2])))
        except (ValueError, IndexError):
            continue
    return rows


def samples(folder: Path) -> list[tuple[float, float, float]]:
    """(seconds since the first sample, utilisation %, memory used MiB) per sample."""
    path = next((p for p in (folder / "nvidia-smi.csv.gz", folder / "nvidia-smi.csv")
                 if p.exists()), None)
    if path is None:
        raise SystemExit(f"no nvidia-smi.csv(.gz) in {folder}")
    rows = smi_rows(path)
    t0 = rows[0][0] if rows else None
    return [((when - t0).total_seconds(), util, mem) for when, util, mem in rows]


def stretches(rows: list[tuple[float, float, float]]) -> list[Stretch]:
    """Stretches of memory above the idle GPU's (the least any sample shows)."""
    idle = min((mem for _, _, mem in rows), default=0.0)
    out: list[Stretch] = []
    run: list[tuple[float, float, float]] = []
    for row in [*rows, (float("inf"), 0.0, idle)]:
        if row[2] > idle:
            run.append(row)
            continue
        if run:
            busy = [t for t, util, _ in run if util > 0]
            out.append(Stretch(run[0][0], run[-1][0], busy[0] if busy else None,
                               busy[-1] if busy else None,
                               sum(util for _, util, _ in run) / len(run)))
            run = []
    return out


def jobs(folder: Path) -> list[Job]:
    out = []
    for line in (folder / "jobs.txt").read_text().splitlines():
        words = line.split()
        wall = next((w[5:] for w in words if w.startswith("wall=")), None)
        if len(words) >= 2 and wall is not None:
            out.append(Job(words[0], words[1], float(wall)))
    return out


def table(folder: Path) -> list[str]:
    found = stretches(samples(folder))[1:]  # the first: gpu_watch's own device query
    lines = ["| job | kind | wall | before | context | busy | util |",
             "|---|---|---:|---:|---:|---:|---:|"]
    ended: float | None = None
    for job, s in zip(jobs(folder), found):
        launch = s.last + PERIOD_S - job.wall
        if s.span > job.wall + 2 * PERIOD_S or (ended is not None
                                                 and abs(launch - ended) > SLACK_S):
            lines.append(f"(from {job.name} {job.kind} on, the stretches do not follow the jobs "
                         f"one to one: a job without a CUDA context, or work between jobs)")
            break
        ended = s.last + PERIOD_S
        busy = (s.busy_last - s.busy_first + PERIOD_S
                if s.busy_first is not None and s.busy_last is not None else 0.0)
        lines.append(f"| {job.name} | {job.kind} | {job.wall:.1f} s | {job.wall - s.span:.1f} s "
                     f"| {s.span:.1f} s | {busy:.1f} s | {s.util:.0f} % |")
    return lines


def main(argv: list[str]) -> int:
    folder = Path(argv[0] if argv else "benchmarks/corpus/runs-gpu-h200-public")
    print("\n".join(table(folder)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
