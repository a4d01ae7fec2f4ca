"""Other clouds' GPU offers through gpuhunt (probecast[gpuhunt]), into the dated price cache.

``probecast prices --refresh --provider gpuhunt[:aws,lambdalabs,...]`` reads gpuhunt's offline
catalogs (dstack's published zip of one CSV per provider; ``GPUHUNT_CATALOG_URL`` points it
elsewhere, a ``file://`` directory included, and ``GPUHUNT_CATALOG_DIR`` at plain CSVs) and
writes one cache file per provider, ``prices-gpuhunt-<provider>.json``, beside the AWS one and in
the same format. Each row is named ``<instance>@<provider>/<region>`` and carries its provider
and region; spot offers go to the file's ``spot`` prices under the same names. The embedded
catalog stays the offline default; ``current_catalog`` adds these rows when they are fresh.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from pathlib import Path
from typing import Any

from ..model.pricing import Catalog, InstanceType

PREFIX = "gpuhunt"


class GpuhuntError(Exception):
    """One line for the user."""


def cache_dir() -> Path:
    """The directory of the AWS price cache (prices.cache_dir; not imported: prices reads us)."""
    import os

    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "probecast"


def parse_provider_option(text: str) -> list[str] | None:
    """``gpuhunt`` -> None (every offline provider); ``gpuhunt:aws,lambdalabs`` -> the list."""
    head, _, rest = text.partition(":")
    if head.strip().lower() != PREFIX:
        raise GpuhuntError(f"--provider {text!r}: only gpuhunt[:PROVIDER,...] is known "
                           "(AWS prices come from --refresh without --provider)")
    names = [p.strip().lower() for p in rest.split(",") if p.strip()]
    return names or None


def offline_providers() -> list[str]:
    from gpuhunt._internal.catalog import OFFLINE_PROVIDERS

    return list(OFFLINE_PROVIDERS)


def fetch_offers(providers: list[str] | None = None) -> dict[str, list[Any]]:
    """{provider: gpuhunt CatalogItems with at least one GPU} from gpuhunt's offline catalogs."""
    try:
        import gpuhunt
    except ImportError:
        raise GpuhuntError("gpuhunt is not installed: pip install 'probecast[gpuhunt]'") from None
    known = offline_providers()
    wanted = providers or known
    unknown = [p for p in wanted if p not in known]
    if unknown:
        raise GpuhuntError(f"gpuhunt has no offline catalog for {', '.join(unknown)}; "
                           f"known: {', '.join(known)}")
    catalog = gpuhunt.Catalog(balance_resources=False, auto_reload=False)
    import os

    if os.environ.get("GPUHUNT_CATALOG_DIR") is None:
        # every offline provider is fetched; one we did not ask for may fail quietly
        quiet = logging.getLogger("gpuhunt._internal.catalog")
        level = quiet.level
        quiet.setLevel(logging.CRITICAL)
        try:
            catalog.load()
        except Exception as exc:  # noqa: BLE001 - gpuhunt: no provider could be loaded
            raise GpuhuntError(f"gpuhunt could not load any catalog: {_cause(exc)}") from exc
        finally:
            quiet.setLevel(level)
        missing = [p for p in wanted if p not in catalog.catalog]
        if missing and providers:
            raise GpuhuntError(f"gpuhunt could not load the catalog of {', '.join(missing)} "
                               "(network? GPUHUNT_CATALOG_URL?)")
        wanted = [p for p in wanted if p in catalog.catalog]
    out: dict[str, list[Any]] = {}
    for p in wanted:
        try:
            out[p] = catalog.query(provider=p, min_gpu_count=1)
        except OSError as exc:
            raise GpuhuntError(f"gpuhunt catalog of {p}: {exc}") from exc
    return out


def _cause(exc: BaseException) -> str:
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return f"{type(exc).__name__}: {exc}"


def instance_name(instance: str, provider: str, region: str) -> str:
    return f"{instance}@{provider}/{region}"


def rows_from_offers(provider: str, items: list[Any]) -> tuple[list[InstanceType], dict[str, float]]:
    """On-demand rows (cheapest per name) and spot prices (cheapest per name)."""
    today = dt.date.today().isoformat()
    rows: dict[str, InstanceType] = {}
    spot: dict[str, float] = {}
    for it in items:
        name = instance_name(it.instance_name, provider, it.location)
        if it.spot:
            if name not in spot or it.price < spot[name]:
                spot[name] = float(it.price)
            continue
        cur = rows.get(name)
        if cur is not None and cur.price_per_hour is not None and cur.price_per_hour <= it.price:
            continue
        rows[name] = InstanceType(
            instance=name, provider=provider, service=PREFIX, region=it.location,
            gpu_model=it.gpu_name or "", gpu_count=int(it.gpu_count),
            gpu_memory_gb=float(it.gpu_memory) if it.gpu_memory else None,
            vcpus=int(it.cpu) if it.cpu else None,
            memory_gb=float(it.memory) if it.memory else None, price_per_hour=float(it.price),
            price_date=today, source=f"gpuhunt ({provider})", billing="per-second-60")
    return sorted(rows.values(), key=lambda r: r.instance), spot


def cache_path(provider: str) -> Path:
    return cache_dir() / f"prices-{PREFIX}-{provider}.json"


def save_cache(provider: str, rows: list[InstanceType], spot: dict[str, float]) -> Path:
    """The same document as the AWS cache: catalog_date, instances, spot (plus provider)."""
    path = cache_path(provider)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"catalog_date": dt.date.today().isoformat(), "provider": provider, "region": "*",
           "source": f"gpuhunt ({provider})",
           "instances": [{k: getattr(r, k) for k in r.__dataclass_fields__} for r in rows],
           "spot": spot}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=0))
    tmp.replace(path)
    return path


def refresh(providers: list[str] | None = None) -> list[tuple[str, int, int, Path]]:
    """Read gpuhunt and write the caches: [(provider, on-demand rows, spot prices, file)]."""
    out = []
    for provider, items in fetch_offers(providers).items():
        rows, spot = rows_from_offers(provider, items)
        out.append((provider, len(rows), len(spot), save_cache(provider, rows, spot)))
    return out


def cached_documents(max_age_days: int = 30) -> list[tuple[str, dict[str, Any], Path, bool]]:
    """[(provider, document, file, fresh)] of every gpuhunt cache there is."""
    out = []
    for path in sorted(cache_dir().glob(f"prices-{PREFIX}-*.json")):
        try:
            doc = json.loads(path.read_text())
            taken = dt.date.fromisoformat(doc["catalog_date"])
        except (OSError, ValueError, KeyError):
            continue
        fresh = (dt.date.today() - taken).days <= max_age_days
        out.append((str(doc.get("provider") or path.stem.split("-", 2)[-1]), doc, path, fresh))
    return out


def cached_rows(max_age_days: int = 30) -> list[InstanceType]:
    rows: list[InstanceType] = []
    for _provider, doc, path, fresh in cached_documents(max_age_days):
        if fresh:
            rows.extend(Catalog.from_document(doc, source=f"gpuhunt cache {path}"))
    return rows


def cached_spot(max_age_days: int = 30) -> dict[str, float]:
    spot: dict[str, float] = {}
    for _provider, doc, _path, fresh in cached_documents(max_age_days):
        if fresh:
            spot.update({str(k): float(v) for k, v in doc.get("spot", {}).items()})
    return spot
