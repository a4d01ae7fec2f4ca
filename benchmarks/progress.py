"""A probe against the plain run it predicts, line by line: where the public scripts' error comes
from, though a plain run logs no steps (RESULTS §11).

    .venv/bin/python benchmarks/progress.py DIR [--markdown]

DIR is in ``benchmarks/public.py``'s layout, recorded with the output timed line by line
(``probe-NAME.lines.gz`` and ``NAME.lines.gz``, ``benchmarks/stamp.py``). A program prints the
same lines in both runs - its progress every so many batches, its epochs - with other numbers in
them: each line is keyed with its numbers masked, and a key's n-th line marks the same point of
the job in both runs. Per script:

- **start**: the probe's first line that the plain run printed too, how much later it came
  (the agent's start-up, the first process's cold caches: the probe ran first for every other
  setting, ``order.txt``);
- **pace**: over the lines both printed of the key that recurs most in the probe, the probe's
  time from the first to the last against the plain run's for the same lines - above 1, the
  probe's steps ran slower than the plain run's (the agent's hook, the host's moment);
- **late/early**: the plain run's own interval between that key's lines after the probe's
  stretch against within it (medians) - below 1, the job sped up after the stretch a probe
  times (a slow start the probe would take for steady), with no agent in either;
- the estimate's error against the plain run (``public.py judge``), for context.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stamp import read_lines  # noqa: E402 - benchmarks/stamp.py, beside this script

_NUMBER = re.compile(r"[-+]?(\d[\d,]*\.?\d*|\.\d+)([eE][-+]?\d+)?")
_BAR = re.compile(r"[━─=>.]{3,}")
MIN_RECURRING = 3  # a key the plain run prints this often marks its progress


_CONTROL = re.compile(r"\x1b\[[0-9;]*[A-Za-z]|[\x00-\x08\x0b-\x1f\x7f]")
_WORD = re.compile(r"[A-Za-z]{2,}")


def key(text: str) -> str:
    """A line with its numbers, progress-bar runs and control characters (a bar's backspaces,
    colours) masked: the same point of the job prints the same key in every run."""
    return " ".join(_BAR.sub("~", _NUMBER.sub("#", _CONTROL.sub("", text))).split())


@dataclass(frozen=True)
class Progress:
    name: str
    start_lag_s: float | None  # the probe's first common line, minus the plain run's
    progress_key: str | None
    common: int  # lines of the progress key both runs printed
    pace: float | None  # the probe's time over the plain run's for those lines
    late_early: float | None  # the plain run's interval after the probe's stretch over within it
    plain_s: float  # the plain run's last line (~its wall time)


def _occurrences(rows: list[tuple[float, str]]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for t, text in rows:
        out.setdefault(key(text), []).append(t)
    return out


def compare(name: str, probe: list[tuple[float, str]], plain: list[tuple[float, str]]) -> Progress:
    by_probe, by_plain = _occurrences(probe), _occurrences(plain)
    start = next((t - by_plain[k][0] for t, text in probe if (k := key(text)) in by_plain), None)
    # a progress line says something in words; a bar redrawn in place (Keras') is redrawn
    # every so many milliseconds, not at a point of the job: not one
    candidates = [k for k, ts in by_plain.items()
                  if len(ts) >= MIN_RECURRING and len(by_probe.get(k, ())) >= 2
                  and _WORD.search(k) and "~" not in k]
    plain_s = plain[-1][0] if plain else 0.0
    if not candidates:
        return Progress(name, start, None, 0, None, None, plain_s)
    best = max(candidates, key=lambda k: (len(by_probe[k]), len(by_plain[k])))
    u, t = by_probe[best], by_plain[best]
    n = min(len(u), len(t))
    pace = (u[n - 1] - u[0]) / (t[n - 1] - t[0]) if t[n - 1] > t[0] else None
    early = [b - a for a, b in zip(t[:n - 1], t[1:n])]
    late = [b - a for a, b in zip(t[n - 1:], t[n:])]
    late_early = (statistics.median(late) / statistics.median(early)
                  if early and late and statistics.median(early) > 0 else None)
    return Progress(name, start, best, n, pace, late_early, plain_s)


def last_step_s(log: Path) -> float | None:
    """When the probe's last step ended (seconds since launch, as its lines are): past it the
    program runs on with its loops ended, and its lines no longer mark training's progress."""
    last = None
    try:
        with (gzip.open(log, "rt") if log.suffix == ".gz" else open(log)) as fh:
            for row in fh:
                if '"ev":"step"' in row.replace(" ", ""):
                    last = float(json.loads(row)["t"])
    except (OSError, ValueError, KeyError):
        return None
    return last


