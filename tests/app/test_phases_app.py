"""A program that trains in phases, replayed in the app: the detail view says how many phases
the estimate adds and what each contributes (a recorded probe of two PyTorch loops)."""

from __future__ import annotations

from conftest import ROOT
from probecast.tui.main import make_replay_app
from probecast.tui.widgets.ranking import RankingTable

LOG = ROOT / "tests" / "data" / "phases" / "torch_pretrain_finetune.probe.jsonl"


async def test_detail_view_names_each_phase() -> None:
    app = make_replay_app([str(LOG)], speed=0)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.screen.refresh_view(force=True)  # type: ignore[attr-defined]
        await pilot.pause()
        table = app.screen.query_one(RankingTable)
        assert table.row_count == 1
        text = app.screen.query_one("#detail").plain_text(150)
        assert "phases 2: " in text and " s + " in text  # both phases' seconds
        assert "trains in 2 phases" in text  # and the note says which loop each is
