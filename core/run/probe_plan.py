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

from ..model.pricing import Catalog
from .board import Board
from .command_line import PLACEHOLDER
from .config import Host, ProbeSettings
from .prepare import HostPrep, Preparation
from .runners import LocalRunner, ProbeSpec, Runner, RunnerStatus
from .sinks import make_reserve, release_reserve

RunnerFactory = Callable[[Host, ProbeSpec, Path], Runner]


@dataclass
class PlannedProbe:
    host: Host
    spec: ProbeSpec
    log_path: Path
    prep: HostPrep | None = None  # the host's project copy and setup, shared by its probes


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


def plan_probes(hosts: list[Host], settings: ProbeSettings, log_dir: Path,
                all_hosts: list[Host] | None = None, prep: Preparation | None = None
                ) -> list[PlannedProbe]:
    """Every (host, batch size) pair. With ``[probe] project``, ``setup`` or ``env``, each host
    gets one HostPrep that its probes share (``all_hosts``: where jump hosts are found; ``prep``:
    one made already, its project scanned)."""
    out = []
    prep = prep or Preparation.from_settings(settings, log_dir)
    known = {h.name: h for h in (all_hosts or hosts)}
    # a command that does not take the batch size, probed once a host: its probe is the host's
    # (the batch size its log gives is the program's own, read from it where it says one)
    own_batch = (settings.command is not None and PLACEHOLDER not in settings.command
                 and len(settings.batch_sizes) == 1)
    for host in hosts:
        host_prep = HostPrep(host, prep, known) if prep is not None else None
        for b in settings.batch_sizes:
            key = f"{host.name}-b{b}"
            spec = ProbeSpec(
                key=key, label=host.name if own_batch else f"{host.name} b{b}",
                instance=host.instance, batch_size=b,
                workload=settings.workload, command=settings.command, workdir=settings.workdir,
                epochs=settings.epochs, max_steps=settings.max_steps, target_ci=settings.target_ci,
                max_seconds=settings.max_seconds, boundary_budget=settings.boundary_budget,
                min_steady_s=settings.min_steady_seconds,
                price_per_hour=host.price_per_hour, workload_args=list(settings.workload_args),
            )
            out.append(PlannedProbe(host, spec, log_dir / f"{_safe(key)}.jsonl", host_prep))
    return out


def host_preps(plan: list[PlannedProbe]) -> list[HostPrep]:
    """The plan's host preparations, each once."""
    seen: dict[int, HostPrep] = {}
    for p in plan:
        if p.prep is not None:
            seen.setdefault(id(p.prep), p.prep)
    return list(seen.values())


async def finish_preparations(plan: list[PlannedProbe]) -> None:
    """The end of a session: every host's project copy released (removed unless kept)."""
    preps = host_preps(plan)
    if preps:
        await asyncio.gather(*(h.finish() for h in preps), return_exceptions=True)


async def prepare_host(board: Board, p: PlannedProbe) -> ProbeSpec | None:
    """Wait for the probe's host to be prepared (its status on the board meanwhile); the spec
    to run in the prepared host, or None when the preparation failed (said on the board)."""
    if p.prep is None:
        return p.spec
    key = p.spec.key
    try:
        async for status in p.prep.watch():
            if status.status != "failed":
                board.feed(key, status)
    except asyncio.CancelledError:
        board.feed(key, RunnerStatus("stopped", "cancelled"))
        raise
    if p.prep.prepared is None:
        board.feed(key, RunnerStatus("failed", p.prep.error or "the host could not be prepared"))
        return None
    return p.prep.prepared.apply(p.spec)


def runner_factory(hosts: list[Host]) -> RunnerFactory:
    """Local hosts run the agent as a subprocess; the others over SSH (jump hosts by name)."""
    by_name = {h.name: h for h in hosts}

    def make(host: Host, spec: ProbeSpec, log_path: Path) -> Runner:
        if host.kind == "local":
            return LocalRunner(spec, log_path, python=host.python)
        from .ssh import SshRunner

        return SshRunner(host, spec, log_path, by_name)

    return make


def host_price(host: Host, catalog: Catalog) -> float | None:
    """A host's hourly price: its own ``price_per_hour`` first, then the catalog's for its
    instance (``catalog``: the one price lookup's, core/cloud/price_lookup.py, which layers
    [prices], the caches and the embedded catalog); None when neither has one."""
    if host.price_per_hour is not None:
        return float(host.price_per_hour)
    price, _ = catalog.price(host.instance)
    return price


def worst_case_probe_cost(plan: list[PlannedProbe], catalog: Catalog,
                          timeout: float) -> float | None:
    """Every probe running to its timeout, billed with a 60 s minimum; None if a price is unknown.

    Priced by ``host_price``: a host's own price, then the catalog's."""
    from ..model.pricing import cost_usd

    total = 0.0
    for p in plan:
        price = host_price(p.host, catalog)
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
    finish: bool = True,
) -> None:
    """Run every planned probe into the board. Returns when all have ended.

    A host's preparation (project copy, setup) comes before its first probe and outside the
    probes' timeout (it has its own). ``finish``: release the hosts' project copies at the end;
    a caller that probes the same plan again later (the adaptive probe) passes False and calls
    ``finish_preparations`` itself."""
    make = factory or runner_factory([p.host for p in plan])
    for p in plan:
        if p.spec.key not in board.entries:
            board.add(p.spec, p.log_path)
    by_host: dict[str, list[PlannedProbe]] = {}
    for p in plan:
        by_host.setdefault(p.host.name, []).append(p)
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(p: PlannedProbe) -> None:
        spec = await prepare_host(board, p)
        if spec is None:
            return
        runner = make(p.host, spec, p.log_path)
        try:
            await asyncio.wait_for(board.pump(runner), timeout)
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
        if finish:
            await finish_preparations(plan)


async def run_runners(board: Board, runners: list[Runner], limit: int | None = None) -> None:
    """Drive independent runners (replays, tests) concurrently into the board, at most ``limit``
    at once (a replay of 10 000 logs must not open 10 000 files or starve the UI)."""
    for r in runners:
        if r.spec.key not in board.entries:
            board.add(r.spec, getattr(r, "path", None))  # a replay's log (and its .output)
    if limit is None or limit >= len(runners):
        await asyncio.gather(*(board.pump(r) for r in runners))
        return
    pending = iter(runners)

    async def lane() -> None:
        for r in pending:  # lanes share one iterator: each runner is driven once
            await board.pump(r)
            await asyncio.sleep(0)  # let the UI in between logs

    await asyncio.gather(*(lane() for _ in range(limit)))
