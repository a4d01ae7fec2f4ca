"""The run screen: ranking table, per-probe panels, detail view - for live probes and replays."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header

from probecast.core.report.export import export_ranking
from probecast.core.report.fmt import fmt_cost
from probecast.core.model.rank.ranking import RankedRow, RankOptions, verdict
from probecast.core.run.session import Session

from ..actions import bindings
from ..messages import RankingViewChanged
from ..widgets.detail import DetailView
from ..widgets.line import TextLine
from ..widgets.probe_panel import ProbePanel
from ..widgets.ranking import MAX_ROWS, RankingTable

REFRESH_HZ = 5  # the timer; what it redraws is throttled per part below
MAX_PANELS = 32  # live panels beyond this help nobody (the ranking and detail cover the rest)


def redraw_interval() -> float:
    """Seconds between redraws of the ranking and the probe panels.

    A ranking redraw repaints the whole table (~20 KB of escape codes at 80x24), so on a slow
    link redraws are rarer: 1 s locally, 3 s inside an SSH session; PROBECAST_REFRESH overrides.
    """
    import os

    value = os.environ.get("PROBECAST_REFRESH")
    if value:
        try:
            return max(0.2, float(value))
        except ValueError:
            pass
    return 3.0 if os.environ.get("SSH_CONNECTION") or os.environ.get("SSH_TTY") else 1.0


class RunScreen(Screen[None]):
    BINDINGS = bindings("run")

    # The view of the ranking. Actions set these; each watcher says the view changed
    # (RankingViewChanged), and its handler redraws the title and the table once.
    by: var[str] = var("time", init=False)  # v: time, cost or weighted
    weight: var[float] = var(0.5, init=False)  # [ ]: the weighted view's weight on time
    horizon_index: var[int] = var(0, init=False)  # h: into ``horizons``
    workload: var[str | None] = var(None, init=False, bindings=True)  # w: one of several
    with_setup: var[bool] = var(False, init=False)  # u: each host's measured setup added

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self._ranked: RankOptions | None = None  # the options the table was last ranked by
        self._full_cost: float | None = None  # every ranked job run in full, for the status line
        self._seen_board = -1  # the board version the ranking shows
        self._panels_version = -1  # ... and the panels
        self._last_rank_at = 0.0
        self._last_panels_at = 0.0
        self.every = redraw_interval()
        self._rows: dict[str, RankedRow] = {}
        self._panels: dict[str, ProbePanel] = {}
        self._cancelling: set[str] = set()  # probes whose cancel is under way

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="ranking-box"):
            yield RankingTable(id="ranking")
        with Horizontal(id="lower"):
            yield VerticalScroll(id="probes")
            with VerticalScroll(id="detail-box"):
                yield DetailView(id="detail")
        yield TextLine(id="statusline")
        yield Footer(show_command_palette=False)  # 80 columns: ? and the help list ctrl+p

    def on_mount(self) -> None:
        self.query_one("#detail-box").border_title = "Detail"
        self.query_one("#probes").border_title = "Probes"
        if self.size.width < 120:
            self.query_one("#detail-box").display = False
        self.update_title()
        self.set_interval(1 / REFRESH_HZ, self.refresh_view)
        self.call_after_refresh(self.refresh_view)  # paint first, then fill in

    # ---- what is shown ------------------------------------------------------------------------

    @property
    def horizons(self) -> list[float | None]:
        return [None, *self.session.horizons]

    @property
    def epochs(self) -> float | None:
        return self.horizons[self.horizon_index]

    def options(self) -> RankOptions:
        settings = self.session.settings
        steps = settings.steps if settings is not None and self.epochs is None else None
        config = self.session.config  # its own [[catalog]] instances, predicted where not probed
        own = tuple(o.name for o in config.catalog) if config is not None else ()
        return RankOptions(epochs=self.epochs, steps=steps, by=self.by, weight=self.weight,
                           workload=self.workload, with_setup=self.with_setup, predict=own)

    def horizon_label(self) -> str:
        return "planned length" if self.epochs is None else f"{self.epochs:g} epochs"

    def watch_by(self) -> None:
        self._view_changed()

    def watch_weight(self) -> None:
        self._view_changed()

    def watch_horizon_index(self) -> None:
        self._view_changed()

    def watch_workload(self) -> None:
        self._view_changed()

    def watch_with_setup(self) -> None:
        self._view_changed()

    def _view_changed(self) -> None:
        self.post_message(RankingViewChanged(self.options()))

    @on(RankingViewChanged)
    def _redraw_view(self, message: RankingViewChanged) -> None:
        self.update_title()
        if message.options != self._ranked:  # not already drawn (update_ranking picks a workload)
            self.update_ranking()

    def update_title(self) -> None:
        view = {"time": "fastest", "cost": "cheapest"}.get(
            self.by, f"weighted {self.weight:.1f}·time+{1 - self.weight:.1f}·cost ([ ])")
        workload = f" · {self.workload} (w)" if self.workload else ""
        workload += " · + setup (u)" if self.with_setup else ""
        self.query_one("#ranking-box").border_title = (
            f"Ranking: {view} first · {self.horizon_label()}{workload}  [dim](v: view, h: horizon)[/]")

    def refresh_view(self, force: bool = False) -> None:
        board = self.session.board
        version = board.version
        now = time.monotonic()
        # each part is redrawn when the board changed since *it* was last drawn and its interval
        # has passed: a change that lands inside the interval is drawn at the next tick after it
        with self.app.batch_update():
            if version != self._panels_version and (
                    force or now - self._last_panels_at >= self.every or self._new_probes()):
                self._panels_version = version
                self._last_panels_at = now
                self.update_panels()
            elif force:
                self.update_panels()
            if (version != self._seen_board or force) and (
                    force or now - self._last_rank_at >= self.every):
                self._seen_board = version
                self._last_rank_at = now
                self.update_ranking()
            self.update_status()

    def _new_probes(self) -> bool:
        return len(self._panels) != min(MAX_PANELS, len(self.session.board.entries))

    def update_panels(self) -> None:
        container = self.query_one("#probes", VerticalScroll)
        entries = self.session.board.entries
        for key in list(entries)[:MAX_PANELS]:
            panel = self._panels.get(key)
            if panel is None:
                panel = ProbePanel(self.session.board, key, self.session.host_caption, self.every)
                self._panels[key] = panel
                container.mount(panel)
            elif panel.is_mounted and panel.region.area:
                # only panels on screen: off-screen ones catch up when scrolled into view
                panel.refresh_from_entry()
        hidden = len(entries) - len(self._panels)
        title = "Probes" + (f" (first {len(self._panels)} of {len(entries)}; the rest: "
                            "ranking and detail)" if hidden > 0 else "")
        if container.border_title != title:
            container.border_title = title

    def update_ranking(self) -> None:
        workloads = self.session.board.workloads()
        self._full_cost = None
        if len(workloads) > 1 and self.workload not in workloads:
            self.workload = workloads[0]  # its watcher redraws the title; w applies now
        self._ranked = self.options()
        ranking = self.session.board.ranking(self._ranked)
        records = ranking.rows
        shown = [*records, *(r for rows in ranking.no_fit.values() for r in rows)]
        self._rows = {r.key: r for r in shown}
        self._full_cost = self.session.board.full_cost(records)
        table = self.query_one(RankingTable)
        table.apply(shown, self.by)
        box = self.query_one("#ranking-box")
        more = (f"top {MAX_ROWS} of {len(records)} rows · e exports all"
                if len(records) > MAX_ROWS else "")
        unknown = ("per 1,000 steps: length unknown ([probe] steps sets it; d: why)"
                   if records and records[0].per_steps else "")
        said = " · ".join(part for part in (
            unknown, verdict(records, self.by, running=self.session.board.active), more) if part)
        if box.border_subtitle != said:
            box.border_subtitle = said
        self.show_detail(table.selected_key())

    def update_status(self) -> None:
        board = self.session.board
        total = len(board.entries)
        active = board.active
        failed = sum(1 for e in board.entries.values() if e.status == "failed")
        cost = board.probe_cost()
        parts = [f"probes {total - active}/{total} ended" + (f", {failed} failed" if failed else ""),
                 "probe cost " + (fmt_cost(cost) if cost is not None else "n/a")]
        if cost is not None and self._full_cost:
            parts[-1] += f" vs {fmt_cost(self._full_cost)} to run all"
        if self.session.is_replay:
            s = self.session
            parts.append(("paused" if s.paused else "replay") + f" ×{s.speed:g}" if s.speed else "replay instant")
        if self.session.log_dir:
            parts.append(f"logs {self.session.log_dir}")
        self.query_one("#statusline", TextLine).text = " · ".join(parts)

    def show_detail(self, key: str | None) -> None:
        self.query_one(DetailView).show(self._rows.get(key) if key else None)

    @on(DataTable.RowHighlighted)
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.show_detail(event.row_key.value if event.row_key else None)

    # ---- actions ------------------------------------------------------------------------------

    def action_toggle_view(self) -> None:
        self.by = {"time": "cost", "cost": "weighted", "weighted": "time"}[self.by]

    def action_weight(self, delta: float) -> None:
        self.weight = round(min(1.0, max(0.0, self.weight + delta)), 1)
        self.by = "weighted"

    def action_charts(self) -> None:
        from .charts import ChartScreen

        self.app.push_screen(ChartScreen(self.session, self.epochs, self.workload,
                                         self.query_one(RankingTable).selected_key()))

    def action_toggle_setup(self) -> None:
        self.with_setup = not self.with_setup
        if self.with_setup and not any(r.setup_s for r in self._rows.values()):
            self.notify("No host ran a [probe] setup: nothing to add.", severity="warning")

    def action_cycle_horizon(self) -> None:
        self.horizon_index = (self.horizon_index + 1) % len(self.horizons)

    def action_cycle_workload(self) -> None:
        workloads = self.session.board.workloads()
        if len(workloads) < 2:
            self.notify("All probes run the same workload.")
            return
        i = workloads.index(self.workload) if self.workload in workloads else -1
        self.workload = workloads[(i + 1) % len(workloads)]

    def action_toggle_detail(self) -> None:
        box = self.query_one("#detail-box")
        box.display = not box.display
        if box.display and self.size.width < 120:
            self.query_one("#probes").display = not box.display
        else:
            self.query_one("#probes").display = True

    def action_show_output(self) -> None:
        from probecast.core.run.runners import output_path

        from .output import OutputScreen

        key = self.query_one(RankingTable).selected_key()
        entry = self.session.board.entries.get(key) if key else None
        if entry is None and self.session.board.entries:  # no estimate yet: the first probe
            entry = next(iter(self.session.board.entries.values()))
        if entry is None:
            self.notify("No probe yet.", severity="warning")
            return
        path = output_path(entry.log_path) if entry.log_path else None
        self.app.push_screen(OutputScreen(entry.spec.label, path))

    def action_cancel_probe(self) -> None:
        key = self.query_one(RankingTable).selected_key()
        if key is None:
            self.notify("Select a probe in the ranking first.", severity="warning")
            return
        if not self.session.is_running(key):
            self.notify(f"{key} is not running.", severity="warning")
            return
        if key in self._cancelling:
            self.notify(f"{key} is being cancelled.")
            return
        # A cancel waits for the probe to stop (the agent's grace period, an SSH round trip:
        # seconds): in a worker, so every key stays live meanwhile. Its failure is told by the
        # app's one Worker.StateChanged handler.
        self._cancelling.add(key)
        self.notify(f"Cancelling {key}…")
        self.app.run_worker(self._cancel(key), exclusive=False, group="cancel",
                            exit_on_error=False, description=f"cancel {key}")

    async def _cancel(self, key: str) -> None:
        try:
            await self.session.cancel(key)
        finally:
            self._cancelling.discard(key)

    def action_export(self) -> None:
        rows = self.session.board.ranking(self.options()).with_no_fit()  # and what did not fit
        if not rows:
            self.notify("Nothing to export yet: no probe has an estimate.", severity="warning")
            return
        directory = self.session.log_dir or Path("probecast-exports")
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        view = {"time": "fastest", "cost": "cheapest"}.get(self.by, f"weighted{self.weight:.1f}")
        horizon = "planned" if self.epochs is None else f"{self.epochs:g}ep"
        paths = export_ranking(rows, Path(directory), f"ranking-{view}-{horizon}-{stamp}",
                               f"probecast ranking: {view} first, {self.horizon_label()}")
        self.notify("Exported " + ", ".join(str(p) for p in paths), timeout=8)

    def action_pause(self) -> None:
        if not self.session.is_replay:
            self.notify("Pause works in replays; live probes keep running.", severity="warning")
            return
        self.session.set_paused(not self.session.paused)
        self.update_status()

    def action_speed(self, factor: float) -> None:
        if self.session.is_replay:
            self.session.scale_speed(factor)
            self.update_status()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # hide what does not apply, so the footer fits 80 columns
        if action in ("pause", "speed"):
            return self.session.is_replay
        if action == "cancel_probe":
            return not self.session.is_replay
        if action == "cycle_workload":
            return len(self.session.board.workloads()) > 1
        return True
