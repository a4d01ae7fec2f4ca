"""Live prices: on-demand (Pricing API), spot, GPU facts, and the dated local price cache."""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..model.pricing import Catalog, InstanceType
from .client import GPU_FAMILIES, explain

def _gib(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return float(text.replace(",", "").split()[0])
    except (ValueError, IndexError):
        return None


def parse_price_list(items: Iterable[str]) -> list[InstanceType]:
    """Parse Pricing API ``PriceList`` entries (JSON strings) into catalog rows."""
    out: dict[str, InstanceType] = {}
    for raw in items:
        doc = json.loads(raw)
        attrs = doc.get("product", {}).get("attributes", {})
        name = attrs.get("instanceType")
        if not name:
            continue
        price = None
        for term in doc.get("terms", {}).get("OnDemand", {}).values():
            for dim in term.get("priceDimensions", {}).values():
                if dim.get("unit") in ("Hrs", "Hours"):
                    try:
                        price = float(dim["pricePerUnit"]["USD"])
                    except (KeyError, ValueError):
                        continue
        if price is None or price <= 0:
            continue
        gpus = attrs.get("gpu")
        out[name] = InstanceType(
            instance=name, provider="aws", service="ec2",
            region=attrs.get("regionCode", ""),
            gpu_model="", gpu_count=int(gpus) if gpus and gpus.isdigit() else 0,
            gpu_memory_gb=_gib(attrs.get("gpuMemory")),
            vcpus=int(attrs["vcpu"]) if attrs.get("vcpu", "").isdigit() else None,
            memory_gb=_gib(attrs.get("memory")), price_per_hour=price,
            price_date=dt.date.today().isoformat(), source="AWS Pricing API", billing="per-second-60",
        )
    return sorted(out.values(), key=lambda i: i.instance)


def fetch_ondemand_prices(pricing: Any, region: str, families: Iterable[str] = ()) -> list[InstanceType]:
    """On-demand Linux prices of GPU instance types, filtered server-side, all pages."""
    filters = [
        {"Type": "TERM_MATCH", "Field": "regionCode", "Value": region},
        {"Type": "TERM_MATCH", "Field": "operatingSystem", "Value": "Linux"},
        {"Type": "TERM_MATCH", "Field": "tenancy", "Value": "Shared"},
        {"Type": "TERM_MATCH", "Field": "preInstalledSw", "Value": "NA"},
        {"Type": "TERM_MATCH", "Field": "capacitystatus", "Value": "Used"},
        {"Type": "TERM_MATCH", "Field": "instanceFamily", "Value": "GPU instance"},
    ]
    items: list[str] = []
    try:
        for page in pricing.get_paginator("get_products").paginate(
                ServiceCode="AmazonEC2", Filters=filters, FormatVersion="aws_v1"):
            items.extend(page.get("PriceList", []))
    except Exception as exc:  # noqa: BLE001
        raise explain(exc, "pricing:GetProducts") from exc
    rows = parse_price_list(items)
    fams = tuple(families)
    if fams:
        rows = [r for r in rows if r.instance.split(".")[0] in fams]
    return rows


def latest_spot_prices(ec2: Any, instance_types: list[str]) -> dict[str, dict[str, float]]:
    """{type: {availability zone: latest Linux spot $/h}}."""
    out: dict[str, dict[str, tuple[dt.datetime, float]]] = {}
    try:
        pages = ec2.get_paginator("describe_spot_price_history").paginate(
            InstanceTypes=instance_types, ProductDescriptions=["Linux/UNIX"],
            StartTime=dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=6))
        for page in pages:
            for p in page.get("SpotPriceHistory", []):
                az, ts, price = p["AvailabilityZone"], p["Timestamp"], float(p["SpotPrice"])
                cur = out.setdefault(p["InstanceType"], {}).get(az)
                if cur is None or ts > cur[0]:
                    out[p["InstanceType"]][az] = (ts, price)
    except Exception as exc:  # noqa: BLE001
        raise explain(exc, "ec2:DescribeSpotPriceHistory") from exc
    return {t: {az: v[1] for az, v in azs.items()} for t, azs in out.items()}


