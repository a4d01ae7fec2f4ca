"""``probecast import mlperf PATH... --out DIR``: MLPerf Training result logs as probecast logs.

PATH is a result file (``result_<n>.txt``) or a folder searched for them - a whole results
repository, a submitter's, a system's or a benchmark's folder. Each becomes one log under
``DIR/<benchmark>/``; ``--cut`` writes only a run's start (as a probe that stopped there) to
estimate the rest from. Then ``probecast rank DIR`` ranks the systems by time and cost,
``probecast replay DIR`` shows the runs in the app.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path
from typing import Any, TextIO

from ..model.event_writer import EventWriter
from ..model.events import Event
from ..model.mlperf.runs import read_run, to_events
from ..model.mlperf.cut import cut_run, parse_cut
from ..model.pricing import Catalog
from .common import CliError, warn

RESULT = re.compile(r"result_\d+\.txt$")


def add_import_parser(sub: Any) -> None:
    p = sub.add_parser("import", help="turn other tools' training logs into probecast logs "
                                      "(mlperf: MLPerf Training results)")
    kinds = p.add_subparsers(dest="kind", metavar="KIND", required=True)
    m = kinds.add_parser("mlperf", help="MLPerf Training result logs (:::MLLOG lines)")
    m.add_argument("paths", nargs="+", metavar="PATH",
                   help="result_<n>.txt files or folders holding them (a results repository)")
    m.add_argument("--out", required=True, metavar="DIR", help="where the logs go")
    m.add_argument("--cut", default=None, metavar="WHEN",
                   help="write only each run's start, as a probe stopped there: first-eval, "
                        "a fraction of the run (0.1) or seconds (600s)")
    m.add_argument("--benchmark", default=None, metavar="NAME[,NAME]",
                   help="only these benchmarks (e.g. llama2_70b_lora,bert)")
    m.set_defaults(func=cmd_import_mlperf)


def find_results(paths: list[str]) -> tuple[list[Path], list[str]]:
    files: list[Path] = []
    problems: list[str] = []
    for text in paths:
        path = Path(text)
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            found = sorted(p for p in path.rglob("result_*.txt") if RESULT.search(p.name))
            if not found:
                problems.append(f"{path}: no result_<n>.txt in it")
            files += found
        else:
            problems.append(f"{path}: no such file or folder")
    return files, problems


def cmd_import_mlperf(ns: argparse.Namespace, out: TextIO) -> int:
    cut = parse_cut(ns.cut) if ns.cut else None
    wanted = {b.strip() for b in ns.benchmark.split(",")} if ns.benchmark else None
    files, problems = find_results(ns.paths)
    for p in problems:
        warn(p)
    if not files:
        raise CliError("nothing to import: give result_<n>.txt files or folders of them")
    catalog = Catalog.embedded()
    root = Path(ns.out)
    written: Counter[str] = Counter()
    failed = 0
    for path in files:
        try:
            run = read_run(path)
        except (OSError, ValueError) as exc:
            warn(f"{path}: not read - {exc}")
            failed += 1
            continue
        if wanted is not None and run.benchmark not in wanted:
            continue
        events: list[Event] = to_events(run, catalog)
        if cut is not None:
            events = cut_run(events, cut)
        name = re.sub(r"[^\w.+-]+", "_", run.run_id.replace("/", "__")) + ".jsonl"
        target = root / run.benchmark / name
        target.parent.mkdir(parents=True, exist_ok=True)
        with EventWriter(target) as writer:
            for ev in events:
                writer.write(ev)
        written[run.benchmark] += 1
    total = sum(written.values())
    what = ", ".join(f"{b} {n}" for b, n in sorted(written.items()))
    print(f"imported {total} run(s) into {root}: {what or 'none'}"
          + (f"; {failed} not read" if failed else ""), file=out)
    if total:
        print(f"next: probecast rank {root}/<benchmark> --by cost   (or replay it)", file=out)
    return 0 if total else 1
