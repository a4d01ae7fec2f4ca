"""From probes to a ranking: one row per (instance, batch size) with runtime, cost and bounds.

Relative columns are normalised to the best row (1.00 = fastest / cheapest), as the
dissertation's Tables 5.6-5.13; ``pareto`` marks the rows no other row beats on both time and
cost.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas costs ~0.2 s to import: only when a ranking is built
    import pandas as pd

from ..agent.steady import DEFAULT_STATISTIC
from .estimate import Estimate, NoEstimate, estimate_runtime
from .pricing import Catalog, cost_usd
from .state import ProbeState

DEFAULT_EPOCHS = 10
SORT_KEYS = {"time": "runtime_s", "cost": "cost_usd", "weighted": "score"}


@dataclass(frozen=True)
class Pricing:
    """How to price a probe: the catalog, user overrides and an optional billing override."""

    catalog: Catalog
    overrides: dict[str, float] | None = None
    billing: str | None = None

    def price_for(self, state: ProbeState) -> tuple[float | None, str, str]:
        """($/h, source, billing rule) for a probe's instance."""
        instance = state.start.instance if state.start else ""
        inst = self.catalog.get(instance)
        rule = self.billing or (inst.billing if inst else "exact")
        if self.overrides and instance in self.overrides:
            return self.overrides[instance], "user", rule
        if state.start and state.start.price_per_hour is not None:
            return state.start.price_per_hour, "log", rule
        price, source = self.catalog.price(instance)
        return price, source, rule


def choose_epochs(state: ProbeState, epochs: float | None,
                  plan: dict[tuple[str, int], Any] | None = None) -> tuple[float, str]:
    """N_ep and where it came from: the user, full runs of this workload and batch size
    (methodology 1: ``plan`` maps (workload, batch) -> core.epochs.EpochsInfo), the log's plan,
    or the default."""
    if epochs is not None:
        return epochs, "user"
    if plan and state.start is not None:
        info = plan.get((state.start.workload, state.start.batch_size))
        if info is not None:
            return info.n_ep, info.describe()
    if state.start is not None and state.start.epochs:
        return float(state.start.epochs), "planned"
    return float(DEFAULT_EPOCHS), "default"


def _cost(price: float | None, seconds: float, rule: str) -> float | None:
    return None if price is None else cost_usd(price, seconds, rule)


def estimate_row(
    state: ProbeState,
    pricing: Pricing,
    n_ep: float,
    *,
    use_validation: bool = True,
    equation: str = "auto",
    statistic: str = DEFAULT_STATISTIC,
) -> dict[str, Any]:
    """The JSON-ready row for one probe at ``n_ep`` epochs. Raises NoEstimate."""
    est = estimate_runtime(state, n_ep, use_validation=use_validation, equation=equation,
                           statistic=statistic)
    price, price_source, rule = pricing.price_for(state)
    start = state.start
    assert start is not None
    return {
        "probe": start.probe,
        "instance": start.instance,
        "batch_size": start.batch_size,
        "workload": start.workload,
        "epochs": n_ep,
        "runtime_s": est.runtime_s,
        "runtime_low_s": est.low_s,
        "runtime_high_s": est.high_s,
        "cost_usd": _cost(price, est.runtime_s, rule),
        "cost_low_usd": _cost(price, est.low_s, rule),
        "cost_high_usd": _cost(price, est.high_s, rule),
        "price_per_hour": price,
        "price_source": price_source,
        "billing": rule,
        "equation": est.equation,
        "terms": est.terms.as_dict(),
        "formula": est.formula(),
        "notes": list(est.notes),
        "status": state.status,
        "steps_observed": state.steps,
    }


def is_pareto(times: Sequence[float], costs: Sequence[float | None]) -> list[bool]:
    """True where no other row is at least as good on both and better on one. No cost: False."""
    out = []
    pts = [(t, c) for t, c in zip(times, costs)]
    for i, (t, c) in enumerate(pts):
        if c is None or math.isnan(c) or math.isnan(t):
            out.append(False)
            continue
        dominated = False
        for j, (t2, c2) in enumerate(pts):
            if j == i or c2 is None or math.isnan(c2):
                continue
            if t2 <= t and c2 <= c and (t2 < t or c2 < c):
                dominated = True
                break
        out.append(not dominated)
    return out


def rank(rows: list[dict[str, Any]], by: str = "time", weight: float = 0.5) -> pd.DataFrame:
    """Sorted ranking with relative columns and the Pareto flag. Ties keep a stable order.

    ``by="weighted"`` orders by score = weight*rel_time + (1-weight)*rel_cost (the dissertation's
    future work): weight 1 is the fastest view, 0 the cheapest."""
    if by not in SORT_KEYS:
        raise ValueError(f"--by must be one of {', '.join(SORT_KEYS)}, got {by!r}")
    base = ["probe", "instance", "batch_size", "epochs", "runtime_s", "runtime_low_s",
            "runtime_high_s", "cost_usd", "cost_low_usd", "cost_high_usd", "price_per_hour",
            "equation"]
    extra = [k for r in rows for k in r if k not in base]
    columns = base + list(dict.fromkeys(extra))
    import pandas as pd

    df = pd.DataFrame([{k: r.get(k) for k in columns} for r in rows], columns=columns)
    df["cost_usd"] = pd.to_numeric(df["cost_usd"], errors="coerce")
    df["rel_time"] = df["runtime_s"] / df["runtime_s"].min() if len(df) else []
    min_cost = df["cost_usd"].min(skipna=True) if len(df) else math.nan
    df["rel_cost"] = df["cost_usd"] / min_cost if min_cost and not math.isnan(min_cost) else math.nan
    costs = [None if math.isnan(c) else c for c in df["cost_usd"].tolist()]
    df["pareto"] = is_pareto(df["runtime_s"].tolist(), costs)
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"the weight must be between 0 and 1, got {weight}")
    df["score"] = weight * df["rel_time"] + (1 - weight) * df["rel_cost"]
    key = SORT_KEYS[by]
    df = df.sort_values([key, "runtime_s", "instance", "batch_size", "probe"],
                        kind="mergesort", na_position="last").reset_index(drop=True)
    if by == "weighted":
        df["relative"] = df["score"] / df["score"].min(skipna=True)
    else:
        df["relative"] = df["rel_time"] if by == "time" else df["rel_cost"]
    return df


def ranking_records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as plain dicts with JSON-friendly values (NaN -> None)."""
    out = []
    for rec in df.to_dict(orient="records"):
        clean: dict[str, Any] = {}
        for k, v in rec.items():
            if isinstance(v, float) and math.isnan(v):
                v = None
            elif hasattr(v, "item"):
                v = v.item()
            clean[str(k)] = v
        out.append(clean)
    return out


__all__ = ["DEFAULT_EPOCHS", "NoEstimate", "Pricing", "choose_epochs", "estimate_row",
           "is_pareto", "rank", "ranking_records", "Estimate"]
