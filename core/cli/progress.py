"""`probe`'s progress while its probes run: one line per probe, redrawn in place on a terminal
(cut to its width, 80 columns included) and written as changes elsewhere (a log, CI)."""

from __future__ import annotations

import asyncio
import math
import shutil
import time
from collections.abc import Coroutine
from typing import Any, TextIO, TypeVar

from ..report.fmt import fmt_ms
from ..run.board import Board
from ..run.session import Session

T = TypeVar("T")


def _line(entry: Any) -> str:
    st = entry.state
    est, lo, hi = st.step_time()
    step = "" if math.isnan(est) else f"  step {fmt_ms(est)}"
    ci = "" if math.isnan(est) or math.isinf(hi) or not est else f" ±{(hi - lo) / 2 / est:.1%}"
    # a failure's reason; before the first step, what is happening (project copy, setup)
    shown = entry.status in ("failed", "stopped", "does-not-fit") or (entry.active and not st.steps)
    detail = f"  {entry.detail}" if shown and entry.detail else ""
    return f"{entry.spec.label:<24} {entry.status:<12} {st.steps:>6} steps{step}{ci}{detail}"


async def _report(board: Board, out: TextIO, tty: bool, stop: asyncio.Event) -> None:
    """Progress: a compact table redrawn in place on a terminal, changes as lines otherwise."""
    seen: dict[str, tuple[str, int, str]] = {}
    drawn = 0
    last_plain = 0.0
    while True:
        entries = list(board.entries.values())
        if tty:
            # one line per probe, cut to the terminal's width (80 columns included): a line that
            # wrapped would break the redraw in place
            width = max(40, shutil.get_terminal_size((80, 24)).columns - 1)
            if drawn:
                out.write(f"\x1b[{drawn}F")
            for e in entries:
                out.write("\x1b[2K" + _line(e)[:width] + "\n")
            drawn = len(entries)
            out.flush()
        else:
            now = time.monotonic()
            for e in entries:
                key = (e.status, e.state.steps // 50, e.detail if not e.state.steps else "")
                if seen.get(e.key) != key or (e.active and now - last_plain > 10):
                    seen[e.key] = key
                    out.write(_line(e) + "\n")
            if now - last_plain > 10:
                last_plain = now
            out.flush()
        if stop.is_set():
            return
        try:
            await asyncio.wait_for(stop.wait(), 1.0)
        except asyncio.TimeoutError:
            pass


async def with_progress(session: Session, work: Coroutine[Any, Any, T], out: TextIO) -> T:
    """Run ``work`` (the session driving its probes) with the progress report beside it."""
    stop = asyncio.Event()
    reporter = asyncio.create_task(_report(session.board, out, out.isatty(), stop))
    try:
        return await work
    finally:
        stop.set()
        await reporter
