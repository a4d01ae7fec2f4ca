"""The memory part of the detail view: a row's peak and its program's forecast, and the whole
detail of a batch size that does not fit (core/report/memory_text.py words it)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from probecast.core.model.rank.ranking import RankedRow
from probecast.core.report.memory_text import row_memory_lines


def memory_texts(row: RankedRow) -> list[Text]:
    lines = row_memory_lines(row)
    return [Text(line, style="" if i == 0 else "dim") for i, line in enumerate(lines)]


def no_fit_detail(row: RankedRow) -> Table:
    """A batch size that does not fit has no estimate: what ran out, where, and what fits."""
    out = Table.grid()
    out.add_row(Text.assemble((f"{row.instance} · batch {row.batch_label} · {row.workload}  ",
                               "bold"), ("does not fit", "bold yellow")))
    for note in row.notes:
        out.add_row(Text(note, style="yellow"))
    for text in memory_texts(row):
        out.add_row(text)
    out.add_row(Text("no time or cost: the probe ran out of memory at this batch size; the "
                     "other probes go on", style="dim"))
    return out
