"""The `probecast` command line.

    probecast                       the app (TUI) on its embedded default
    probecast estimate LOG...       runtime/cost estimate per probe log
    probecast rank LOG_OR_DIR...    ranking of (instance, batch size) by time or cost
    probecast probe --local ...     run a probe on this machine and save its log
    probecast replay LOG_OR_DIR...  replay saved logs in the app
    probecast prices                the price catalog

Headless commands never import the TUI. Errors name the file and what to do; the exit status is
non-zero only when nothing could be estimated.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Callable
from typing import Any, TextIO

from ..agent.steady import DEFAULT_STATISTIC, STATISTICS
from ..report.fmt import fmt_cost, fmt_duration
from ..model.estimate import DEFAULT_HORIZONS, EQUATIONS, NoEstimate, parse_horizons
from ..model.logstore import ProbeRecord, discover_logs, load_probe
from ..model.pricing import BILLING_RULES
from ..model.ranking import Pricing, choose_epochs, estimate_row, rank, ranking_records


class CliError(Exception):
    """A problem with the command line itself (exit status 2)."""


def _warn(msg: str) -> None:
    print(f"probecast: {msg}", file=sys.stderr)


def _parse_prices(items: list[str] | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        try:
            if not sep or not name:
                raise ValueError
            out[name.strip()] = float(value)
        except ValueError:
            raise CliError(f"--price wants INSTANCE=USD_PER_HOUR, got {item!r}") from None
    return out


def _load_records(paths: list[str]) -> list[ProbeRecord]:
    files, errors = discover_logs(paths)
    for e in errors:
        _warn(e)
    records = []
    for f in files:
        try:
            rec = load_probe(f)
        except OSError as exc:
            _warn(f"{f}: cannot read ({exc.strerror or exc})")
            continue
        if rec.report.malformed:
            _warn(f"{f}: {len(rec.report.malformed)} malformed line(s) skipped - "
                  f"{rec.report.describe_malformed()}")
        records.append(rec)
    return records


def _why_no_estimate(rec: ProbeRecord, exc: NoEstimate) -> str:
    if rec.report.events == 0:
        return f"{rec.path}: empty log (no events) - was the probe started? Re-run it"
    if rec.state.steps == 0:
        status = rec.state.end.status if rec.state.end else "truncated"
        reason = f": {rec.state.end.reason}" if rec.state.end and rec.state.end.reason else ""
        return (f"{rec.path}: no training steps ({status}{reason}) - "
                "check the probe's command and re-run it")
    return f"{rec.path}: cannot estimate - {exc}"


def _epoch_plan(ns: argparse.Namespace) -> dict[tuple[str, int], Any] | None:
    if not getattr(ns, "epochs_from", None):
        return None
    from ..model.epochs import epochs_from_runs

    runs = _load_records(ns.epochs_from)
    plan = epochs_from_runs([r.state for r in runs], getattr(ns, "metric", "val_accuracy"))
    if not plan:
        _warn("--epochs-from: no run with a usable validation curve; using the logs' plans")
    return plan


def _rows_for(records: list[ProbeRecord], pricing: Pricing, epochs: float | None,
              ns: argparse.Namespace) -> list[tuple[ProbeRecord, dict[str, Any]]]:
    out = []
    plan = _epoch_plan(ns)
    for rec in records:
        n_ep, source = choose_epochs(rec.state, epochs, plan)
        try:
            row = estimate_row(rec.state, pricing, n_ep, use_validation=not ns.no_validation,
                               equation=ns.equation, statistic=ns.statistic)
        except NoEstimate as exc:
            _warn(_why_no_estimate(rec, exc))
            continue
        row["epochs_source"] = source
        info = plan.get((row["workload"], row["batch_size"])) if plan else None
        row["expected_accuracy"] = info.accuracy if info else None
        min_acc = getattr(ns, "min_accuracy", None)
        if min_acc is not None:
            if info is None or info.accuracy is None:
                _warn(f"{rec.path}: no accuracy known for batch {row['batch_size']} "
                      "(--min-accuracy needs --epochs-from full runs of it); kept")
            elif info.accuracy < min_acc:
                _warn(f"{rec.path}: batch {row['batch_size']} reaches {info.accuracy:.3f} < "
                      f"--min-accuracy {min_acc:g}; left out")
                continue
        row["path"] = str(rec.path)
        row["truncated"] = rec.report.truncated
        row["malformed_lines"] = len(rec.report.malformed)
        if row["cost_usd"] is None and row["instance"] != "local":
            _warn(f"{rec.path}: no price for instance {row['instance'] or '(none)'!r} - "
                  "add it with --price INSTANCE=USD_PER_HOUR (or price_per_hour in the config)")
        out.append((rec, row))
    return out


def _pricing(ns: argparse.Namespace) -> Pricing:
    from ..cloud.aws import cached_spot_prices, current_catalog

    region = getattr(ns, "region", None) or "us-east-1"
    overrides: dict[str, float] = {}
    if getattr(ns, "spot", False):
        overrides = cached_spot_prices(region)
        if not overrides:
            _warn(f"--spot: no cached spot prices for {region}; run "
                  f"`probecast prices --refresh --spot --region {region}` (on-demand used)")
    overrides.update(_parse_prices(ns.price))
    return Pricing(current_catalog(region), overrides or None, ns.billing)


# ---- estimate -------------------------------------------------------------------------------


def cmd_estimate(ns: argparse.Namespace, out: TextIO) -> int:
    horizons = parse_horizons(ns.horizons) if ns.horizons else DEFAULT_HORIZONS
    pricing = _pricing(ns)
    records = _load_records(ns.logs)
    results = []
    for rec, row in _rows_for(records, pricing, ns.epochs, ns):
        extra = []
        for n in horizons:
            try:
                h = estimate_row(rec.state, pricing, n, use_validation=not ns.no_validation,
                                 equation=ns.equation, statistic=ns.statistic)
            except NoEstimate:
                continue
            extra.append({k: h[k] for k in ("epochs", "runtime_s", "runtime_low_s",
                                             "runtime_high_s", "cost_usd", "equation")})
        row["horizons"] = extra
        results.append(row)
    if ns.json:
        json.dump(results, out, indent=2)
        out.write("\n")
    else:
        for row in results:
            _print_estimate(row, out)
    return 0 if results else 1


def _print_estimate(row: dict[str, Any], out: TextIO) -> None:
    flag = "  (log truncated)" if row["truncated"] else ""
    out.write(f"{row['probe']}  {row['instance'] or '?'}  batch {row['batch_size']}  "
              f"{row['workload']}{flag}\n  {row['path']}\n")
    out.write(f"  Eq. {row['equation']}, {row['epochs']:g} epochs ({row['epochs_source']}): "
              f"{fmt_duration(row['runtime_s'])} "
              f"[{fmt_duration(row['runtime_low_s'])} - {fmt_duration(row['runtime_high_s'])}]"
              f"  {fmt_cost(row['cost_usd'])}\n")
    out.write(f"  {row['formula']}\n")
    if row["horizons"]:
        hs = "  ".join(f"{h['epochs']:g} ep: {fmt_duration(h['runtime_s'])} {fmt_cost(h['cost_usd'])}"
                       for h in row["horizons"])
        out.write(f"  horizons  {hs}\n")
    for note in row["notes"]:
        out.write(f"  note: {note}\n")
    out.write("\n")


# ---- rank -----------------------------------------------------------------------------------


def cmd_rank(ns: argparse.Namespace, out: TextIO) -> int:
    pricing = _pricing(ns)
    records = _load_records(ns.logs)
    pairs = _rows_for(records, pricing, ns.epochs, ns)
    if not pairs:
        return 1
    _add_crossovers(pairs, ns)
    # Relative columns compare runs of one job: rank each workload on its own.
    groups: dict[str, list[dict[str, Any]]] = {}
    for _, row in pairs:
        groups.setdefault(row["workload"], []).append(row)
    ranked = [(w, ranking_records(rank(g, ns.by, ns.weight))) for w, g in groups.items()]
    recs = [r for _, g in ranked for r in g]
    if ns.json:
        json.dump(recs, out, indent=2)
        out.write("\n")
    elif ns.csv:
        flat = [{k: json.dumps(v) if isinstance(v, (dict, list)) else v for k, v in r.items()}
                for r in recs]
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(flat[0].keys()), lineterminator="\n")
        writer.writeheader()
        writer.writerows(flat)
        out.write(buf.getvalue())
    else:
        for i, (workload, group) in enumerate(ranked):
            if len(ranked) > 1:
                out.write(("\n" if i else "") + f"== {workload or '(no workload)'} ==\n")
            _print_ranking(group, group, ns, out)
        _print_decision_cost(pairs, [r for _, r in pairs], out)
    return 0


def _print_decision_cost(pairs: list[tuple[ProbeRecord, dict[str, Any]]],
                         rows: list[dict[str, Any]], out: TextIO) -> None:
    """seeds/001 Table 5.14: what the probes cost vs running every candidate to the end."""
    from ..model.pricing import cost_usd

    probes = 0.0
    full = 0.0
    priced = 0
    for rec, row in pairs:
        price = row.get("price_per_hour")
        if price is None or row.get("cost_usd") is None:
            continue
        priced += 1
        probes += cost_usd(price, rec.state.elapsed, row.get("billing") or "exact")
        full += row["cost_usd"]
    if priced and full > 0:
        out.write(f"deciding cost: probes {fmt_cost(probes)} vs {fmt_cost(full)} running all "
                  f"{priced} to the end ({1 - probes / full:.0%} saved)\n")


def _add_crossovers(pairs: list[tuple[ProbeRecord, dict[str, Any]]], ns: argparse.Namespace) -> None:
    """Where each row trades places with another as N_ep grows (exact, per workload)."""
    from ..model.crossover import cost_crossovers, crossovers_for, line_for, runtime_crossovers

    by_workload: dict[str, list[tuple[ProbeRecord, dict[str, Any]]]] = {}
    for rec, row in pairs:
        by_workload.setdefault(row["workload"], []).append((rec, row))
    for group in by_workload.values():
        lines, labels = [], {}
        for rec, row in group:
            key = row["path"]
            labels[key] = f"{row['instance'] or row['probe']} b{row['batch_size']}"
            try:
                lines.append(line_for(rec.state, key, labels[key], row["price_per_hour"],
                                      row["billing"], use_validation=not ns.no_validation,
                                      equation=ns.equation, statistic=ns.statistic))
            except NoEstimate:
                continue
        crossings = runtime_crossovers(lines) + cost_crossovers(lines)
        for _, row in group:
            row["crossovers"] = crossovers_for(row["path"], crossings, labels)


def _print_ranking(recs: list[dict[str, Any]], rows: list[dict[str, Any]],
                   ns: argparse.Namespace, out: TextIO) -> None:
    sources = {r["epochs_source"] for r in rows}
    epochs = {r["epochs"] for r in rows}
    if len(epochs) == 1:
        ep = f"{next(iter(epochs)):g} epochs ({', '.join(sorted(sources))})"
    else:
        ep = "each log's planned epochs"
    view = {"time": "fastest", "cost": "cheapest"}.get(ns.by, f"weighted (w={ns.weight:g} on time)")
    out.write(f"Ranking: {view} first, at {ep}\n")
    header = f"{'#':>2}  {'instance':<15} {'batch':>5} {'runtime':>8} {'bounds':>17} {'cost':>9} {'rel':>5} P\n"
    out.write(header)
    for i, r in enumerate(recs, 1):
        bounds = f"{fmt_duration(r['runtime_low_s'])}-{fmt_duration(r['runtime_high_s'])}"
        rel = "-" if r["relative"] is None else f"{r['relative']:.2f}"
        out.write(f"{i:>2}  {str(r['instance'] or '?')[:15]:<15} {r['batch_size']:>5} "
                  f"{fmt_duration(r['runtime_s']):>8} {bounds:>17} {fmt_cost(r['cost_usd']):>9} "
                  f"{rel:>5} {'*' if r['pareto'] else ' '}\n")
    out.write("rel: 1.00 = best; P *: Pareto-optimal (no row is both faster and cheaper)\n")


# ---- plot -----------------------------------------------------------------------------------


def cmd_plot(ns: argparse.Namespace, out: TextIO) -> int:
    from pathlib import Path

    from ..model.crossover import line_for
    from ..report.figures import render

    pricing = _pricing(ns)
    pairs = _rows_for(_load_records(ns.logs), pricing, ns.epochs, ns)
    workloads = sorted({row["workload"] for _, row in pairs})
    if ns.workload:
        pairs = [(r, row) for r, row in pairs if row["workload"] == ns.workload]
    elif len(workloads) > 1:
        _warn(f"logs of {len(workloads)} workloads ({', '.join(workloads)}): plotting "
              f"{workloads[0]!r}; pick one with --workload")
        pairs = [(r, row) for r, row in pairs if row["workload"] == workloads[0]]
    if not pairs:
        return 1
    rows = ranking_records(rank([row for _, row in pairs], "time"))
    lines = []
    for rec, row in pairs:
        try:
            lines.append(line_for(rec.state, row["path"], f"{row['instance']} b{row['batch_size']}",
                                  row["price_per_hour"], row["billing"],
                                  use_validation=not ns.no_validation, statistic=ns.statistic))
        except NoEstimate:
            continue
    try:
        path = render(ns.kind, rows, lines, Path(ns.out), title=ns.title or "",
                      max_epochs=ns.max_epochs)
    except ValueError as exc:
        _warn(str(exc))
        return 2
    out.write(f"wrote {path}\n")
    return 0


# ---- stabilize ------------------------------------------------------------------------------


def cmd_stabilize(ns: argparse.Namespace, out: TextIO) -> int:
    from ..model.epochs import (accuracy_cap, is_lower_better, metric_curve, patience_rule, plateau_rule,
                         predict_stabilisation)

    results = []
    for rec in _load_records(ns.logs):
        curve = metric_curve(rec.state, ns.metric)
        if not curve:
            _warn(f"{rec.path}: no {ns.metric!r} in its epoch events - was validation on? "
                  "(try --metric accuracy or --metric val_loss)")
            continue
        lower = is_lower_better(ns.metric)
        pat = patience_rule(curve, ns.patience, ns.min_delta, lower)
        pla = plateau_rule(curve, ns.window, ns.threshold)
        pred = predict_stabilisation(curve, ns.predict_from, ns.window, ns.threshold, lower,
                                     cap=accuracy_cap(ns.metric))
        start = rec.state.start
        results.append({
            "path": str(rec.path), "probe": rec.label, "batch_size": start.batch_size if start else None,
            "metric": ns.metric, "curve": curve, "patience": pat.as_dict(), "plateau": pla.as_dict(),
            "prediction": pred.as_dict(),
        })
    if ns.json:
        json.dump(results, out, indent=2)
        out.write("\n")
    else:
        for r in results:
            out.write(f"{r['probe']}  batch {r['batch_size']}  {r['metric']}: "
                      + " ".join(f"{v:.3f}" for v in r["curve"]) + "\n")
            for rule in ("patience", "plateau"):
                d = r[rule]
                if d["epoch"]:
                    out.write(f"  {rule:<9} stable at epoch {d['epoch']} ({d['value']:.4f}); "
                              f"final {d['final']:.4f}\n")
                else:
                    out.write(f"  {rule:<9} not stable: {d['reason']}\n")
            p = r["prediction"]
            if p["epoch"] is not None:
                iv = f" [{p['low']:.1f}-{p['high']:.1f}]" if p["low"] is not None else ""
                out.write(f"  predicted from {p['used_epochs']} epochs: stable at epoch "
                          f"{p['epoch']:.1f}{iv}, towards {p['asymptote']:.4f}\n")
            else:
                out.write(f"  prediction: {p['reason']}\n")
    return 0 if results else 1


# ---- prices ---------------------------------------------------------------------------------


def cmd_prices(ns: argparse.Namespace, out: TextIO) -> int:
    from ..cloud.aws import AwsError, cached_spot_prices, client, current_catalog, \
        fetch_ondemand_prices, gpu_facts, latest_spot_prices, save_price_cache

    families = [f.strip() for f in (ns.family or "").split(",") if f.strip()]
    spot: dict[str, float] = {}
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
            _warn(str(exc))
            return 1
        path = save_price_cache(rows, ns.region, spot)
        out.write(f"{len(rows)} GPU instance prices for {ns.region} cached in {path}\n")
    catalog = current_catalog(ns.region)
    if ns.spot and not spot:
        spot = cached_spot_prices(ns.region)
    rows_out = [i for i in catalog
                if not families or any(i.instance.split(".")[0] == f or i.instance.startswith(f + ".")
                                       for f in families)]
    if ns.json:
        json.dump([{**{k: getattr(i, k) for k in i.__dataclass_fields__},
                    "spot_price_per_hour": spot.get(i.instance)} for i in rows_out], out, indent=2)
        out.write("\n")
        return 0
    out.write(f"Price catalog: {catalog.source}, dated {catalog.date}\n")
    spot_h = f" {'spot':>7}" if ns.spot else ""
    out.write(f"{'instance':<16} {'GPUs':<12} {'GPU mem':>7} {'vCPU':>4} {'$/h':>8}{spot_h}  {'date':<10}\n")
    for i in rows_out:
        mem = f"{i.gpu_memory_gb:g}G" if i.gpu_memory_gb else "-"
        sp = f" {spot[i.instance]:>7.3f}" if ns.spot and i.instance in spot else (" " * 8 if ns.spot else "")
        price = f"{i.price_per_hour:.4g}" if i.price_per_hour is not None else "-"
        out.write(f"{i.instance:<16} {i.gpus:<12} {mem:>7} {i.vcpus or '-':>4} {price:>8}{sp}  "
                  f"{i.price_date:<10}\n")
    return 0


def cmd_cleanup(ns: argparse.Namespace, out: TextIO) -> int:
    from ..cloud.aws import AwsError, client, find_leftovers, owner, terminate

    try:
        ec2 = client("ec2", ns.region)
        left = find_leftovers(ec2, ns.owner)
    except AwsError as exc:
        _warn(str(exc))
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
            _warn("not terminating without --yes (no terminal to ask on)")
            return 1
        answer = input(f"terminate these {len(left)} instance(s)? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            out.write("nothing terminated\n")
            return 0
    try:
        terminate(ec2, [i["id"] for i in left])
    except AwsError as exc:
        _warn(str(exc))
        return 1
    out.write(f"terminated {len(left)} instance(s)\n")
    return 0


# ---- parser ---------------------------------------------------------------------------------


def _add_estimate_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--epochs", type=float, default=None,
                   help="planned number of epochs N_ep (default: the log's plan, else 10)")
    p.add_argument("--no-validation", action="store_true", help="leave validation out (Eq. 5.4)")
    p.add_argument("--equation", choices=EQUATIONS, default="auto",
                   help="auto: 5.1 when two whole epochs were seen, else 5.3 (5.4 without validation)")
    p.add_argument("--statistic", choices=STATISTICS, default=DEFAULT_STATISTIC,
                   help="steady-state step time statistic (second = the dissertation's 2nd iteration)")
    p.add_argument("--price", action="append", metavar="INSTANCE=USD",
                   help="price per hour for an instance (repeatable); wins over log and catalog")
    p.add_argument("--billing", choices=BILLING_RULES, default=None,
                   help="billing rule for every row (default: the catalog's per instance)")
    p.add_argument("--spot", action="store_true",
                   help="price with the cached spot prices (probecast prices --refresh --spot)")
    p.add_argument("--region", default=None, help="region of the price cache (default us-east-1)")
    p.add_argument("--epochs-from", nargs="+", metavar="FULL_RUN", default=None,
                   help="methodology 1: N_ep per batch size from full runs (where validation "
                        "stabilises, else predicted); Eq. 5.1 where two epochs were seen")
    p.add_argument("--min-accuracy", type=float, default=None,
                   help="leave out batch sizes whose full runs reach less than this accuracy")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="probecast",
        description="Find where to train: probe a few iterations of your job on each candidate "
                    "host, estimate full-training time and cost, rank them.",
    )
    sub = parser.add_subparsers(dest="cmd")
    p = sub.add_parser("estimate", help="estimate runtime and cost from probe logs")
    p.add_argument("logs", nargs="+", metavar="LOG")
    p.add_argument("--horizons", default=None, help="epoch horizons, e.g. 5,10,20,25")
    _add_estimate_options(p)
    p.add_argument("--json", action="store_true", help="JSON list, one object per log")
    p.set_defaults(func=cmd_estimate)

    p = sub.add_parser("rank", help="rank (instance, batch size) by time or cost")
    p.add_argument("logs", nargs="+", metavar="LOG_OR_DIR")
    p.add_argument("--by", choices=("time", "cost", "weighted"), default="time")
    p.add_argument("--weight", type=float, default=0.5,
                   help="with --by weighted: score = w*rel_time + (1-w)*rel_cost (default 0.5)")
    _add_estimate_options(p)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--json", action="store_true")
    g.add_argument("--csv", action="store_true")
    p.set_defaults(func=cmd_rank)

    p = sub.add_parser("plot", help="figures for reports: scatter, crossover, batch (PNG/SVG)")
    p.add_argument("logs", nargs="+", metavar="LOG_OR_DIR")
    p.add_argument("--kind", choices=("scatter", "crossover", "batch"), default="scatter")
    p.add_argument("--out", required=True, help="FILE.png or FILE.svg")
    p.add_argument("--workload", default=None, help="which workload, when logs of several are given")
    p.add_argument("--max-epochs", type=int, default=30, help="crossover: epochs on the x axis")
    p.add_argument("--title", default=None)
    _add_estimate_options(p)
    p.set_defaults(func=cmd_plot)

    p = sub.add_parser("stabilize", help="find (and predict) the epoch where validation stabilises")
    p.add_argument("logs", nargs="+", metavar="LOG")
    p.add_argument("--metric", default="val_accuracy")
    p.add_argument("--patience", type=int, default=3, help="patience rule: epochs without improvement")
    p.add_argument("--min-delta", type=float, default=0.005, help="patience rule: smallest improvement")
    p.add_argument("--window", type=int, default=3, help="plateau rule: epochs in the window")
    p.add_argument("--threshold", type=float, default=0.02, help="plateau rule: max change in the window")
    p.add_argument("--predict-from", type=int, default=None,
                   help="predict from the first K epochs only (default: all seen)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_stabilize)

    p = sub.add_parser("prices", help="show the price catalog (--refresh: live from AWS)")
    p.add_argument("--family", default=None, help="comma-separated families, e.g. p3,g5")
    p.add_argument("--refresh", action="store_true",
                   help="read on-demand prices from the AWS Pricing API and cache them")
    p.add_argument("--region", default="us-east-1")
    p.add_argument("--spot", action="store_true", help="also latest spot prices (cheapest AZ)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_prices)

    p = sub.add_parser("cleanup", help="terminate instances probecast launched (any session of yours)")
    p.add_argument("--region", default="us-east-1")
    p.add_argument("--owner", default=None, help="probecast:owner tag (default: user@host)")
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("--yes", action="store_true", help="do not ask")
    p.set_defaults(func=cmd_cleanup)

    from .probe import add_probe_parser

    add_probe_parser(sub)
    return parser


AppLauncher = Callable[[list[str]], int]


def main(argv: list[str] | None = None, launch_app: AppLauncher | None = None) -> int:
    """Headless commands run here; the app (no subcommand, or ``replay``) is started through
    ``launch_app``, which the console script in ``probecast.tui`` passes in, so core never imports
    the TUI."""
    args = sys.argv[1:] if argv is None else argv
    parser = build_parser()
    if not args or args[0] in ("replay", "--config"):
        if launch_app is None:
            _warn("the app is not available here; headless commands still work: probecast --help")
            return 2
        return launch_app(args)
    ns = parser.parse_args(args)
    if ns.cmd is None:
        parser.print_help()
        return 2
    try:
        return int(ns.func(ns, sys.stdout))
    except CliError as exc:
        _warn(str(exc))
        return 2
    except ValueError as exc:
        _warn(str(exc))
        return 2
    except BrokenPipeError:  # `probecast rank ... | head`
        return 0
