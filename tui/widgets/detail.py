"""The detail of one ranking row: the estimate's terms and the equation with numbers filled in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from probecast.core.model.rank.decisions import PairConstants, fmt_p
from probecast.core.model.rank.ranking import RankedRow
from probecast.core.report.fmt import fmt_cost, fmt_duration

from .memory_view import memory_texts, no_fit_detail

EQUATIONS = {
    "5.3": "T = T_init + T_it1 + (N_it−1)·T_it + T_val1 + (N_ep−1)·(N_it·T_it + T_val + T_ep)",
    "5.4": "T = T_init + T_it1 + (N_it−1)·T_it + (N_ep−1)·(N_it·T_it + T_ep)",
    # validation after some epochs only (estimate/epoch_work.py): N_val passes
    "5.3 N_val": "T = T_init + T_it1 + (N_it−1)·T_it + (N_ep−1)·(N_it·T_it + T_ep) + T_val1 + "
                 "(N_val−1)·T_val",
    "5.1": "T = T_init + T(Ep1) + (N_ep−1)·T(Ep2)",
    "steps": "T = T_init + T_it1 + (N−1)·T_it + ⌊(N−1)/K⌋·T_per",
    "measured": "the probe saw the whole run: its runtime",
    "per-steps": "per N steps: N·T_it + (N/K)·T_per (length unknown)",
    "blocks": "T = T_init + T_seen + (S−S_k)·r + (N_val−n)·T_val (Eq. 5.1 over blocks)",
}
DECIDED = PairConstants.load().threshold
TERM_LABELS = (("t_init", "T_init"), ("t_it1", "T_it1"), ("t_it", "T_it"), ("t_val1", "T_val1"),
               ("t_val", "T_val"), ("t_ep", "T_ep (boundary)"), ("t_ep1", "T(Ep1)"),
               ("t_ep2", "T(Ep2)"), ("t_fit_end", "T_end (fit returns)"),
               ("t_post", "T_post (after training)"), ("t_per", "T_per (every K)"),
               ("phases", "phases"), ("n_it", "N_it"), ("n_ep", "N_ep"))


def _term(t: Mapping[str, Any], key: str, row: RankedRow) -> str | None:
    v = t.get(key)
    if v is None:
        return None
    if key == "n_ep":
        return f"{v:g} ({row.epochs_source})"
    if key == "n_it":
        return str(v)
    if key == "t_it":
        return f"{v * 1000:.2f} ms [{t['t_it_low'] * 1000:.2f}–{t['t_it_high'] * 1000:.2f}]"
    if key == "phases":  # a program that trains in phases: what each adds (the first: with
        # its start-up and post-training work)
        shares = [f"{float(x):.1f} s" for x in str(t.get("phase_s") or "").split(",") if x]
        return f"{v}: " + " + ".join(shares) if v > 1 else None
    if key == "t_per":
        return f"{v:.3f} s × {t.get('n_per') or 0} (K={t.get('every')})"
    if key == "t_ep":
        if not v or row.equation == "steps":  # a job inside one pass crosses no boundary
            return None
        seen = t.get("boundaries_seen") or 0
        return f"{v:.3f} s expected ({seen} seen)"
    return f"{v:.3f} s"


def _amount(v: Any) -> str:
    v = float(v or 0)
    return f"{v:,.0f}" if v >= 1e4 else f"{v:g}"


def _block_terms(t: Mapping[str, Any]) -> list[tuple[str, str]]:
    unit = t["unit"]
    out = [("T_init", f"{t['t_init']:.1f} s"), ("T(B1)", f"{t.get('t_ep1') or 0:.1f} s"),
           ("blocks seen", f"{t.get('blocks_seen') or 0} ({_amount(t.get('progress_seen'))} {unit})")]
    if t.get("t_ep2"):
        out.append(("r", f"{t['t_ep2']:.4g} s/{unit.rstrip('s')} [{t.get('t_ep2_low') or 0:.4g}–"
                         f"{t.get('t_ep2_high') or 0:.4g}]"))
    if t.get("t_val"):
        out.append(("T_val", f"{t['t_val']:.1f} s"))
    return out


def drift_text(t: Mapping[str, Any]) -> Text | None:
    """The step time's trend over the probe and the steady steps T_it was taken from - said
    where the trend counts (estimate/drift.py), nothing for a steady probe."""
    direction = t.get("drift")
    if direction not in ("speeding up", "slowing down") or t.get("drift_per_100") is None:
        return None
    text = (f"steps {direction} ({100 * t['drift_per_100']:+.1f} %/100 steps, "
            f"{100 * (t.get('drift_change') or 0):+.0f} % over the probe); T_it from steady "
            f"steps {t.get('window_first') or 0}–{t.get('window_last') or 0}")
    if t.get("ended_moving"):
        text += f" - the probe ended while still {t['ended_moving']}"
    return Text(text, style="yellow" if t.get("ended_moving") else "dim")


def render_detail(row: RankedRow | None) -> Any:
    """Compact enough for 80x24: terms three to a line, then the arithmetic and the cost."""
    if row is None:
        return Text("Select a row of the ranking to see how its estimate is made.", style="dim")
    if row.does_not_fit:
        return no_fit_detail(row)
    if row.predicted:
        return predicted_detail(row)
    out = Table.grid()
    for part in (*heading_lines(row), terms_grid(row), *length_lines(row),
                 Text("= " + row.formula), *bounds_lines(row), *cost_lines(row),
                 *memory_texts(row)):
        out.add_row(part)
    for note in row.notes:
        out.add_row(Text(f"note: {note}", style="yellow"))
    return out


def heading_lines(row: RankedRow) -> list[Text]:
    """The row, its equation, and how sure the ranking is that the leader beats it."""
    out = [Text.assemble((f"{row.instance} · batch {row.batch_label} · {row.workload}  ", "bold"),
                         (f"Eq. {row.equation}: {_symbols(row)}", "cyan"))]
    for p, word in ((row.p_faster, "faster"), (row.p_cheaper, "cheaper")):
        if p is None:
            continue
        verdict = "undecided" if p < DECIDED else "decided"
        out.append(Text(f"P(the leader is {word} than this): {fmt_p(p)} - {verdict}",
                        style="bold" if p < DECIDED else ""))
    if row.decision_basis:
        out.append(Text(f"  rests on: {row.decision_basis}", style="dim"))
    return out


def terms_grid(row: RankedRow) -> Table:
    """The estimate's terms, three to a line."""
    t = row.terms
    if t.get("unit"):  # a run timed in blocks (imported MLPerf): its own terms
        terms = _block_terms(t)
    else:
        terms = [(label, text) for key, label in TERM_LABELS
                 if key not in ("n_it", "n_ep") and (text := _term(t, key, row)) is not None]
    grid = Table.grid(padding=(0, 2))
    for _ in range(3):
        grid.add_column()
    cells = [Text.assemble((f"{label} ", "bold"), value) for label, value in terms]
    for k in range(0, len(cells), 3):
        grid.add_row(*cells[k:k + 3])
    return grid


