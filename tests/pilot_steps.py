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
