"""`estimate`, `rank`, `plot` and `stabilize`: answers from saved probe logs."""

from __future__ import annotations

import argparse
import csv
import io
import json
from typing import TextIO

from ..model.predict.plan import contenders
from ..model.rank.crossover import add_crossovers, lines_for
from ..model.estimate.runtime import DEFAULT_HORIZONS, parse_horizons
from ..model.logstore import ProbeRecord
from ..model.state import ProbeState
from ..model.rank.ranking import (Pricing, RankedRow, Ranking, RankOptions, estimate_rows,
                             horizons_for)
from ..report.memory_text import print_memory
from ..report.table import decision_cost, print_estimate, print_ranking
from .common import (CliError, load_records, options_from, pricing_from, rank_logs, warn,
                     warn_unpriced)


def cmd_estimate(ns: argparse.Namespace, out: TextIO) -> int:
    horizons = parse_horizons(ns.horizons) if ns.horizons else DEFAULT_HORIZONS
    pricing = pricing_from(ns)
    options = options_from(ns)
    records = load_records(ns.logs)
    rows, skipped = estimate_rows([r.candidate() for r in records], pricing, options)
    for line in skipped:
        warn(line)
    warn_unpriced(rows)
    by_key = {r.candidate().key: r.candidate() for r in records}
    for row in rows:
        if not (row.steps or row.per_steps):  # epochs are no horizon of a job made of steps
            row.horizons = horizons_for(by_key[row.key], pricing, options, horizons)
    if ns.json:
        json.dump([r.as_json() for r in rows], out, indent=2)
        out.write("\n")
    else:
        for row in rows:
            print_estimate(row, out)
    return 0 if rows else 1


def cmd_rank(ns: argparse.Namespace, out: TextIO) -> int:
    records = load_records(ns.logs)
    return rank_and_print(records, pricing_from(ns), options_from(ns), out,
                          fmt="json" if ns.json else "csv" if ns.csv else "text")


def rank_and_print(records: list[ProbeRecord], pricing: Pricing, options: RankOptions,
                   out: TextIO, fmt: str = "text") -> int:
    """`probecast rank`: one ranking per workload, from logs."""
    ranking = rank_logs(records, pricing, options)
    return print_ranked(ranking, {str(r.path): r.state for r in records}, options, out, fmt)


def print_ranked(ranking: Ranking, states: dict[str, ProbeState], options: RankOptions,
                 out: TextIO, fmt: str = "text") -> int:
    """A ranking printed - `probecast rank`'s, and the end of `probe --headless` (the board's) -
    with the crossovers and the cost of deciding read from the probes' ``states`` (by log)."""
    if not len(ranking) and not ranking.no_fit:
        return 1
    add_crossovers(ranking, states)
    rows = ranking.with_no_fit()  # batch sizes that do not fit: rows that say so, no time
    if fmt == "json":
        json.dump([r.as_json() for r in rows], out, indent=2)
        out.write("\n")
    elif fmt == "csv":
        flat = [{k: json.dumps(v) if isinstance(v, (dict, list)) else v
                 for k, v in r.as_json().items()} for r in rows]
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(flat[0].keys()), lineterminator="\n")
        writer.writeheader()
        writer.writerows(flat)
        out.write(buf.getvalue())
    else:
        names = list(dict.fromkeys([*ranking.groups, *ranking.no_fit]))
        for i, workload in enumerate(names):
            if len(names) > 1:
                out.write(("\n" if i else "") + f"== {workload or '(no workload)'} ==\n")
            group = ranking.groups.get(workload, [])
            if group:
                print_ranking(group, options, out)
            print_memory(group, ranking.no_fit.get(workload, []),
                         ranking.memory.get(workload), out)
        for line in (decision_cost(ranking.rows, states), probes_saved(ranking.rows)):
            if line:
                out.write(line + "\n")
    return 0


def probes_saved(rows: list[RankedRow]) -> str | None:
    """The cost of deciding, the other half: candidates answered by prediction, not a probe."""
    predicted = sorted({r.instance for r in rows if r.predicted})
    if not predicted:
        return None
    measured = [r for r in rows if not r.predicted and not r.does_not_fit]
    line = (f"predicted, not probed: {len(predicted)} candidate(s) ({', '.join(predicted)}) "
            f"from {len({r.instance for r in measured})} probed - {len(predicted)} probe(s) saved")
    if measured:
        leader = min(measured, key=lambda r: r.runtime_s)
        worth = contenders({r.name: r.runtime_low_s for r in rows if r.predicted},
                           leader.runtime_high_s)
        line += (f"; worth a probe (bounds overlap the leader {leader.name}'s): "
                 f"{', '.join(worth)}" if worth else "; none could beat the leader")
    return line


def _pick_workload(ranking: Ranking, kind: str) -> str:
    """With logs of several workloads: the one with the most priced rows (a scatter needs costs),
    then the most rows."""
    def score(item: tuple[str, list[RankedRow]]) -> tuple[int, int]:
        rows = item[1]
        return (sum(1 for r in rows if r.cost_usd is not None) if kind == "scatter" else 0,
                len(rows))

    return max(sorted(ranking.groups.items()), key=score)[0]


def cmd_plot(ns: argparse.Namespace, out: TextIO) -> int:
    from pathlib import Path

    from ..report.figures import render

    records = load_records(ns.logs)
    options = options_from(ns, by="time")
    ranking = rank_logs(records, pricing_from(ns), options, warn_prices=False)
    if not len(ranking):
        return 1
    workload = ns.workload
    if workload is None and len(ranking.groups) > 1:
        workload = _pick_workload(ranking, ns.kind)
        others = ", ".join(w or "(none)" for w in sorted(ranking.groups) if w != workload)
        warn(f"logs of {len(ranking.groups)} workloads: plotting {workload!r}; others: {others} "
             "- pick one with --workload")
    rows = ranking.groups.get(workload, []) if workload is not None else ranking.rows
    if not rows:
        raise CliError(f"--workload {workload!r}: no estimate for it; workloads here: "
                       + ", ".join(sorted(ranking.groups)))
    warn_unpriced(rows)  # only the rows in the figure
    states = {str(r.path): r.state for r in records}
    lines = lines_for(rows, states, options)
    try:
        path = render(ns.kind, rows, lines, Path(ns.out), title=ns.title or "",
                      max_epochs=ns.max_epochs)
    except ValueError as exc:
        warn(str(exc))
        return 2
    out.write(f"wrote {path}\n")
    return 0


def cmd_stabilize(ns: argparse.Namespace, out: TextIO) -> int:
    from ..model.epochs import (accuracy_cap, is_lower_better, metric_curve, patience_rule, plateau_rule,
                         predict_stabilisation)

    results = []
    for rec in load_records(ns.logs):
        curve = metric_curve(rec.state, ns.metric)
        if not curve:
            warn(f"{rec.path}: no {ns.metric!r} in its epoch events - was validation on? "
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
