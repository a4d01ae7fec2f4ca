"""Export a ranking (CSV, JSON, Markdown) - used by the app; the CLI prints the same rows."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas costs ~0.2 s to import: only when a ranking is built
    import pandas as pd

from .fmt import fmt_cost, fmt_duration
from ..model.ranking import ranking_records

FLAT_COLUMNS = ["probe", "instance", "batch_size", "epochs", "runtime_s", "runtime_low_s",
                "runtime_high_s", "cost_usd", "cost_low_usd", "cost_high_usd", "price_per_hour",
                "equation", "rel_time", "rel_cost", "relative", "pareto"]


def to_markdown(df: pd.DataFrame, title: str) -> str:
    lines = [f"# {title}", "", "| # | instance | batch | runtime | bounds | cost | relative | Pareto |",
             "|---:|---|---:|---:|---|---:|---:|:---:|"]
    for i, r in enumerate(ranking_records(df), 1):
        rel = r.get("relative")
        rel_s = "-" if rel is None or (isinstance(rel, float) and math.isnan(rel)) else f"{rel:.2f}"
        lines.append(
            f"| {i} | {r['instance']} | {r['batch_size']} | {fmt_duration(r['runtime_s'])} | "
            f"{fmt_duration(r['runtime_low_s'])}–{fmt_duration(r['runtime_high_s'])} | "
            f"{fmt_cost(r['cost_usd'])} | {rel_s} | {'★' if r['pareto'] else ''} |")
    return "\n".join(lines) + "\n"


def export_ranking(df: pd.DataFrame, directory: Path, stem: str, title: str) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    cols = [c for c in FLAT_COLUMNS if c in df.columns]
    csv_path = directory / f"{stem}.csv"
    df[cols].to_csv(csv_path, index=False)
    json_path = directory / f"{stem}.json"
    records: list[dict[str, Any]] = ranking_records(df)
    json_path.write_text(json.dumps(records, indent=2, default=str) + "\n")
    md_path = directory / f"{stem}.md"
    md_path.write_text(to_markdown(df, title))
    return [csv_path, json_path, md_path]
