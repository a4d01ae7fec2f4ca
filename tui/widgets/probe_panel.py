"""One compact panel per probe: status, steps, steady step time +/- CI, live chart, hardware."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.widgets import Sparkline

from probecast.core.model.estimate.training import trend_of
from probecast.core.model.memory.forecast import does_not_fit, fit_reason
from probecast.core.run.board import Board, ProbeEntry
from probecast.core.report.fmt import fmt_ms

from .line import TextLine

STATUS_STYLE = {
    "pending": "dim", "launching": "yellow", "connecting": "yellow", "uploading": "yellow", "running": "cyan",
    "done": "green", "failed": "bold red", "stopped": "magenta", "does-not-fit": "bold yellow",
}


def chart_values(values: list[float]) -> list[float]:
    """Clip outliers (the first iteration, epoch boundaries) at 3x the median, so they show as
    full-height bars without flattening everything else."""
    if len(values) < 3:
        return values
    cap = 3 * statistics.median(values)
    return [min(v, cap) for v in values]


class ProbePanel(Vertical):
    DEFAULT_CSS = """
    ProbePanel { height: 6; border: round $panel-lighten-2; padding: 0 1; margin-bottom: 0; }
    ProbePanel.-failed { border: round $error; }
    ProbePanel.-done { border: round $success 50%; }
    ProbePanel.-nofit { border: round $warning; }
    ProbePanel .headline { height: 1; }
    ProbePanel Sparkline { height: 2; margin: 0; }
    ProbePanel Sparkline > .sparkline--max-color { color: $accent; }
    ProbePanel Sparkline > .sparkline--min-color { color: $accent; }
    ProbePanel .hardware { height: 1; color: $text-muted; }
    """

    CHART_EVERY = 2.0  # seconds: a shifting chart redraws whole lines - the costliest output

    def __init__(self, board: Board, key: str,
                 caption: Callable[[str], str | None] | None = None, every: float = 1.0) -> None:
        super().__init__(id=f"probe-{_css_id(key)}")
        self.board = board
        self.key = key
        self.caption = caption  # the host's provider: a launched instance's phase and cost
        self.every = every  # seconds between the run screen's redraws (slower over SSH)
        self.seen: tuple[int, int] = (-1, -1)  # (id, version) of the entry last drawn
        self._chart_at = 0.0
        self.border_title = self.entry.spec.label

    @property
    def entry(self) -> ProbeEntry:
        """The board's entry for this probe, looked up each time: a re-probe (the adaptive
        probe's board.restart) replaces the entry, and the panel must show the new one."""
        return self.board.entries[self.key]

    def compose(self) -> ComposeResult:
        yield TextLine(classes="headline")
        yield Sparkline([], summary_function=max)
        yield TextLine(classes="hardware")

    def on_mount(self) -> None:
        self.refresh_from_entry()
        if self.caption is not None and self.caption(self.key) is not None:
            # the phase and the price tick while the board may be still (booting, terminating)
            self.set_interval(max(1.0, self.every), self.show_caption)

    def show_caption(self) -> None:
        text = (self.caption(self.key) if self.caption is not None else None) or \
            self.entry.instance or ""
        if self.border_subtitle != text:
            self.border_subtitle = text

    def refresh_from_entry(self) -> None:
        try:  # a panel being removed (the run screen re-lays its panels) has no lines left
            headline = self.query_one(".headline", TextLine)
        except NoMatches:
            return
        e = self.entry
        seen = (id(e), e.version)
        if seen == self.seen:
            return
        self.seen = seen
        st = e.state
        head = Text()
        head.append(f"{e.status:<9}", STATUS_STYLE.get(e.status, ""))
        if st.blocks and not st.steps:  # a run timed in blocks (imported MLPerf results)
            head.append(f" {len(st.blocks):>5} blocks ")
            last = st.blocks[-1]
            if last.progress is not None:
                head.append(f" {last.progress:g} {last.unit}", "dim")
            head.append(f"  {len(st.vals)} evaluations", "dim")
        else:
            head.append(f" {st.steps:>5} steps ")
        est, lo, hi = st.step_time()
        if not math.isnan(est):
            head.append(f" {fmt_ms(est)}")
            if not math.isinf(hi) and est:
                head.append(f" ±{(hi - lo) / 2 / est:.1%}", "dim")
        if st.t_it1 is not None:
            head.append(f"  first {fmt_ms(st.t_it1)}", "dim")
        if st.boundary_steps:
            head.append(f"  boundary {fmt_ms(st.boundary_steps[-1])}", "dim")
        if not e.active and st.steps:  # an ended probe: did it end while its steps still moved?
            trend, moving = trend_of(st)
            if moving and trend is not None:
                head.append(f"  still {moving} ({100 * trend.per_100_steps:+.0f} %/100 steps)",
                            "yellow")
            if st.left_files():  # a checkpoint, say
                head.append("  left files in its folder (d: detail)", "yellow")
        headline.text = head  # repainted only when it changed (TextLine)
        now = time.monotonic()
        if now - self._chart_at >= max(self.CHART_EVERY, 2 * self.every) \
                or not e.active:
            self._chart_at = now
            self.query_one(Sparkline).data = chart_values(list(e.recent))
        self.query_one(".hardware", TextLine).text = hardware_line(e)
        self.set_class(e.status == "failed", "-failed")
        self.set_class(e.status == "done", "-done")
        self.set_class(e.status == "does-not-fit" or does_not_fit(e.state), "-nofit")
        self.show_caption()


def hardware_line(e: ProbeEntry) -> Text:
    out = Text()
    if e.status == "does-not-fit" or does_not_fit(e.state):  # the answer, in its words
        out.append(fit_reason(e.state) if does_not_fit(e.state) else e.detail, "yellow")
        return out
    if e.status in ("failed", "stopped") and e.detail:
        out.append(e.detail, "red" if e.status == "failed" else "magenta")
        return out
    s = e.state.last_sample
    if s is not None:
        parts = []
        if s.gpu_util:
            parts.append("GPU " + "/".join(f"{u:.0f}%" for u in s.gpu_util))
        if s.gpu_mem_mb and s.gpu_mem_total_mb:
            used, total = sum(s.gpu_mem_mb), sum(s.gpu_mem_total_mb)
            parts.append(f"mem {used / 1024:.1f}/{total / 1024:.0f}G")
        if s.cpu_util is not None:
            parts.append(f"CPU {s.cpu_util:.0f}%")
        if s.rss_mb is not None:
            parts.append(f"RSS {s.rss_mb:.0f}M")
        if s.swap_mb is not None:
            parts.append(f"swap {s.swap_mb:.0f}M")
        out.append("  ".join(parts))
    hint = e.state.hint()
    if hint:
        out.append(f"  ⚠ {hint}", "yellow")
    if not out.plain and e.detail:
        out.append(e.detail, "dim")
    return out


def _css_id(key: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in key)
