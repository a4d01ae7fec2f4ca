"""Export a ranking (CSV, JSON, Markdown) - used by the app; the CLI prints the same rows."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path

from ..model.rank.ranking import RankedRow
from .fmt import fmt_cost, fmt_duration

FLAT_COLUMNS = ["probe", "instance", "batch_size", "workload", "epochs", "runtime_s",
                "runtime_low_s", "runtime_high_s", "cost_usd", "cost_low_usd", "cost_high_usd",
                "price_per_hour", "equation", "rel_time", "rel_cost", "relative", "pareto",
                "status"]


def to_markdown(rows: Sequence[RankedRow], title: str) -> str:
    lines = [f"# {title}", "", "| # | instance | batch | runtime | bounds | cost | relative | Pareto |",
             "|---:|---|---:|---:|---|---:|---:|:---:|"]
    for i, r in enumerate(rows, 1):
        if r.does_not_fit:  # a row that says so, never a time
            lines.append(f"| ✗ | {r.instance} | {r.batch_label} | does not fit | "
                         f"{r.notes[0] if r.notes else ''} | - | - | |")
            continue
        rel_s = "-" if r.relative is None else f"{r.relative:.2f}"
        lines.append(
            f"| {i} | {r.instance} | {r.batch_label} | {fmt_duration(r.runtime_s)} | "
            f"{fmt_duration(r.runtime_low_s)}–{fmt_duration(r.runtime_high_s)} | "
            f"{fmt_cost(r.cost_usd)} | {rel_s} | {'★' if r.pareto else ''} |")
    return "\n".join(lines) + "\n"


def export_ranking(rows: Sequence[RankedRow], directory: Path, stem: str, title: str) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    records = [r.as_json() for r in rows]
    csv_path = directory / f"{stem}.csv"
    with open(csv_path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=FLAT_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(records)
    json_path = directory / f"{stem}.json"
    json_path.write_text(json.dumps(records, indent=2, default=str) + "\n")
    md_path = directory / f"{stem}.md"
    md_path.write_text(to_markdown(rows, title))
    return [csv_path, json_path, md_path]
