"""From hosts x batch sizes to running probes.

Hosts run concurrently (up to ``concurrency``); the batch sizes of one host run in sequence,
since they share its GPU. A probe that fails, hangs past the timeout or is cancelled affects
only itself.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .board import Board
from .config import Config, Host, ProbeSettings
from .runners import LocalRunner, ProbeSpec, Runner, RunnerStatus
from .sinks import make_reserve, release_reserve

RunnerFactory = Callable[[Host, ProbeSpec, Path], Runner]


@dataclass
class PlannedProbe:
    host: Host
    spec: ProbeSpec
    log_path: Path


def session_dir(base: str | Path | None = None) -> Path:
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path(base) if base else Path("probecast-logs") / stamp


MIN_FREE_MB = 50


def check_log_dir(path: Path) -> str | None:
    """Before anything starts: the log directory can be created, written, and has room.
    None when it can; else what is wrong, naming the directory."""
    import shutil
    import tempfile

    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".probecast-write-test-"):
            pass
    except OSError as exc:
        return f"cannot write probe logs in {path}: {exc.strerror or exc} (choose --out DIR)"
    free = shutil.disk_usage(path).free / 1e6
    if free < MIN_FREE_MB:
        return (f"only {free:.0f} MB free in {path}: probe logs need room (at least "
                f"{MIN_FREE_MB} MB); free some or choose --out DIR")
    return None


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def plan_probes(hosts: list[Host], settings: ProbeSettings, log_dir: Path) -> list[PlannedProbe]:
    out = []
    for host in hosts:
        for b in settings.batch_sizes:
            key = f"{host.name}-b{b}"
            spec = ProbeSpec(
                key=key, label=f"{host.name} b{b}", instance=host.instance, batch_size=b,
                workload=settings.workload, command=settings.command, workdir=settings.workdir,
                epochs=settings.epochs, max_steps=settings.max_steps, target_ci=settings.target_ci,
                max_seconds=settings.max_seconds, boundary_budget=settings.boundary_budget,
                price_per_hour=host.price_per_hour, workload_args=list(settings.workload_args),
            )
            out.append(PlannedProbe(host, spec, log_dir / f"{_safe(key)}.jsonl"))
    return out


def runner_factory(hosts: list[Host]) -> RunnerFactory:
    """Local hosts run the agent as a subprocess; the others over SSH (jump hosts by name)."""
    by_name = {h.name: h for h in hosts}

    def make(host: Host, spec: ProbeSpec, log_path: Path) -> Runner:
        if host.kind == "local":
            return LocalRunner(spec, log_path, python=host.python)
        from .ssh import SshRunner

        return SshRunner(host, spec, log_path, by_name)

    return make


def worst_case_probe_cost(plan: list[PlannedProbe], config: Config, timeout: float) -> float | None:
    """Every probe running to its timeout, billed with a 60 s minimum; None if a price is unknown."""
    from ..model.pricing import Catalog, cost_usd

    catalog = Catalog.embedded().with_prices(config.prices) if config.prices else Catalog.embedded()
    total = 0.0
    for p in plan:
        price = p.host.price_per_hour
        if price is None:
            price, _ = catalog.price(p.host.instance)
        if price is None:
            if p.host.kind == "local":
                continue
            return None
        total += cost_usd(price, timeout, "per-second-60")
    return total


async def run_plan(
    board: Board,
    plan: list[PlannedProbe],
    *,
    concurrency: int = 8,
    timeout: float = 900.0,
    factory: RunnerFactory | None = None,
) -> None:
    """Run every planned probe into the board. Returns when all have ended."""
    make = factory or runner_factory([p.host for p in plan])
    for p in plan:
        if p.spec.key not in board.entries:
            board.add(p.spec, p.log_path)
    by_host: dict[str, list[PlannedProbe]] = {}
    for p in plan:
        by_host.setdefault(p.host.name, []).append(p)
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(p: PlannedProbe) -> None:
        runner = make(p.host, p.spec, p.log_path)
        try:
            await asyncio.wait_for(board.drive(runner), timeout)
        except asyncio.TimeoutError:
            await runner.cancel()
            board.feed(p.spec.key, RunnerStatus("failed", f"timed out after {timeout:g}s (probe.timeout)"))

    async def host_queue(items: list[PlannedProbe]) -> None:
        async with gate:
            for p in items:
                await one(p)

    directories = {p.log_path.parent for p in plan}
    for d in directories:  # room for every log's last line should the disk fill
        make_reserve(d)
    try:
        await asyncio.gather(*(host_queue(items) for items in by_host.values()))
    finally:
        for d in directories:
            release_reserve(d)


async def run_runners(board: Board, runners: list[Runner], limit: int | None = None) -> None:
    """Drive independent runners (replays, tests) concurrently into the board, at most ``limit``
    at once (a replay of 10 000 logs must not open 10 000 files or starve the UI)."""
    for r in runners:
        if r.spec.key not in board.entries:
            board.add(r.spec, getattr(r, "path", None))  # a replay's log (and its .output)
    if limit is None or limit >= len(runners):
        await asyncio.gather(*(board.drive(r) for r in runners))
        return
    pending = iter(runners)

    async def lane() -> None:
        for r in pending:  # lanes share one iterator: each runner is driven once
            await board.drive(r)
            await asyncio.sleep(0)  # let the UI in between logs

    await asyncio.gather(*(lane() for _ in range(limit)))
