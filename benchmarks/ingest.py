"""Ingestion speed: events parsed and folded per second, and a 1M-event replay to a ranking.

    python benchmarks/ingest.py [--events 1000000] [--repeat 5] [--profile]

Writes a synthetic but schema-faithful log (steps with periodic samples, validations, epochs),
then measures (median of --repeat runs, one core):
1. parse + fold: EventReader.feed_line + ProbeState.fold over every line;
2. replay to ranking: the log through ReplayRunner at speed 0 into a Board, then the ranking -
   the same path the app and `probecast replay` use, headless.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from probecast.core.run.board import Board  # noqa: E402
from probecast.core.model.events import EventReader  # noqa: E402
from probecast.core.run.probe_plan import run_runners  # noqa: E402
from probecast.core.model.pricing import Catalog  # noqa: E402
from probecast.core.model.rank.ranking import Pricing, RankOptions  # noqa: E402
from probecast.core.run.runners import ProbeSpec, ReplayRunner  # noqa: E402
from probecast.core.model.state import ProbeState, fold_lines  # noqa: E402


def write_log(path: Path, n_events: int, seed: int = 0) -> int:
    rng = random.Random(seed)
    n_it = 1000
    lines = [json.dumps({"ev": "start", "t": 0.0, "v": 1, "probe": "bench", "instance": "g5.xlarge",
                         "batch_size": 64, "workload": "bench", "steps_per_epoch": n_it,
                         "val_steps": 50, "epochs": 10, "framework": "synthetic", "devices": []},
                        separators=(",", ":"))]
    t = 1.5
    lines.append(f'{{"ev":"init","t":{t},"dt":{t}}}')
    epoch = step = 0
    while len(lines) < n_events - 1:
        dt = round(0.05 + rng.random() * 0.005, 6)
        t = round(t + dt, 6)
        lines.append(f'{{"ev":"step","t":{t},"dt":{dt},"epoch":{epoch},"step":{step}}}')
        step += 1
        if step % 20 == 0:
            lines.append(f'{{"ev":"sample","t":{t},"gpu_util":[97.0],"gpu_mem_mb":[20111.0],'
                         f'"cpu_util":41.5,"rss_mb":2100.3,"swap_mb":0.0}}')
        if step == n_it:
            t = round(t + 2.0, 6)
            lines.append(f'{{"ev":"val","t":{t},"dt":2.0,"epoch":{epoch},"steps":50,'
                         f'"metrics":{{"accuracy":0.9,"loss":0.3}}}}')
            lines.append(f'{{"ev":"epoch","t":{t},"epoch":{epoch},"metrics":{{"val_accuracy":0.9}}}}')
            epoch += 1
            step = 0
    lines.append(f'{{"ev":"end","t":{t},"dt":0.0,"status":"complete"}}')
    path.write_text("\n".join(lines) + "\n")
    return len(lines)


def parse_and_fold(path: Path) -> tuple[float, ProbeState]:
    reader = EventReader()
    state = ProbeState()
    t0 = time.perf_counter()
    with open(path, encoding="utf-8") as fh:
        fold_lines(fh, state, reader)  # what probecast estimate/rank do (core.logstore)
    state.step_time()  # the statistic is part of "folded into estimates"
    return time.perf_counter() - t0, state


def replay_to_ranking(path: Path) -> float:
    async def go() -> int:
        board = Board(Pricing(Catalog.embedded()))
        runner = ReplayRunner(ProbeSpec(key="bench", label="bench"), path, speed=0)
        await run_runners(board, [runner])
        return len(board.ranking(RankOptions()))

    t0 = time.perf_counter()
    rows = asyncio.run(go())
    assert rows == 1
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--profile", action="store_true")
    ns = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "bench.jsonl"
        n = write_log(path, ns.events)
        size = path.stat().st_size
        fold_times = []
        for _ in range(ns.repeat):
            secs, state = parse_and_fold(path)
            fold_times.append(secs)
        assert state.steps > 0 and state.end is not None
        replay_times = [replay_to_ranking(path) for _ in range(ns.repeat)]
        med = statistics.median(fold_times)
        print(f"log: {n} events, {size / 1e6:.1f} MB")
        print(f"parse+fold: median {med:.3f}s = {n / med / 1000:.0f} k events/s "
              f"(min {min(fold_times):.3f}s, max {max(fold_times):.3f}s; target >= 500 k/s)")
        rmed = statistics.median(replay_times)
        print(f"replay to ranking (headless): median {rmed:.3f}s "
              f"(min {min(replay_times):.3f}s, max {max(replay_times):.3f}s; target <= 3 s)")
        if ns.profile:
            prof = cProfile.Profile()
            prof.enable()
            parse_and_fold(path)
            prof.disable()
            pstats.Stats(prof).sort_stats("tottime").print_stats(8)
    return 0


if __name__ == "__main__":
    sys.exit(main())
