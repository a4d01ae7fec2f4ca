"""The ranking table: keyed rows updated in place, sorted only when the order changes."""

from __future__ import annotations

import math
from typing import Any

from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, RowKey

from probecast.core.model.rank.decisions import p_in_view
from probecast.core.model.rank.ranking import RankedRow
from probecast.core.report.fmt import fmt_cost, fmt_duration

COLUMNS = (("rank", "#"), ("instance", "instance"), ("batch", "batch"), ("runtime", "runtime"),
           ("bounds", "bounds"), ("cost", "cost"), ("rel", "rel"), ("p", "P"), ("pareto", "★"))
# Fixed widths: the layout does not jitter as estimates change, and no width passes (each one
# repaints the table). 77 columns with cell padding and the scrollbar: fits 80.
WIDTHS = {"rank": 3, "instance": 15, "batch": 5, "runtime": 7, "bounds": 11, "cost": 8, "rel": 4,
          "p": 4, "pareto": 1}
MAX_ROWS = 1000  # a decision needs the top; every row is in `e` exports and `probecast rank`


def no_fit_cells(r: RankedRow) -> dict[str, Any]:
    """A batch size that does not fit: a row that says so, never a time."""
    return {
        "rank": Text("✗", justify="right", style="yellow"),
        "instance": Text(r.instance or "?", style="yellow"),
        "batch": Text(r.batch_label, justify="right"),
        "runtime": Text("no fit", style="bold yellow"),  # 7 columns at 80x24: "does not fit" was cut to "does no"
        "bounds": Text(_limit(r), justify="right", style="dim"),
        "cost": Text("-", justify="right"), "rel": Text("-", justify="right"),
        "p": Text(""), "pareto": Text(""),
    }


def _limit(r: RankedRow) -> str:
    m = r.memory
    if m is None or not m.limit_mb:
        return ""
    return f"{m.limit_mb / 1024:.1f}G {'GPU' if m.basis == 'device' else 'lim'}"


def _rank_key(cell: Any) -> int:
    text = str(cell).lstrip("≈")
    return int(text) if text.isdigit() else 1 << 30  # does-not-fit rows: after the ranked ones


def row_cells(rank: int, r: RankedRow, by: str = "time") -> dict[str, Any]:
    if r.does_not_fit:
        return no_fit_cells(r)
    rel = r.relative
    rel_text = ("-" if rel is None or math.isnan(rel) else f"{rel:.2f}" if rel < 9.995
                else f"{rel:.1f}" if rel < 99.95 else f"{rel:.0f}")  # 4 characters up to 9999
    style = "bold green" if rank == 1 else ""
    live = "" if r.status in ("done", "") else (r.mark or "…")
    return {
        "rank": Text(f"≈{rank}" if r.undecided else str(rank), justify="right"),
        "instance": Text(f"{r.instance or '?'}{live}",  # predicted, not probed: '~', italic
                         style=f"{style} italic".strip() if r.predicted else style),
        "batch": Text(r.batch_label, justify="right"),
        "runtime": Text(fmt_duration(r.runtime_s), justify="right"),
        "bounds": Text(f"{fmt_duration(r.runtime_low_s)}–{fmt_duration(r.runtime_high_s)}",
                       justify="right", style="dim"),
        "cost": Text(fmt_cost(r.cost_usd), justify="right"),
        "rel": Text(rel_text, justify="right", style=style),
        "p": Text(p_in_view(r, by), justify="right", style="dim" if r.undecided else ""),
        "pareto": Text("★" if r.pareto else "", style="yellow"),
    }


class RankingTable(DataTable[Any]):
    DEFAULT_CSS = """
    RankingTable { height: 1fr; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self._cells: dict[str, dict[str, Any]] = {}
        self._order: list[str] = []

    def on_mount(self) -> None:
        for key, label in COLUMNS:
            self.add_column(label, key=key, width=WIDTHS[key])

    def selected_key(self) -> str | None:
        if not self.row_count:
            return None
        try:
            row_key, _ = self.coordinate_to_cell_key(self.cursor_coordinate)
        except Exception:  # noqa: BLE001 - no row under the cursor
            return None
        return row_key.value

    def _update_row(self, key: str, changed: dict[str, Any]) -> None:
        """Set a row's changed cells and repaint that row only.

        `DataTable.update_cell` repaints the whole table (~20 KB of escape codes at 80x24 for one
        figure), which is what kept a bastion's link busy; this writes the same data and refreshes
        the row's region. It leans on DataTable's `_data` and `_update_count` (the render caches'
        key), so textual is pinned to a minor version in pyproject.toml."""
        row_key = RowKey(key)
        data = self._data[row_key]
        for col, value in changed.items():
            data[ColumnKey(col)] = value
        self._update_count += 1
        self.refresh_row(self.get_row_index(key))

    def apply(self, records: list[RankedRow], by: str = "time") -> None:
        """Diff the table against the ranking: update changed cells, add/remove rows, re-sort.
        ``by``: the view (time, cost, weighted), whose probability the P column shows."""
        selected = self.selected_key()
        records = records[:MAX_ROWS]
        wanted = [r.key for r in records]
        keep = set(wanted)
        for gone in [k for k in self._cells if k not in keep]:
            self.remove_row(gone)
            del self._cells[gone]
        for rank, r in enumerate(records, 1):
            key = r.key
            cells = row_cells(rank, r, by)
            old = self._cells.get(key)
            if old is None:
                self.add_row(*(cells[c] for c, _ in COLUMNS), key=key)
            else:
                changed = {col: v for col, v in cells.items() if old.get(col) != v}
                if changed:
                    self._update_row(key, changed)
            self._cells[key] = cells
        if wanted != self._order:
            self.sort("rank", key=_rank_key)
            self._order = wanted
            if selected in self._cells:
                self.move_cursor(row=self.get_row_index(selected), animate=False)
