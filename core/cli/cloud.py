"""`prices` and `cleanup`: the cloud side of the command line (AWS, gpuhunt, SkyPilot)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from ..model.pricing import UNVERIFIED, InstanceType, newest_first
from .common import warn


def cmd_prices(ns: argparse.Namespace, out: TextIO) -> int:
    from ..cloud.client import AwsError, client
    from ..cloud.prices import (cached_spot_prices, current_catalog, fetch_ondemand_prices,
                                gpu_facts, latest_spot_prices, save_price_cache)

    families = [f.strip() for f in (ns.family or "").split(",") if f.strip()]
    spot: dict[str, float] = {}
    provider = getattr(ns, "provider", None)
    if provider:
        return _prices_gpuhunt(ns, out, provider)
    if ns.refresh:
        try:
            # The Pricing API lives in us-east-1 whatever region is priced.
            rows = fetch_ondemand_prices(client("pricing", "us-east-1"), ns.region, families)
            ec2 = client("ec2", ns.region)
            facts = {f.instance: f for f in gpu_facts(ec2, [r.instance for r in rows][:100] or None)}
            from dataclasses import replace

            rows = [replace(r, gpu_model=facts[r.instance].gpu_model or r.gpu_model,
                            gpu_memory_gb=facts[r.instance].gpu_memory_gb or r.gpu_memory_gb)
                    if r.instance in facts else r for r in rows]
            if ns.spot and rows:
                by_type = latest_spot_prices(ec2, [r.instance for r in rows])
                spot = {t: min(z.values()) for t, z in by_type.items() if z}
        except AwsError as exc:
            warn(str(exc))
            return 1
        path = save_price_cache(rows, ns.region, spot)
        out.write(f"{len(rows)} GPU instance prices for {ns.region} cached in {path}\n")
    catalog = current_catalog(ns.region)
    if ns.spot and not spot:
        spot = cached_spot_prices(ns.region)
    rows_out = newest_first(i for i in catalog if not families or any(
        i.instance.split(".")[0] == f or i.instance.startswith(f + ".") for f in families))
    if ns.json:
        json.dump([{**{k: getattr(i, k) for k in i.__dataclass_fields__},
                    "spot_price_per_hour": spot.get(i.instance)} for i in rows_out], out, indent=2)
        out.write("\n")
        return 0
    out.write(f"Price catalog: {catalog.source}, dated {catalog.date}\n")
    _print_provider_dates(out, catalog.date or "-")
    rows_out = [i for i in rows_out if i.service != "gpuhunt"]  # `--provider gpuhunt` lists them
    _print_rows(rows_out, ns, spot, out)
    return 0


def _print_provider_dates(out: TextIO, aws_date: str) -> None:
    """The date of each provider's prices: AWS (embedded or refreshed), each gpuhunt cache."""
    from ..cloud.gpuhunt_prices import cached_documents

    docs = cached_documents()
    if not docs:
        return
    out.write(f"  aws (embedded or AWS Pricing API): {aws_date}\n")
    for provider, doc, path, fresh in docs:
        n = len(doc.get("instances", []))
        state = "" if fresh else " - older than 30 days, not used"
        out.write(f"  gpuhunt:{provider}: {n} offers, {doc.get('catalog_date')}{state} "
                  f"(probecast prices --provider gpuhunt:{provider})\n")


def _prices_gpuhunt(ns: argparse.Namespace, out: TextIO, option: str) -> int:
    """`prices [--refresh] --provider gpuhunt[:P,...]`: other clouds' offers through gpuhunt."""
    from ..cloud.gpuhunt_prices import (GpuhuntError, cached_documents, parse_provider_option,
                                        refresh)
    from ..cloud.prices import cached_spot_prices
    from ..model.pricing import Catalog

    try:
        wanted = parse_provider_option(option)
        if ns.refresh:
            for provider, n, n_spot, path in refresh(wanted):
                out.write(f"gpuhunt:{provider}: {n} GPU offers ({n_spot} spot) cached in {path}\n")
    except GpuhuntError as exc:
        warn(str(exc))
        return 1
    docs = [d for d in cached_documents() if wanted is None or d[0] in wanted]
    if not docs:
        warn(f"no gpuhunt prices cached for {option}: run `probecast prices --refresh "
             f"--provider {option}`")
        return 1
    rows: list[InstanceType] = []
    for provider, doc, path, fresh in docs:
        if not ns.json:
            out.write(f"gpuhunt:{provider}: dated {doc.get('catalog_date')} ({path})"
                      f"{'' if fresh else ' - older than 30 days, not used for ranking'}\n")
        rows.extend(Catalog.from_document(doc, source=f"gpuhunt cache {path}"))
    families = [f.strip() for f in (ns.family or "").split(",") if f.strip()]
    if families:
        rows = [r for r in rows if any(r.instance.startswith(f) or r.gpu_model.lower() == f.lower()
                                       for f in families)]
    spot = cached_spot_prices(ns.region) if ns.spot else {}
    rows = newest_first(rows)
    if ns.json:
        json.dump([{**{k: getattr(i, k) for k in i.__dataclass_fields__},
                    "spot_price_per_hour": spot.get(i.instance)} for i in rows], out, indent=2)
        out.write("\n")
        return 0
    _print_rows(rows, ns, spot, out)
    return 0


