"""Price catalog and billing: what an instance costs per hour, and what a run of T seconds costs."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any

BILLING_RULES = ("per-second-60", "per-second", "per-minute", "per-hour", "exact")

# A price seen on the page or data set ``source_url`` names; anything else says "unverified".
LISTED, UNVERIFIED = "listed", "unverified"

# GPU generations, newest first: the order `prices` and the setup screen list instances in.
# Each pattern matches the model as catalogs, AWS and gpuhunt write it ("H100", "A100-80GB",
# "T4g", "L40S"); \b keeps "L4" from matching "L40S" and "A10" from matching "A100".
GENERATIONS: tuple[tuple[str, str], ...] = (
    ("B300", r"\bG?B300"), ("B200", r"\bG?B200"), ("H200", r"\bG?H200"),
    ("H100", r"\bH100"), ("MI300X", r"\bMI3\d\dX?\b"), ("L40S", r"\bL40S?\b"), ("L4", r"\bL4\b"),
    ("A100", r"\bA100"), ("A10G", r"\bA10G?\b"), ("T4", r"\bT4G?\b"), ("V100", r"\bV100"),
    ("TPU v3", r"\bTPU[- ]?v[23]\b"), ("P100", r"\bP100\b"), ("M60", r"\bM60\b"), ("K520", r"\bK520\b"),
    ("K80", r"\bK80\b"),
)
_GENERATION_RES = tuple(re.compile(pattern, re.I) for _, pattern in GENERATIONS)
# where a GPU no pattern knows goes: after today's GPUs (T4 and newer), before the old ones
_UNKNOWN_GPU = 0.5 + next(i for i, (name, _) in enumerate(GENERATIONS) if name == "T4")


@dataclass(frozen=True, slots=True)
class InstanceType:
    instance: str
    provider: str = ""
    service: str = ""
    region: str = ""
    gpu_model: str = ""
    gpu_count: int = 0
    gpu_memory_gb: float | None = None
    vcpus: int | None = None
    memory_gb: float | None = None
    price_per_hour: float | None = None
    price_date: str = ""
    source: str = ""
    billing: str = "per-second-60"
    note: str = ""
    gpu_name: str = ""  # as the vendor writes it (nvidia-smi): "NVIDIA H100 80GB HBM3"
    source_url: str = ""  # the public page or data file the price was read on
    price_status: str = ""  # LISTED, UNVERIFIED, or "" (a live source: Pricing API, gpuhunt)

    @property
    def unverified(self) -> bool:
        return self.price_status == UNVERIFIED

    def priced(self, price: float, source: str) -> InstanceType:
        """This instance at a price someone set (config, CLI, a spot cache): no date, no page,
        and nothing left to doubt about the catalog's own price."""
        return replace(self, price_per_hour=float(price), source=source, price_date="",
                       source_url="", price_status="")

    @property
    def gpus(self) -> str:
        if not self.gpu_count:
            return "-"
        return f"{self.gpu_count}x {self.gpu_model}"


def generation_rank(gpu_model: str) -> float:
    """0 for the newest GPU generation, larger for older ones; no GPU sorts after every GPU."""
    if not gpu_model:
        return float(len(GENERATIONS))
    for rank, pattern in enumerate(_GENERATION_RES):
        if pattern.search(gpu_model):
            return float(rank)
    return _UNKNOWN_GPU


def newest_first(instances: Iterable[InstanceType]) -> list[InstanceType]:
    """Newest GPU generation first; within one, cheapest first (no price last), then by name."""
    def key(i: InstanceType) -> tuple[float, bool, float, str]:
        price = i.price_per_hour
        return (generation_rank(i.gpu_model), price is None, price or 0.0, i.instance)
    return sorted(instances, key=key)


def billed_seconds(runtime_s: float, rule: str) -> float:
    """Seconds the provider charges for a run of ``runtime_s`` under ``rule``."""
    if runtime_s <= 0:
        return 0.0
    if rule == "exact" or rule == "per-second":
        return runtime_s if rule == "exact" else float(math.ceil(runtime_s))
    if rule == "per-second-60":
        return float(max(60, math.ceil(runtime_s)))
    if rule == "per-minute":
        return 60.0 * math.ceil(runtime_s / 60)
    if rule == "per-hour":
        return 3600.0 * math.ceil(runtime_s / 3600)
    raise ValueError(f"unknown billing rule {rule!r}; one of {', '.join(BILLING_RULES)}")


def cost_usd(price_per_hour: float, runtime_s: float, rule: str = "exact") -> float:
    return price_per_hour * billed_seconds(runtime_s, rule) / 3600.0


class Catalog:
    """Instance types by name. Embedded data, overridden by user prices (config or CLI)."""

    def __init__(self, instances: list[InstanceType], date: str = "", source: str = "embedded"):
        self._by_name = {i.instance: i for i in instances}
        self.date = date
        self.source = source

    @classmethod
    def embedded(cls) -> Catalog:
        text = resources.files(__package__).joinpath("catalog.json").read_text(encoding="utf-8")
        return cls.from_document(json.loads(text), source="embedded")

    @classmethod
    def from_document(cls, doc: dict[str, Any], source: str) -> Catalog:
        fields = set(InstanceType.__dataclass_fields__)
        rows = [InstanceType(**{k: v for k, v in r.items() if k in fields}) for r in doc["instances"]]
        return cls(rows, date=str(doc.get("catalog_date", "")), source=source)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._by_name.values())

    def __len__(self) -> int:
        return len(self._by_name)

    def get(self, name: str) -> InstanceType | None:
        return self._by_name.get(name)

    def with_prices(self, overrides: dict[str, float], source: str = "user") -> Catalog:
        """A copy where each named instance costs the given $/h (unknown names are added)."""
        rows = dict(self._by_name)
        for name, price in overrides.items():
            base = rows.get(name) or InstanceType(instance=name)
            rows[name] = base.priced(price, source)
        return Catalog(list(rows.values()), self.date, self.source)

    def price(self, name: str) -> tuple[float | None, str]:
        """($/h, where it came from) for an instance; (None, reason) when unknown."""
        inst = self._by_name.get(name)
        if inst is None or inst.price_per_hour is None:
            return None, f"no price for instance {name!r}" if name else "no instance type in the log"
        when = f", {inst.price_date}" if inst.price_date else ""
        doubt = f", {UNVERIFIED}" if inst.unverified else ""
        return inst.price_per_hour, f"{inst.source}{when}{doubt}"
