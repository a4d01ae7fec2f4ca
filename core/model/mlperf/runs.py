"""MLPerf Training results as probecast logs: real full training runs on real GPU systems,
written by nobody here, at the granularity they have.

A result file (``<submitter>/results/<system>/<benchmark>/result_<n>.txt``, read by
mlperf_log.py) becomes one schema-v4 log: ``start`` (the system as the instance, the benchmark
as the workload, the global batch size, the accelerators from ``systems/<system>.json``),
``init`` (init_start to init_stop), one ``block`` per stretch of training the log times (epochs,
blocks, or the training between two evaluations) with how far training had got, a ``val`` per
evaluation with its metric, ``done`` and ``end`` at run_stop with its status. A log's time 0 is
init_start, so its runtime is what MLPerf scores (run_start to run_stop) plus the
initialisation before it.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..events import Block, Device, Done, End, Epoch, Event, Init, Log, Start, Val
from .log import MlEvent, MlRead, progress_of, read_mllog
from ..pricing import Catalog
from ..units import memory_mib

_PLACEHOLDER = re.compile(r"placeholder|^\s*$|^<.*>$|^\$", re.I)
# cloud systems in MLPerf results -> the instance type each node is, as the catalog names it
CLOUD_INSTANCES: tuple[tuple[str, str], ...] = (
    (r"ND_?H100_?v5", "Standard_ND96isr_H100_v5"),
    (r"ND_?A100_?v4|NDm_?A100", "Standard_ND96amsr_A100_v4"),
    (r"BM\.GPU\.H100\.8", "BM.GPU.H100.8"),
    (r"BM\.GPU\.A100", "BM.GPU.A100-v2.8"),
    (r"\ba3[-_]high", "a3-highgpu-8g"),
)


@dataclass(frozen=True)
class System:
    """What ``systems/<system>.json`` says (or, without it, the log's own metadata)."""

    name: str
    submitter: str = ""
    status: str = ""  # available / cloud / preview / research
    nodes: int = 1
    accelerators_per_node: int = 0
    accelerator: str = ""
    accelerator_memory_mb: float | None = None
    framework: str = ""
    host_cores: int | None = None

    @property
    def devices(self) -> int:
        return self.nodes * self.accelerators_per_node


def _int(value: Any, default: int = 0) -> int:
    """A count as systems JSON write it: 2, "2", "2.0" (v3.1 has "number_of_nodes": 1.0)."""
    try:
        return int(float(str(value).strip().split()[0]))
    except (ValueError, IndexError, OverflowError):
        return default


def load_system(path: Path | None, fallback: str, submitter: str) -> System:
    """The system of a result file, from its systems/*.json when there is one."""
    if path is None or not path.is_file():
        return System(fallback, submitter)
    doc = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    return System(
        name=fallback or str(doc.get("system_name", "")),
        submitter=str(doc.get("submitter", submitter)),
        status=str(doc.get("status", "")),
        nodes=max(1, _int(doc.get("number_of_nodes"), 1)),
        accelerators_per_node=_int(doc.get("accelerators_per_node")),
        accelerator=str(doc.get("accelerator_model_name", "")),
        accelerator_memory_mb=memory_mib(doc.get("accelerator_memory_capacity")),
        framework=str(doc.get("framework", "")),
        host_cores=_int(doc.get("host_processor_core_count"), 0) or None)


@dataclass(frozen=True)
class ResultPath:
    """Where a result file sits in a results repository: release/submitter/system/benchmark."""

    path: Path
    submitter: str = ""
    system: str = ""
    benchmark: str = ""
    release: str = ""
    system_json: Path | None = None

    @classmethod
    def of(cls, path: Path) -> ResultPath:
        parts = path.resolve().parts
        if "results" in parts[:-1]:
            i = len(parts) - 1 - parts[::-1].index("results")
            if i + 2 < len(parts) - 1 and i >= 1:
                root = Path(*parts[:i])
                system, bench = parts[i + 1], parts[i + 2]
                release = next((p for p in reversed(parts[:i - 1]) if "training_results" in p
                                or re.match(r"v\d", p)), "")
                return cls(path, parts[i - 1], system, bench, release.replace(
                    "mlcommons+", "").replace("training_results_", ""),
                    root / "systems" / f"{system}.json")
        return cls(path)


def _useful(value: Any) -> str:
    text = "" if value is None else str(value)
    return "" if _PLACEHOLDER.search(text) else text


@dataclass
class Piece:
    """A stretch of the run's timeline: training up to ``progress``, or one evaluation."""

    kind: str  # "train" | "eval"
    start_ms: float
    end_ms: float
    progress: float | None
    metrics: dict[str, float] = field(default_factory=dict)


def _evaluations(read: MlRead) -> list[Piece]:
    """Evaluations in the order the log ran them: an eval_start opens one, and its eval_stop and
    metrics belong to it until the next eval_start (some benchmarks compute the metric after
    eval_stop; unet3d writes the metric's progress in another unit than eval_start's). Metrics
    with no eval_start are points inside training, one per point of progress."""
    pieces: list[Piece] = []
    current: Piece | None = None
    timed = False
    for ev in read.events:
        if ev.key not in ("eval_start", "eval_stop", "eval_accuracy"):
            continue
        progress, _ = progress_of(ev.meta)
        if ev.key == "eval_start":
            current, timed = Piece("eval", ev.time_ms, ev.time_ms, progress), True
            pieces.append(current)
        elif current is None or (not timed and progress != current.progress):
            if ev.key == "eval_stop":
                continue  # a stop with no start: nothing to time
            current, timed = Piece("eval", ev.time_ms, ev.time_ms, progress), False
            pieces.append(current)
        current.end_ms = max(current.end_ms, ev.time_ms)
        if current.progress is None:
            current.progress = progress
        if ev.key == "eval_accuracy" and isinstance(ev.value, (int, float)) \
                and not isinstance(ev.value, bool):
            name = str(ev.meta.get("metric") or "eval_accuracy")
            current.metrics[name] = float(ev.value)
        if not timed:  # a point: it ends where its last metric was written
            current.start_ms = current.end_ms
    _beside_training(read, pieces)
    return sorted((p for p in pieces if p.progress is not None), key=lambda p: p.end_ms)


def _epoch_marks(read: MlRead) -> list[tuple[float, float]]:
    stops = [e for e in read.events if e.key == "epoch_stop" and progress_of(e.meta)[0] is not None]
    if not stops:
        return []
    starts = [progress_of(e.meta)[0] for e in read.events if e.key == "epoch_start"]
    labels = [s for s in starts if s is not None] or [progress_of(stops[0].meta)[0] or 0.0]
    marks = {progress_of(e.meta)[0] for e in stops}
    offset = 1.0 if labels and labels[0] == 0 and marks <= set(labels) else 0.0  # 0-based labels: epoch 0 ends at 1
    return [(e.time_ms, (progress_of(e.meta)[0] or 0.0) + offset) for e in stops]


def _block_marks(read: MlRead) -> list[tuple[float, float]]:
    starts = read.all("block_start")
    out = []
    for ev in read.all("block_stop"):
        progress, _ = progress_of(ev.meta)
        if progress is None:  # the next block's first epoch, else this one's first + count
            later = [s for s in starts if s.time_ms >= ev.time_ms]
            first = later[0].meta.get("first_epoch_num") if later else None
            if first is None and isinstance(ev.meta.get("epoch_count"), (int, float)):
                first = (ev.meta.get("first_epoch_num") or 0) + ev.meta["epoch_count"]
            progress = float(first) if isinstance(first, (int, float)) else None
        if progress is not None:
            out.append((ev.time_ms, progress))
    return out


def _training_marks(read: MlRead, evals: list[Piece]) -> list[tuple[float, float]]:
    """(time, progress) where a stretch of training ends: epochs where the log has them, else
    blocks; evaluations timed as points end one too. Marks that would make progress go back,
    or that fall inside an evaluation, are set aside (units the log mixes)."""
    marks = _epoch_marks(read) or _block_marks(read)
    marks += [(p.end_ms, p.progress) for p in evals if p.start_ms == p.end_ms
              and p.progress is not None]
    marks.sort()
    out: list[tuple[float, float]] = []
    for t, progress in marks:
        if any(p.start_ms < t < p.end_ms for p in evals):
            continue
        if out and (progress <= out[-1][1] or t <= out[-1][0]):
            continue
        out.append((t, progress))
    return out


@dataclass
class MlRun:
    """One MLPerf result file, read."""

    where: ResultPath
    system: System
    benchmark: str
    batch_size: int
    read: MlRead
    pieces: list[Piece]
    unit: str
    init_start: float | None
    init_stop: float | None
    run_start: float | None
    run_stop: float | None
    status: str  # success / aborted / "" (no run_stop)

    @property
    def run_id(self) -> str:
        parts = [self.where.release, self.system.submitter, self.system.name, self.benchmark,
                 self.where.path.stem]
        return "/".join(p for p in parts if p)


def read_run(path: Path, text: str | None = None) -> MlRun:
    """A result file and its system."""
    where = ResultPath.of(path)
    if text is None:
        text = path.read_text(encoding="utf-8", errors="replace")
    read = read_mllog(text.splitlines())
    submitter = where.submitter or _useful(read.value("submission_org"))
    name = where.system or _useful(read.value("submission_platform")) or "unknown-system"
    system = load_system(where.system_json, name, submitter)
    benchmark = where.benchmark or _useful(read.value("submission_benchmark")) or "unknown"
    batch = read.value("global_batch_size", 0)
    evals = _evaluations(read)
    marks = _training_marks(read, evals)
    unit = next((progress_of(e.meta)[1] for e in read.events
                 if e.key in ("eval_accuracy", "epoch_stop", "block_stop")
                 and progress_of(e.meta)[0] is not None), "epochs")
    if unit == 'epochs' and benchmark in ('bert', 'gpt3'):
        unit = 'samples'
    pieces = [Piece("train", t, t, p) for t, p in marks]
    pieces += [p for p in evals if p.start_ms < p.end_ms or p.metrics]
    pieces.sort(key=lambda p: (p.end_ms, p.kind != "train"))
    stop = read.first("run_stop")
    return MlRun(where, system, benchmark, int(batch) if isinstance(batch, (int, float)) else 0,
                 read, pieces, unit, _time(read, "init_start"), _time(read, "init_stop"),
                 _time(read, "run_start"), stop.time_ms if stop else None,
                 str((stop.meta.get("status") if stop else "") or ""))


def _time(read: MlRead, key: str) -> float | None:
    ev: MlEvent | None = read.first(key)
    return ev.time_ms if ev is not None else None


def cloud_price(system: System, catalog: Catalog) -> tuple[float | None, str]:
    """($/h for the whole system, where it came from): the catalog's price of the cloud
    instance type each node is, times the nodes; None for systems no catalog prices."""
    for pattern, instance in CLOUD_INSTANCES:
        if re.search(pattern, system.name, re.I):
            price, _ = catalog.price(instance)
            if price is not None:
                return price * system.nodes, f"{system.nodes} x {instance} (catalog)"
    return None, ""


def to_events(run: MlRun, catalog: Catalog | None = None) -> list[Event]:
    """The run as a probecast log (schema v4)."""
    t0 = run.init_start if run.init_start is not None else (
        run.read.events[0].time_ms if run.read.events else 0.0)
    price, price_note = cloud_price(run.system, catalog) if catalog else (None, "")
    devices = tuple(Device("gpu", run.system.accelerator, run.system.accelerator_memory_mb)
                    for _ in range(run.system.devices))
    note = f"imported from MLPerf Training {run.run_id}"
    if price_note:
        note += f"; priced as {price_note}"
    when = dt.datetime.fromtimestamp(t0 / 1000, dt.timezone.utc).isoformat(timespec="seconds")
    out: list[Event] = [Start(0.0, probe=run.run_id, time=when, instance=run.system.name,
                              host=run.system.submitter, batch_size=max(0, run.batch_size),
                              workload=f"mlperf {run.benchmark}", framework=run.system.framework,
                              devices=devices, price_per_hour=price, note=note)]
    out += _problems(run, t0)
    cursor = run.init_stop if run.init_stop is not None else t0
    out.append(Init((cursor - t0) / 1000, (cursor - t0) / 1000))
    index, reached = 0, -1.0
    for piece in run.pieces:
        if run.run_stop is not None and piece.end_ms > run.run_stop:
            break
        if piece.kind == "eval" and piece.progress is not None and piece.progress > reached \
                and piece.start_ms > cursor:
            # the training that reached this evaluation, where no epoch or block ended it
            index += 1
            out.append(Block((piece.start_ms - t0) / 1000, (piece.start_ms - cursor) / 1000,
                             index=index, progress=piece.progress, unit=run.unit))
            cursor, reached = piece.start_ms, piece.progress
        if piece.kind == 'train' and piece.progress is not None and piece.progress <= reached:
            continue
        dt_s = max(0.0, piece.end_ms - cursor) / 1000
        t = (max(piece.end_ms, cursor) - t0) / 1000
        if piece.kind == "train":
            index += 1
            out.append(Block(t, dt_s, index=index, progress=piece.progress, unit=run.unit))
            reached = max(reached, piece.progress or 0.0)
        elif piece.start_ms == piece.end_ms:  # timed as a point, or beside training
            out.append(Val(t, 0.0, epoch=index, metrics=dict(piece.metrics)))
            out.append(Epoch(t, epoch=index, metrics=dict(piece.metrics)))
            continue
        else:
            out.append(Val(t, dt_s, epoch=index, metrics=dict(piece.metrics)))
            out.append(Epoch(t, epoch=index, metrics=dict(piece.metrics)))
        cursor = max(cursor, piece.end_ms)
    out += _ending(run, t0, cursor)
    return out


def _problems(run: MlRun, t0: float) -> list[Event]:
    read, notes = run.read, []
    if read.malformed:
        notes.append(f"{len(read.malformed)} MLLOG line(s) could not be read "
                     f"(line {', '.join(map(str, read.malformed[:3]))})")
    if read.after_stop:
        notes.append(f"{read.after_stop} event(s) after run_stop left out")
    if not run.system.accelerator:
        notes.append("no systems/*.json beside the result: the accelerators are unknown")
    return [Log(0.0, level="warning", msg=f"MLPerf import: {n}") for n in notes]


def _ending(run: MlRun, t0: float, cursor: float) -> list[Event]:
    if run.run_stop is None:
        t = (cursor - t0) / 1000
        return [End(t, 0.0, status="failed",
                    reason="the MLPerf log ends without run_stop (a truncated result)")]
    t = (run.run_stop - t0) / 1000
    rest = max(0.0, run.run_stop - cursor) / 1000
    if run.status == "success":
        return [Done(t, rest, status="complete"), End(t, 0.0, status="complete", exit_code=0)]
    reason = f"MLPerf run_stop status {run.status or 'missing'} (the target was not reached)"
    return [Done(t, rest, status="failed", reason=reason),
            End(t, 0.0, status="failed", reason=reason, exit_code=1)]


_BOUNDS = ('block_start', 'block_stop', 'epoch_start', 'epoch_stop')


def _beside_training(read: MlRead, pieces: list[Piece]) -> None:
    """Evaluations that ran while training went on take no time of their own: printed by
    ranks that print no training, or with a block/epoch ending inside them. One during which
    training resumed is the evaluation's own time only up to that resumption."""
    bounds = [e for e in read.events if e.key in _BOUNDS]
    trainers = {e.rank for e in bounds}
    for piece in pieces:
        starts = [e for e in read.events if e.key == 'eval_start' and e.time_ms == piece.start_ms]
        if not starts:
            continue
        inside = [e for e in bounds if piece.start_ms < e.time_ms < piece.end_ms]
        if (bounds and starts[0].rank not in trainers) or any(e.key.endswith('_stop') for e in inside):
            piece.start_ms = piece.end_ms = max(piece.end_ms, piece.start_ms)
        elif inside:
            piece.end_ms = min(e.time_ms for e in inside)