def _symbols(row: RankedRow) -> str:
    t = row.terms
    n_val = t.get("n_val") if row.equation == "5.3" else None
    text = EQUATIONS.get(f"{row.equation} N_val" if n_val is not None else row.equation, "")
    if row.equation in ("5.3", "5.4") and t.get("t_per") and t.get("n_per"):
        text += " + n·T_per"  # periodic work: every K steps, or after every K-th epoch
    return text


def length_lines(row: RankedRow) -> list[Text]:
    """The job's length the terms are multiplied by: blocks, steps, or N_it x N_ep."""
    t = row.terms
    if t.get("unit"):
        return [Text.assemble(("length ", "bold"), f"{_amount(t.get('progress_total'))} "
                              f"{t['unit']}, {row.epochs:g} evaluations ({row.epochs_source})")]
    if row.steps or row.per_steps:
        out = [Text.assemble(("length ", "bold"), row.length)]
        if row.length_unknown:
            out.append(Text(f"length unknown: {row.length_unknown}", style="yellow"))
        return out
    n_val = ("   ", ("N_val ", "bold"), str(t["n_val"])) if t.get("n_val") is not None else ()
    return [Text.assemble(("N_it ", "bold"), str(t["n_it"]), "   ", ("N_ep ", "bold"),
                          _term(t, "n_ep", row) or "", *n_val)]


