"""Predicted rows: a candidate nobody probed, ranked beside the probed ones (``rank --predict``,
the app's ranking), its runtime predicted from the workload's rows on other hardware
(model.py) and marked as predicted, with what it rests on.

A row's hardware is read from its log's devices (as nvidia-smi or MLPerf wrote the GPU), else
from the catalog's instance of its name; a predicted candidate's from the catalog (the embedded
one, or a ``[[catalog]]`` row of the config). Rows of one batch size predict that batch size
where an instance ran several (a sweep); where each instance ran one (MLPerf systems each train
at their own global batch), the workload's rows predict together: the time to train is the job.
Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

from ..events import Device
from ..pricing import Catalog, cost_usd
from ..rows import RankedRow
from ..state import ProbeState
from .gpus import gpu_spec
from .model import Hardware, Observed, Prediction, predict

# ($/h, where it came from, billing rule) for an instance name
PriceOf = Callable[[str], tuple[float | None, str, str]]


def hardware_of_devices(devices: Sequence[Device]) -> Hardware | None:
    """The GPUs a log's start names (all of one model: the first names it)."""
    gpus = [d for d in devices if d.kind in ("gpu", "cuda", "") and d.name]
    if not gpus:
        return None
    memory = gpus[0].memory_mb / 1024 if gpus[0].memory_mb else None
    spec = gpu_spec(gpus[0].name, memory)
    return Hardware(spec, len(gpus)) if spec is not None else None


def hardware_of_instance(catalog: Catalog, name: str) -> Hardware | None:
    """A catalog instance's GPUs (a ``[[catalog]]`` row's count is all its nodes' GPUs)."""
    inst = catalog.get(name)
    if inst is None or not inst.gpu_count:
        return None
    spec = gpu_spec(inst.gpu_name or inst.gpu_model, inst.gpu_memory_gb)
    if spec is None and inst.gpu_name:
        spec = gpu_spec(inst.gpu_model, inst.gpu_memory_gb)
    return Hardware(spec, inst.gpu_count) if spec is not None else None


def observed_rows(group: Sequence[RankedRow], states: Mapping[str, ProbeState],
                  catalog: Catalog) -> list[tuple[RankedRow, Observed]]:
    """The group's rows whose hardware is known, as observations of the job."""
    out = []
    for r in group:
        if r.does_not_fit or r.per_steps or r.predicted:
            continue
        state = states.get(r.key)
        hw = hardware_of_devices(state.start.devices) if state and state.start else None
        hw = hw or hardware_of_instance(catalog, r.instance)
        start = r.terms.get("t_init")
        if hw is not None:
            out.append((r, Observed(r.instance or r.label, hw, r.runtime_s,
                                    float(start) if isinstance(start, (int, float)) else None)))
    return out


def _batches(obs: Sequence[tuple[RankedRow, Observed]]) -> dict[int | None, list[Observed]]:
    """Observations per batch size where some instance ran several (a user's sweep: each batch
    size its own job); else all together under None (one batch size per instance, as MLPerf
    systems each train at their own global batch: the time to train is the job)."""
    sizes: dict[str, set[int]] = {}
    for r, _ in obs:
        sizes.setdefault(r.instance, set()).add(r.batch_size)
    if all(len(v) == 1 for v in sizes.values()):
        return {None: [o for _, o in obs]}
    return {b: [o for r, o in obs if r.batch_size == b]
            for b in sorted({r.batch_size for r, _ in obs})}


def predicted_rows(group: Sequence[RankedRow], names: Sequence[str],
                   states: Mapping[str, ProbeState], catalog: Catalog,
                   price_of: PriceOf) -> tuple[list[RankedRow], list[str]]:
    """A predicted row per name (and batch size) the group did not probe; problems in words."""
    obs = observed_rows(group, states, catalog)
    probed = {(r.instance, r.batch_size) for r in group}
    batches = _batches(obs) if obs else {}
    rows: list[RankedRow] = []
    problems: list[str] = []
    for name in names:
        # a sweep's instance probed at some batch sizes is predicted at the others
        wanted = {b: o for b, o in batches.items() if (name, b) not in probed
                  and not (b is None and any(i == name for i, _ in probed))}
        if any(i == name for i, _ in probed) and not wanted:
            continue
        target = hardware_of_instance(catalog, name)
        if target is None:
            problems.append(f"--predict {name}: no such instance with GPUs in the catalog or "
                            "the config's [[catalog]]")
            continue
        if not obs:
            problems.append(f"--predict {name}: no probed row of {group[0].workload!r} names "
                            "its GPUs, nothing to predict from")
            continue
        for batch, observed in wanted.items():
            pred = predict(target, observed)
            if pred is not None:
                template = next(r for r, o in obs if batch is None or r.batch_size == batch)
                rows.append(_row(template, name, pred, price_of(name),
                                 batch if batch is not None else _usual_batch(obs)))
    return rows, problems


def _usual_batch(obs: Sequence[tuple[RankedRow, Observed]]) -> int:
    """Pooled rows' batch size as the views say it: the one most of them ran."""
    sizes = [r.batch_size for r, _ in obs]
    return max(sorted(set(sizes)), key=sizes.count)


def _row(template: RankedRow, name: str, pred: Prediction,
         price: tuple[float | None, str, str], batch: int) -> RankedRow:
    """The template's job (workload, length) on ``name``, at the predicted runtime."""
    per_hour, source, rule = price

    def cost(seconds: float) -> float | None:
        return None if per_hour is None else cost_usd(per_hour, seconds, rule)

    return dataclasses.replace(
        template, key=f"predicted:{name}:{batch}", label=name, probe="", instance=name,
        batch_size=batch, runtime_s=pred.runtime_s,
        runtime_low_s=pred.low_s, runtime_high_s=pred.high_s, cost_usd=cost(pred.runtime_s),
        cost_low_usd=cost(pred.low_s), cost_high_usd=cost(pred.high_s),
        price_per_hour=per_hour, price_source=source, billing=rule, equation="predicted",
        terms={}, uncertainty={}, formula="", notes=[pred.basis], status="predicted",
        steps_observed=0, path=None, truncated=False, malformed_lines=0, crossovers=[],
        horizons=[], probe_s=0.0, setup_s=None, with_setup=False, memory=None,
        predicted=True, predicted_from=pred.basis, mechanism="")