def pairs(folder: Path) -> list[tuple[str, Path, Path, Path]]:
    """(name, probe's lines, its log, plain run's lines) in public.py's layout (``probe-NAME.*``
    beside ``NAME.*``) or the GPU scripts' (``NAME/probe.*`` beside ``NAME-plain/plain.*``, or
    ``NAME-probe-N/`` beside the ``NAME-plain-M/`` that ran next)."""
    out = []
    for plain in sorted(folder.glob("*.lines.gz")):
        name = plain.name.removesuffix(".lines.gz")
        probe = folder / f"probe-{name}.lines.gz"
        if not name.startswith("probe-") and probe.exists():
            out.append((name, probe, folder / f"probe-{name}.jsonl.gz", plain))
    plains = sorted(folder.glob("*/plain.lines.gz"))
    for probe in sorted(folder.glob("*/probe.lines.gz")):
        name = probe.parent.name
        plain = folder / f"{name}-plain" / "plain.lines.gz"
        if not plain.exists():  # record_h100.sh PART=7: NAME-probe-N beside NAME-plain-M
            plain = _next_plain(name, plains) or plain
        if plain.exists():
            out.append((name, probe, probe.parent / "probe.jsonl", plain))
    return out


def _next_plain(name: str, plains: list[Path]) -> Path | None:
    """For ``JOB-probe-N``, the plain run of the same job that ran next after it (``JOB-plain-M``,
    the least M above N), else the last before it."""
    m = re.fullmatch(r"(.+)-probe-(\d+)", name)
    if m is None:
        return None
    runs = sorted((int(p.parent.name.rsplit("-", 1)[1]), p) for p in plains
                  if re.fullmatch(rf"{re.escape(m[1])}-plain-\d+", p.parent.name))
    after = [p for n, p in runs if n > int(m[2])]
    before = [p for n, p in runs if n < int(m[2])]
    return after[0] if after else before[-1] if before else None


def collect(folder: Path) -> list[Progress]:
    out = []
    for name, probe, log, plain in pairs(folder):
        rows = read_lines(probe)
        stop = last_step_s(log)
        if stop is not None:  # a line the step's own print made may come a moment after it
            rows = [(t, text) for t, text in rows if t <= stop + 0.5]
        out.append(compare(name, rows, read_lines(plain)))
    return out


def _errors(folder: Path) -> dict[str, float]:
    from public import judge  # noqa: PLC0415 - imports probecast; --no-estimate skips it

    return {j.name: j.err for j in judge(folder) if j.err is not None}


def _fmt(x: float | None, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def report(rows: list[Progress], errors: dict[str, float], markdown: bool) -> list[str]:
    head = ("script", "error", "start lag", "pace", "late/early", "lines", "progress line")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] if markdown else [
        f"{head[0]:<26} {head[1]:>8} {head[2]:>9} {head[3]:>6} {head[4]:>10} {head[5]:>5}  "
        f"{head[6]}"]
    for r in rows:
        err = errors.get(r.name)
        cells = (r.name, _fmt(None if err is None else 100 * err, "+.1f") + ("" if err is None
                 else "%"), _fmt(r.start_lag_s, "+.2f") + ("" if r.start_lag_s is None
                 else "s"), _fmt(r.pace, ".3f"), _fmt(r.late_early, ".3f"), str(r.common),
                 (r.progress_key or "-")[:48])
        lines.append("| " + " | ".join(cells) + " |" if markdown else
                     f"{cells[0]:<26} {cells[1]:>8} {cells[2]:>9} {cells[3]:>6} {cells[4]:>10} "
                     f"{cells[5]:>5}  {cells[6]}")
    for label, values in (("start lag (s)", [r.start_lag_s for r in rows]),
                          ("pace", [r.pace for r in rows]),
                          ("late/early", [r.late_early for r in rows])):
        have = [v for v in values if v is not None]
        if have:
            lines.append(f"{label}: median {statistics.median(have):.3f} over {len(have)} "
                         f"scripts (min {min(have):.3f}, max {max(have):.3f})")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", type=Path)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--no-estimate", action="store_true",
                    help="leave out the estimate's error (no probecast import)")
    ns = ap.parse_args()
    rows = collect(ns.folder)
    if not rows:
        print(f"{ns.folder}: no probe-NAME.lines.gz beside a NAME.lines.gz (record with "
              "benchmarks/public.py record: it times both runs' lines)", file=sys.stderr)
        return 1
    errors = {} if ns.no_estimate else _errors(ns.folder)
    print("\n".join(report(rows, errors, ns.markdown)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
