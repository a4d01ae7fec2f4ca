"""The data behind the pictures of the decision - shared by the app's terminal charts and the
exported figures, so both show the same numbers.

- scatter: one point per (instance, batch size): runtime vs cost, Pareto frontier;
- crossover: estimated runtime and cost vs planned epochs per candidate, crossings named;
- batch: runtime and cost vs batch size per instance (with accuracy where known).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from collections.abc import Sequence

from ..model.rank.crossover import Crossover, Line, cost_crossovers, runtime_crossovers
from ..model.rank.ranking import RankedRow

KINDS = ("scatter", "crossover", "batch")


@dataclass
class ScatterPoint:
    key: str
    label: str
    runtime_s: float
    cost_usd: float
    pareto: bool


def scatter_points(rows: Sequence[RankedRow]) -> list[ScatterPoint]:
    out = []
    for r in rows:
        if r.cost_usd is None or math.isnan(r.cost_usd):
            continue
        out.append(ScatterPoint(r.key, f"{r.instance} b{r.batch_size}", r.runtime_s, r.cost_usd,
                                r.pareto))
    return out


def pareto_frontier(points: list[ScatterPoint]) -> list[ScatterPoint]:
    return sorted((p for p in points if p.pareto), key=lambda p: p.runtime_s)


@dataclass
class CrossoverData:
    epochs: list[float]
    runtime: dict[str, list[float]] = field(default_factory=dict)
    cost: dict[str, list[float | None]] = field(default_factory=dict)
    crossings: list[Crossover] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)

    def sentences(self, limit: int = 6) -> list[str]:
        return [c.sentence(self.labels) for c in self.crossings[:limit]]


def crossover_data(lines: list[Line], max_epochs: int = 30) -> CrossoverData:
    xs = [float(n) for n in range(1, max_epochs + 1)]
    data = CrossoverData(xs, labels={ln.key: ln.label for ln in lines})
    for ln in lines:
        data.runtime[ln.key] = [ln.runtime(n) for n in xs]
        data.cost[ln.key] = [ln.cost(n) for n in xs]
    data.crossings = [c for c in runtime_crossovers(lines) + cost_crossovers(lines)
                      if c.epochs <= max_epochs]
    data.crossings.sort(key=lambda c: c.epochs)
    return data


@dataclass
class BatchSeries:
    instance: str
    batch: list[int]
    runtime: list[float]
    cost: list[float | None]
    accuracy: list[float | None]


def batch_series(rows: Sequence[RankedRow]) -> list[BatchSeries]:
    by_inst: dict[str, list[RankedRow]] = {}
    for r in rows:
        by_inst.setdefault(r.instance or "?", []).append(r)
    out = []
    for inst, rs in sorted(by_inst.items()):
        rs = sorted(rs, key=lambda r: r.batch_size)
        out.append(BatchSeries(inst, [r.batch_size for r in rs], [r.runtime_s for r in rs],
                               [r.cost_usd for r in rs], [r.expected_accuracy for r in rs]))
    return out
