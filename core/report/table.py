"""Plain-text views of a ranking and of one estimate, for the headless commands (<= 80 columns)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from ..model.rank.decisions import PairConstants, p_in_view
from ..model.pricing import cost_usd
from ..model.rank.ranking import RankedRow, RankOptions, decision_lines, verdict
from ..model.state import ProbeState
from .fmt import fmt_cost, fmt_duration

VIEW_NAMES = {"time": "fastest", "cost": "cheapest"}
MAX_PAIRS = 10  # "X is faster than Y: 99 %" lines; the ≈ marks say the rest


def view_name(options: RankOptions) -> str:
    return VIEW_NAMES.get(options.by, f"weighted (w={options.weight:g} on time)")


def print_ranking(rows: Sequence[RankedRow], options: RankOptions, out: TextIO) -> None:
    lengths = {r.length for r in rows}
    if rows and rows[0].per_steps:
        unknown = next((r.length_unknown for r in rows if r.length_unknown), "")
        out.write(f"Ranking: {view_name(options)} first, {rows[0].length}\n")
        if unknown:
            out.write(f"length unknown: {unknown}\n")
        if len({r.batch_size for r in rows}) > 1:
            out.write("(batch sizes differ: a step of a larger batch trains more samples, so a "
                      "job measured in epochs takes fewer of them)\n")
    else:
        ep = next(iter(lengths)) if len(lengths) == 1 else "each job's own length"
        out.write(f"Ranking: {view_name(options)} first, at {ep}\n")
    w = max(2, len(str(len(rows))) + 1)  # "≈10000" keeps the columns aligned
    out.write(f"{'#':>{w}}  {'instance':<15} {'batch':>5} {'runtime':>8} {'bounds':>17} "
              f"{'cost':>9} {'rel':>5} {'P':>4} *\n")
    for i, r in enumerate(rows, 1):
        bounds = f"{fmt_duration(r.runtime_low_s)}-{fmt_duration(r.runtime_high_s)}"
        rel = "-" if r.relative is None else f"{r.relative:.2f}"
        rank = f"≈{i}" if r.undecided else f"{i}"
        out.write(f"{rank:>{w}}  {((r.instance or '?')[:14] + r.mark):<15} {r.batch_size:>5} "
                  f"{fmt_duration(r.runtime_s):>8} {bounds:>17} {fmt_cost(r.cost_usd):>9} "
                  f"{rel:>5} {p_in_view(r, options.by):>4} {'*' if r.pareto else ' '}\n")
    out.write("rel: 1.00 = best; *: Pareto-optimal (no row is both faster and cheaper)\n"
              "P: the probability that the leader beats the row (docs/method.md)\n"
              f"≈: undecided - P under {PairConstants.load().threshold:.0%}\n")
    if any(r.mark for r in rows):
        out.write("after an instance: ! its probe failed or was stopped, ? its log has no end, "
                  "… still running" + (", ~ predicted, not probed" if any(r.predicted for r in rows)
                                       else "") + "\n")
    line = verdict(rows, options.by)
    if line:
        out.write(line + "\n")
    # the leader against each row, when there is more than the one the verdict names
    lines = decision_lines(rows, options.by, limit=len(rows)) if len(rows) > 2 else []
    for line in lines[:MAX_PAIRS]:
        out.write(f"  {line}\n")
    if len(lines) > MAX_PAIRS:
        undecided = sum(r.undecided for r in rows[MAX_PAIRS + 1:])
        out.write(f"  ... and {len(lines) - MAX_PAIRS} more rows ({undecided} undecided against "
                  "the leader, marked ≈)\n")
    probes = [r for r in rows if r.probe_s and r.status == "probe-done" and not r.per_steps]
    if probes:
        total = sum(r.probe_s for r in probes)
        job = min(r.runtime_s for r in rows)
        out.write(f"probes ran {fmt_duration(total)} in all; the fastest job is "
                  f"{fmt_duration(job)}\n")
        short = [r for r in rows if "shorter than a probe - just run it" in r.notes]
        if short:
            out.write(f"{', '.join(r.name for r in short)}: shorter than a probe - just run it\n")


def print_estimate(row: RankedRow, out: TextIO) -> None:
    flag = "  (log truncated)" if row.truncated else ""
    out.write(f"{row.probe}  {row.instance or '?'}  batch {row.batch_label}  "
              f"{row.workload}{flag}\n  {row.path}\n")
    out.write(f"  Eq. {row.equation}, {row.length}: "
              f"{fmt_duration(row.runtime_s)} "
              f"[{fmt_duration(row.runtime_low_s)} - {fmt_duration(row.runtime_high_s)}]"
              f"  {fmt_cost(row.cost_usd)}\n")
    out.write(f"  {row.formula}\n")
    if row.horizons:
        hs = "  ".join(f"{h.epochs:g} ep: {fmt_duration(h.runtime_s)} {fmt_cost(h.cost_usd)}"
                       for h in row.horizons)
        out.write(f"  horizons  {hs}\n")
    for note in row.notes:
        out.write(f"  note: {note}\n")
    out.write("\n")


def decision_cost(rows: Sequence[RankedRow], states: dict[str, ProbeState]) -> str | None:
    """Malta 2021, Table 5.14: what the probes cost against running every candidate to the end."""
    probes = full = 0.0
    priced = 0
    for r in rows:
        state = states.get(r.key)
        if r.price_per_hour is None or r.cost_usd is None or state is None \
                or r.equation == "measured":  # a whole run, not a probe: nothing was decided early
            continue
        priced += 1
        probes += cost_usd(r.price_per_hour, state.elapsed, r.billing or "exact")
        full += r.cost_usd
    if not priced or full <= 0:
        return None
    return (f"deciding cost: probes {fmt_cost(probes)} vs {fmt_cost(full)} running all "
            f"{priced} to the end ({1 - probes / full:.0%} saved)")