def gpu_facts(ec2: Any, instance_types: list[str] | None = None) -> list[InstanceType]:
    """GPU model/count/memory, vCPUs and memory from describe_instance_types (all pages)."""
    kwargs: dict[str, Any] = {}
    if instance_types:
        kwargs["InstanceTypes"] = instance_types
    else:
        kwargs["Filters"] = [{"Name": "instance-type", "Values": [f"{f}.*" for f in GPU_FAMILIES]}]
    out = []
    try:
        for page in ec2.get_paginator("describe_instance_types").paginate(**kwargs):
            for t in page.get("InstanceTypes", []):
                gpus = t.get("GpuInfo", {}).get("Gpus", [])
                if not gpus:
                    continue
                g = gpus[0]
                out.append(InstanceType(
                    instance=t["InstanceType"], provider="aws", service="ec2",
                    gpu_model=g.get("Name", ""), gpu_count=sum(x.get("Count", 0) for x in gpus),
                    gpu_memory_gb=g.get("MemoryInfo", {}).get("SizeInMiB", 0) / 1024 or None,
                    vcpus=t.get("VCpuInfo", {}).get("DefaultVCpus"),
                    memory_gb=t.get("MemoryInfo", {}).get("SizeInMiB", 0) / 1024 or None,
                    source="ec2:DescribeInstanceTypes"))
    except Exception as exc:  # noqa: BLE001
        raise explain(exc, "ec2:DescribeInstanceTypes") from exc
    return sorted(out, key=lambda i: i.instance)


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "probecast"


def save_price_cache(rows: list[InstanceType], region: str, spot: dict[str, float] | None = None) -> Path:
    path = cache_dir() / f"prices-{region}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"catalog_date": dt.date.today().isoformat(), "region": region,
           "instances": [{k: getattr(r, k) for k in r.__dataclass_fields__} for r in rows],
           "spot": spot or {}}
    path.write_text(json.dumps(doc, indent=1))
    return path


def cached_spot_prices(region: str) -> dict[str, float]:
    """Spot prices saved by the last `prices --refresh --spot` for the region (else empty),
    with the spot offers of fresh gpuhunt caches (named ``<instance>@<provider>/<region>``)."""
    from .gpuhunt_prices import cached_spot

    out = cached_spot()
    try:
        spot = json.loads((cache_dir() / f"prices-{region}.json").read_text()).get("spot", {})
    except (OSError, ValueError):
        return out
    out.update({str(k): float(v) for k, v in spot.items()})
    return out


def current_catalog(region: str = "us-east-1", max_age_days: int = 30) -> Catalog:
    """The embedded catalog, updated by a fresh price cache for the region when there is one,
    plus the rows of fresh gpuhunt caches (``<instance>@<provider>/<region>``: other clouds).

    ``Catalog.source`` says which was used, with its date."""
    aws = _aws_catalog(region, max_age_days)
    from .gpuhunt_prices import cached_rows

    extra = cached_rows(max_age_days)
    if not extra:
        return aws
    rows = {i.instance: i for i in aws}
    for i in extra:
        rows.setdefault(i.instance, i)
    return Catalog(list(rows.values()), date=aws.date, source=f"{aws.source} + gpuhunt caches")


def _aws_catalog(region: str, max_age_days: int) -> Catalog:
    embedded = Catalog.embedded()
    path = cache_dir() / f"prices-{region}.json"
    try:
        doc = json.loads(path.read_text())
        taken = dt.date.fromisoformat(doc["catalog_date"])
    except (OSError, ValueError, KeyError):
        return embedded
    if (dt.date.today() - taken).days > max_age_days:
        embedded.source = f"embedded (cache {path} from {taken} is older than {max_age_days} days)"
        return embedded
    cached = Catalog.from_document(doc, source=f"AWS Pricing API cache {path}")
    rows = {i.instance: i for i in embedded}
    for i in cached:
        base = rows.get(i.instance)
        if base is not None:  # keep the embedded GPU facts where the price list lacks them
            from dataclasses import replace

            i = replace(i, gpu_model=i.gpu_model or base.gpu_model,
                        gpu_name=i.gpu_name or base.gpu_name,
                        gpu_memory_gb=i.gpu_memory_gb or base.gpu_memory_gb)
        rows[i.instance] = i
    return Catalog(list(rows.values()), date=str(taken), source=cached.source)
