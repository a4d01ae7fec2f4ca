"""`probecast probe --find-batch-size`: the largest batch size that fits on each host, in the
fewest probes (core/run/find_batch.py), said with its margin and the number of probes it took;
then the ranking of the probes it ran."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TextIO

from ..model.memory.batch_search import DEFAULT_CAP, DEFAULT_START, Search
from ..run.config import Config
from ..run.find_batch import Found, find_on
from ..run.session import Session
from .common import CliError

Run = Callable[[Coroutine[Any, Any, list[Found]]], list[Found]]
Rank = Callable[[list[str], argparse.Namespace, Config, "int | None", TextIO], int]


def add_find_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("finding the batch size")
    g.add_argument("--find-batch-size", action="store_true",
                   help="find the largest batch size that fits on each host: probe a start "
                        "batch size and 4x it, forecast memory from them, confirm the "
                        "forecast; a probe that does not fit bisects (docs/memory.md)")
    g.add_argument("--headroom", type=float, default=0.10,
                   help="with --find-batch-size: the share of memory left free (default 0.10)")
    g.add_argument("--max-batch-size", type=int, default=DEFAULT_CAP,
                   help=f"with --find-batch-size: the cap (default {DEFAULT_CAP})")


def search_for(ns: argparse.Namespace) -> Search:
    if not 0 <= ns.headroom < 1:
        raise CliError(f"--headroom must be between 0 and 1, got {ns.headroom}")
    start = ns.batch_size[0] if ns.batch_size else DEFAULT_START
    return Search(start=start, cap=ns.max_batch_size, headroom=ns.headroom)


def find_on_hosts(ns: argparse.Namespace, config: Config, session: Session, log_dir: Path,
                  out: TextIO, ranking_out: TextIO, run: Run, rank: Rank) -> int:
    """Every configured host searched at once (each probes one batch size at a time)."""
    if (config.aws is not None or config.skypilot is not None) and not ns.local:
        raise CliError("--find-batch-size probes configured hosts (SSH or local), not launched "
                       "instances: add the host as [[hosts]], or use --local")
    hosts = list(config.hosts)
    first = search_for(ns)
    out.write(f"finding the largest batch size that fits on {len(hosts)} host(s): from "
              f"b{first.start}, headroom {first.headroom:.0%}, cap b{first.cap}; logs: {log_dir}/\n")
    work = find_on(session, hosts, session.probe_settings, log_dir, first.headroom, first.cap,
                   first.start)
    try:
        found = run(work)
    except KeyboardInterrupt:
        out.write("\ninterrupted: probes stopped\n")
        return 130
    for f in found:
        for i, line in enumerate(f.answer.lines()):
            out.write((f"{f.host.name}: " if i == 0 else "") + line + "\n")
    logs = [str(p) for f in found for p in f.logs if p.exists()]
    if logs:
        out.write("\n")
        rank(logs, ns, config, ns.epochs or session.probe_settings.epochs, ranking_out)
    return 0 if found and all(f.answer.batch_size for f in found) else 1
