"""Steps that Pilot tests of the app take alike, written once."""

from __future__ import annotations

from typing import Any

from textual.pilot import Pilot

from probecast.tui.app import ProbecastApp
from probecast.tui.widgets.ranking import RankingTable


async def finished_view(app: ProbecastApp, pilot: Pilot[Any]) -> RankingTable:
    """Once every worker is done (a replay read to its end, a probe job over), the run screen
    redrawn now rather than at its next timer tick; its ranking table, to read."""
    await app.workers.wait_for_complete()
    await pilot.pause()
    app.screen.refresh_view(force=True)  # type: ignore[attr-defined]
    await pilot.pause()
    return app.screen.query_one(RankingTable)


async def replayed_detail(log: str) -> tuple[int, str]:
    """One saved log replayed in the app at 160x48 to its end: the ranking's rows, and the
    detail view's text."""
    from probecast.tui.main import make_replay_app

    app = make_replay_app([log], speed=0)
    async with app.run_test(size=(160, 48)) as pilot:
        table = await finished_view(app, pilot)
        return table.row_count, app.screen.query_one("#detail").plain_text(150)