def bounds_lines(row: RankedRow) -> list[Text]:
    """What the bounds are made of: the step time's trend, each source of error, the epoch
    mechanism whose constants scale them."""
    out = [drift] if (drift := drift_text(row.terms)) is not None else []
    u = row.uncertainty
    if u:
        parts = [f"{k} ±{v:.1f}s" for k, v in u.items()
                 if k not in ("sigma", "unseen_high", "unseen_low", "reach_low", "reach_high")
                 and v >= 0.05]
        if u.get("unseen_high"):
            parts.append(f"unseen +{u['unseen_high']:.1f}s")
        if u.get("unseen_low", 0.0) >= 0.05:  # (seen, may not come again: a run an early stop
            parts.append(f"unseen −{u['unseen_low']:.1f}s")  # ended sooner)
        # (a run seen whole is its own answer: the equations' fit is the planned length's)
        fit = row.terms.get("fit_s") if row.equation != "measured" else None
        out.append(Text(f"bounds {fmt_duration(row.runtime_low_s)}–{fmt_duration(row.runtime_high_s)}"
                        f" from: {', '.join(parts)}"
                        + (f" · fit alone {fmt_duration(float(fit))}" if isinstance(fit, float) else ""),
                        style="dim"))
    if row.mechanism:
        out.append(Text(f"epochs: {row.mechanism}", style="dim"))
    return out


def cost_lines(row: RankedRow) -> list[Text]:
    """The cost's arithmetic, and what the probe cost of this job."""
    price = row.price_per_hour
    out = [Text(f"cost {fmt_cost(row.cost_usd)} = ${price}/h × {fmt_duration(row.runtime_s)}"
                f" ({row.billing}, price: {row.price_source})" if price is not None
                else "cost unknown: no price for this instance (price_per_hour in the config)")]
    if row.probe_s and row.runtime_s:
        out.append(Text(f"the probe ran {fmt_duration(row.probe_s)}: "
                        f"{row.probe_s / row.runtime_s:.0%} of this job", style="dim"))
    return out


def predicted_detail(row: RankedRow) -> Any:
    """A row nobody probed: what its prediction rests on, its bounds and cost - no terms."""
    out = Table.grid()
    out.add_row(Text.assemble((f"{row.instance} · {row.workload}  ", "bold"),
                              ("predicted, not probed", "cyan")))
    p = row.p_faster
    if p is not None:
        out.add_row(Text(f"P(the leader is faster than this): {fmt_p(p)} - "
                         f"{'undecided' if p < DECIDED else 'decided'}"))
    out.add_row(Text(f"rests on: {row.predicted_from}"))
    out.add_row(Text(f"bounds {fmt_duration(row.runtime_low_s)}–"
                     f"{fmt_duration(row.runtime_high_s)} around {fmt_duration(row.runtime_s)}: "
                     "wider than a probe's; probe it to know", style="dim"))
    price = row.price_per_hour
    out.add_row(Text(f"cost {fmt_cost(row.cost_usd)} = ${price}/h × {fmt_duration(row.runtime_s)}"
                     f" (price: {row.price_source})" if price is not None
                     else "cost unknown: no price for this instance"))
    return out


class DetailView(Static):
    DEFAULT_CSS = """
    DetailView { height: auto; padding: 0 1; }
    """

    row: RankedRow | None = None
    _shown: str | None = None

    def show(self, row: RankedRow | None) -> None:
        """Show a row. Repaints only when the text changed, and lays the screen out again only
        when its height changed: on a bastion's link a layout pass repaints every line of the
        terminal. Hidden (80 columns), it waits until it is shown."""
        if row is self.row:
            return
        self.row = row
        if self.is_mounted and not self._visible():
            return
        self._render_row()

    def _visible(self) -> bool:
        return all(node.display for node in self.ancestors_with_self if hasattr(node, "display"))

    def _render_row(self) -> None:
        width = self.content_size.width or 78
        text = self.plain_text(width)
        if text == self._shown:
            return
        same_height = self._shown is not None and text.count("\n") == self._shown.count("\n")
        self._shown = text
        self.update(render_detail(self.row), layout=not same_height)

    def on_show(self) -> None:
        self._render_row()

    def plain_text(self, width: int = 78) -> str:
        """What the view shows, as plain text (tests, export)."""
        import io

        from rich.console import Console

        console = Console(width=width, file=io.StringIO(), record=True, color_system=None)
        console.print(render_detail(self.row))
        return console.export_text()
