"""Price catalog and billing: what an instance costs per hour, and what a run of T seconds costs."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any

BILLING_RULES = ("per-second-60", "per-second", "per-minute", "per-hour", "exact")


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

    @property
    def gpus(self) -> str:
        if not self.gpu_count:
            return "-"
        return f"{self.gpu_count}x {self.gpu_model}"


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
            rows[name] = replace(base, price_per_hour=float(price), source=source, price_date="")
        return Catalog(list(rows.values()), self.date, self.source)

    def price(self, name: str) -> tuple[float | None, str]:
        """($/h, where it came from) for an instance; (None, reason) when unknown."""
        inst = self._by_name.get(name)
        if inst is None or inst.price_per_hour is None:
            return None, f"no price for instance {name!r}" if name else "no instance type in the log"
        when = f", {inst.price_date}" if inst.price_date else ""
        return inst.price_per_hour, f"{inst.source}{when}"
