"""Memory in the ranking: a row for each batch size that does not fit (it says so, never a
time), and every row's memory with its program's forecast (memory.py).

A probe that ran out of memory has no estimate - its step time, if it has one, is of a run that
could not go on - so it is kept out of the estimates and the relative columns, and shown beside
them: ``Ranking.no_fit``, per workload, as ``RankedRow`` records whose times are NaN (null in
JSON) and whose status is ``does-not-fit``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from .forecast import HEADROOM, ProgramMemory, does_not_fit, fit_reason, programs_memory, row_memory
from ..pricing import Catalog
from ..rows import Candidate, RankedRow


def split_no_fit(candidates: Iterable[Candidate]) -> tuple[list[Candidate], list[Candidate]]:
    """(candidates to estimate, candidates whose batch size does not fit)."""
    fit: list[Candidate] = []
    no_fit: list[Candidate] = []
    for c in candidates:
        (no_fit if c.status == "does-not-fit" or does_not_fit(c.state) else fit).append(c)
    return fit, no_fit


def no_fit_row(c: Candidate) -> RankedRow:
    """The row of a batch size that does not fit: what it is and why, and no time or cost."""
    start = c.state.start
    nan = math.nan
    return RankedRow(
        key=c.key, label=c.label, probe=start.probe if start else c.key,
        instance=start.instance if start else "", batch_size=start.batch_size if start else 0,
        workload=start.workload if start else "", epochs=nan, epochs_source="",
        runtime_s=nan, runtime_low_s=nan, runtime_high_s=nan, cost_usd=None,
        cost_low_usd=None, cost_high_usd=None, price_per_hour=None, price_source="",
        billing="", equation="", terms={}, uncertainty={}, formula="",
        notes=[fit_reason(c.state)], status="does-not-fit", steps_observed=c.state.steps,
        path=c.path, truncated=c.truncated, malformed_lines=c.malformed_lines,
        probe_s=c.state.end.t if c.state.end is not None else c.state.last_t)


def no_fit_groups(candidates: Iterable[Candidate],
                  workload: str | None = None) -> dict[str, list[RankedRow]]:
    """The rows that do not fit, per workload (``workload``: of that one only)."""
    groups: dict[str, list[RankedRow]] = {}
    for c in candidates:
        row = no_fit_row(c)
        if workload is not None and row.workload != workload:
            continue
        groups.setdefault(row.workload, []).append(row)
    for rows in groups.values():
        rows.sort(key=lambda r: (r.instance, r.batch_size, r.probe))
    return groups


def add_memory(groups: dict[str, list[RankedRow]], no_fit: dict[str, list[RankedRow]],
               candidates: Sequence[Candidate], catalog: Catalog,
               headroom: float = HEADROOM) -> dict[str, ProgramMemory]:
    """Each row's memory (``RankedRow.memory``), and the forecast per workload."""
    by_key = {c.key: c for c in candidates}
    programs = programs_memory((c.state for c in candidates), catalog, headroom=headroom)
    shared: dict[object, object] = {}
    for workload, rows in [*groups.items(), *no_fit.items()]:
        program = programs.get(workload)
        for r in rows:
            c = by_key.get(r.key)
            if c is not None:
                r.memory = row_memory(c.state, program, shared)
    return programs

