"""A program that trains in phases, replayed in the app: the detail view says how many phases
the estimate adds and what each contributes (a recorded probe of two PyTorch loops)."""

from __future__ import annotations

from conftest import ROOT
from pilot_steps import finished_view
from probecast.tui.main import make_replay_app

LOG = ROOT / "tests" / "data" / "phases" / "torch_pretrain_finetune.probe.jsonl"


async def test_detail_view_names_each_phase() -> None:
    app = make_replay_app([str(LOG)], speed=0)
    async with app.run_test(size=(160, 48)) as pilot:
        table = await finished_view(app, pilot)
        assert table.row_count == 1
        text = app.screen.query_one("#detail").plain_text(150)
        assert "phases 2: " in text and " s + " in text  # both phases' seconds
        assert "trains in 2 phases" in text  # and the note says which loop each is
