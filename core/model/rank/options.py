"""What a ranking is asked with besides the probes: how each probe is priced (``Pricing``: the
catalog, a user's prices, a billing rule) and the options that change the ranking
(``RankOptions``: the job's length, the view, the estimate's equation and statistic, the epoch
plan of full runs, instances to predict)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ...agent.steady import DEFAULT_STATISTIC
from ..epochs import EpochsInfo
from ..estimate.blocks import RunLength
from ..pricing import Catalog
from ..state import ProbeState

VIEWS = ("time", "cost", "weighted")
EpochPlan = Mapping[tuple[str, int], EpochsInfo]


@dataclass(frozen=True)
class Pricing:
    """How to price a probe: the catalog, user overrides and an optional billing override."""

    catalog: Catalog
    overrides: Mapping[str, float] | None = None
    billing: str | None = None

    def price_for(self, state: ProbeState) -> tuple[float | None, str, str]:
        """($/h, source, billing rule) for a probe's instance: the one price lookup (its
        precedence: core/cloud/price_lookup.py). The log's own price is the last resort."""
        price, source, rule = self.price_of(state.start.instance if state.start else "")
        if price is None and state.start and state.start.price_per_hour is not None:
            return state.start.price_per_hour, "log", rule
        return price, source, rule

    def price_of(self, instance: str) -> tuple[float | None, str, str]:
        """($/h, source, billing rule) for an instance by name: a user's override, else the
        catalog's (a predicted row has no log to fall back on)."""
        inst = self.catalog.get(instance)
        rule = self.billing or (inst.billing if inst else "exact")
        if self.overrides and instance in self.overrides:
            return self.overrides[instance], "user", rule
        return (*self.catalog.price(instance), rule)


@dataclass(frozen=True)
class RankOptions:
    """Everything that changes a ranking besides the probes themselves."""

    epochs: float | None = None  # N_ep; None: the epoch plan, the log's plan, else DEFAULT_EPOCHS
    steps: int | None = None  # the job's total training steps (wins over epochs)
    by: str = "time"  # time | cost | weighted
    weight: float = 0.5  # weighted: score = weight*rel_time + (1-weight)*rel_cost
    use_validation: bool = True
    equation: str = "auto"
    statistic: str = DEFAULT_STATISTIC
    epoch_plan: EpochPlan | None = None  # methodology 1: N_ep per (workload, batch) from full runs
    run_lengths: Mapping[tuple[str, int], RunLength] | None = None  # runs timed in blocks (same)
    min_accuracy: float | None = None
    workload: str | None = None  # rank only this workload
    with_setup: bool = False  # add each host's measured setup to its job (a fresh instance pays it)
    predict: tuple[str, ...] = ()  # instances nobody probed, predicted (predict/predicted.py)

    def __post_init__(self) -> None:
        if self.by not in VIEWS:
            raise ValueError(f"--by must be one of {', '.join(VIEWS)}, got {self.by!r}")
        if not 0.0 <= self.weight <= 1.0:
            raise ValueError(f"the weight must be between 0 and 1, got {self.weight}")