def _print_rows(rows_out: list[InstanceType], ns: argparse.Namespace, spot: dict[str, float],
                out: TextIO) -> None:
    """One line a row, newest GPUs first as given; an unverified price ends in '?'."""
    width = max([16] + [len(i.instance) for i in rows_out])
    spot_h = f" {'spot':>7}" if ns.spot else ""
    out.write(f"{'instance':<{width}} {'GPUs':<10} {'GPU mem':>7} {'vCPU':>4} {'$/h':>9}{spot_h}  {'date':<10}\n")
    for i in rows_out:
        mem = f"{i.gpu_memory_gb:g}G" if i.gpu_memory_gb else "-"
        sp = f" {spot[i.instance]:>7.3f}" if ns.spot and i.instance in spot else (" " * 8 if ns.spot else "")
        out.write(f"{i.instance:<{width}} {i.gpus:<10} {mem:>7} {i.vcpus or '-':>4} "
                  f"{price_text(i):>9}{sp}  {i.price_date:<10}\n")
    if any(i.unverified for i in rows_out):
        out.write(f"?: {UNVERIFIED}, no public page found; [prices] in probecast.toml sets yours\n")


def price_text(i: InstanceType) -> str:
    """$/h to 4 significant digits, '-' for none; '?' after one nobody could verify."""
    price = f"{i.price_per_hour:.4g}" if i.price_per_hour is not None else "-"
    return price + ("?" if i.unverified else " ")


def cmd_cleanup(ns: argparse.Namespace, out: TextIO) -> int:
    if getattr(ns, "skypilot", False):
        return _cleanup_skypilot(ns, out)
    from ..cloud.client import AwsError, client
    from ..cloud.provision import find_leftovers, owner, terminate

    try:
        ec2 = client("ec2", ns.region)
        left = find_leftovers(ec2, ns.owner)
    except AwsError as exc:
        warn(str(exc))
        return 1
    if not left:
        out.write(f"no probecast instances of {ns.owner or owner()} in {ns.region}\n")
        return 0
    for i in left:
        out.write(f"{i['id']}  {i['type']:<14} {i['state']:<9} session {i['session']}  "
                  f"launched {i['launched']}\n")
    if ns.dry_run:
        out.write(f"{len(left)} instance(s) would be terminated (dry run)\n")
        return 0
    if not ns.yes:
        if not sys.stdin.isatty():
            warn("not terminating without --yes (no terminal to ask on)")
            return 1
        answer = input(f"terminate these {len(left)} instance(s)? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            out.write("nothing terminated\n")
            return 0
    try:
        terminate(ec2, [i["id"] for i in left])
    except AwsError as exc:
        warn(str(exc))
        return 1
    out.write(f"terminated {len(left)} instance(s)\n")
    return 0


def _cleanup_skypilot(ns: argparse.Namespace, out: TextIO) -> int:
    """`cleanup --skypilot`: `sky down` the clusters named probecast-<owner>-... (`sky status`)."""
    from ..cloud.sky_launch import down, find_leftovers
    from ..cloud.skypilot import SkyPilotError, cluster_prefix

    try:
        left = find_leftovers(ns.owner)
    except SkyPilotError as exc:
        warn(str(exc))
        return 1
    if not left:
        out.write(f"no SkyPilot clusters named {cluster_prefix(ns.owner)}*\n")
        return 0
    for c in left:
        out.write(f"{c['name']}  {c['status']}  launched {c['launched']}\n")
    if ns.dry_run:
        out.write(f"{len(left)} cluster(s) would be torn down (dry run)\n")
        return 0
    if not ns.yes:
        if not sys.stdin.isatty():
            warn("not tearing down without --yes (no terminal to ask on)")
            return 1
        if input(f"sky down these {len(left)} cluster(s)? [y/N] ").strip().lower() not in ("y", "yes"):
            out.write("nothing torn down\n")
            return 0
    try:
        down([c["name"] for c in left])
    except SkyPilotError as exc:
        warn(str(exc))
        return 1
    out.write(f"tore down {len(left)} cluster(s)\n")
    return 0
