"""Pictures of the decision in the terminal: time-cost scatter, horizon crossover, batch curves."""

from __future__ import annotations

import datetime as dt
import math
from functools import partial
from pathlib import Path

from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Header, Static
from textual_plotext import PlotextPlot

from probecast.core.report.charts import KINDS, batch_series, crossover_data, pareto_frontier, scatter_points
from probecast.core.model.rank.crossover import Line, lines_for
from probecast.core.model.rank.ranking import RankedRow, RankOptions

from probecast.core.run.session import Session

from ..actions import bindings
from ..messages import ChartSaved

SAVE_GROUP = "chart-export"
TITLES = {"scatter": "time vs cost (★ Pareto, ● selected)", "crossover": "time vs planned epochs",
          "batch": "time vs batch size"}


class ChartScreen(Screen[None]):
    BINDINGS = bindings("charts")
    DEFAULT_CSS = """
    ChartScreen PlotextPlot { height: 1fr; }
    ChartScreen #chart-notes { height: auto; max-height: 6; padding: 0 1; color: $text-muted; }
    """

    def __init__(self, session: Session, epochs: float | None, workload: str | None,
                 selected: str | None = None, kind: str = "scatter") -> None:
        super().__init__()
        self.session = session
        self.epochs = epochs
        self.workload = workload
        self.selected = selected
        self.kind = kind
        self._seen = -1

    def compose(self) -> ComposeResult:
        yield Header()
        yield PlotextPlot(id="chart")
        yield Static(id="chart-notes")
        yield Footer()

    def on_mount(self) -> None:
        self.set_interval(0.5, self.redraw)
        self.redraw(force=True)

    def data(self) -> tuple[list[RankedRow], list[Line]]:
        board = self.session.board
        options = RankOptions(epochs=self.epochs, workload=self.workload)
        rows = board.ranking(options).rows
        return rows, lines_for(rows, board.states(), options)

    def redraw(self, force: bool = False) -> None:
        if self.session.board.version == self._seen and not force:
            return
        self._seen = self.session.board.version
        rows, lines = self.data()
        plot = self.query_one(PlotextPlot)
        plt = plot.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title(f"{TITLES[self.kind]} · g: next · e: save")
        notes: list[str] = []
        selected = self.selected
        if not rows:
            notes.append("no estimates yet: the chart fills in as probes report")
        elif self.kind == "scatter":
            pts = scatter_points(rows)
            if not pts:
                notes.append("no prices: time-cost needs a price per instance")
            for p in pts:
                marker = "●" if p.key == selected else ("★" if p.pareto else "•")
                plt.scatter([p.runtime_s / 60], [p.cost_usd], marker=marker, label=p.label)
            front = pareto_frontier(pts)
            if len(front) > 1:
                plt.plot([p.runtime_s / 60 for p in front], [p.cost_usd for p in front], marker="braille")
            plt.xlabel("time (min)")
            plt.ylabel("cost ($)")
        elif self.kind == "crossover":
            cd = crossover_data(lines)
            for key, ys in cd.runtime.items():
                plt.plot(cd.epochs, [y / 60 for y in ys], label=cd.labels[key], marker="braille")
            plt.xlabel("planned epochs")
            plt.ylabel("time (min)")
            notes += cd.sentences(4) or ["no crossing within 30 epochs: the order holds"]
        else:
            for s in batch_series(rows):
                plt.plot(s.batch, [r / 60 for r in s.runtime], label=s.instance, marker="braille")
                accs = [a for a in s.accuracy if a is not None and not math.isnan(a)]
                if accs:
                    notes.append(f"{s.instance}: accuracy " + ", ".join(
                        f"b{b} {a:.2f}" for b, a in zip(s.batch, s.accuracy) if a is not None))
            plt.xlabel("batch size")
            plt.ylabel("time (min)")
        plot.refresh()
        self.query_one("#chart-notes", Static).update("\n".join(notes))

    def action_next_kind(self) -> None:
        self.kind = KINDS[(KINDS.index(self.kind) + 1) % len(KINDS)]
        self.redraw(force=True)

    def action_save(self) -> None:
        app = self.app
        if any(w.group == SAVE_GROUP and not w.is_finished for w in app.workers):
            self.notify("Still saving the last chart …")  # one at a time: pyplot is not threadsafe
            return
        rows, lines = self.data()  # read here: the board changes on this thread only
        directory = self.session.log_dir or Path("probecast-exports")
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        out = Path(directory) / f"{self.kind}-{stamp}.png"
        # matplotlib takes a second or more (its import, the figure): in a thread, so every key
        # stays live. The app's worker, not the screen's: closing the charts does not lose the
        # file or its notice; failures go to the app's one Worker.StateChanged handler.
        app.run_worker(partial(save_chart, app, self.kind, rows, lines, out), thread=True,
                       exclusive=True, group=SAVE_GROUP, exit_on_error=False,
                       description="save the chart as a PNG")

    def action_close(self) -> None:
        self.app.pop_screen()


def save_chart(app: App[object], kind: str, rows: list[RankedRow], lines: list[Line],
               out: Path) -> Path | None:
    """Render the figure into ``out`` (a worker thread) and tell the app (ChartSaved)."""
    from probecast.core.report.figures import render

    try:
        path = render(kind, rows, lines, out)
    except ValueError as exc:  # nothing to draw: said, not an error
        app.post_message(ChartSaved(None, str(exc)))
        return None
    app.post_message(ChartSaved(path))
    return path
