"""A run an early stop ended, replayed in the app (pyGAT's recorded probe: its own
``if bad_counter == args.patience: break`` after 115 of 10 000 planned steps): the detail view
says the run was measured, what a repeat may do, and both sides the bounds reach."""

from __future__ import annotations

from conftest import ROOT
from pilot_steps import finished_view
from probecast.tui.main import make_replay_app

LOG = ROOT / "benchmarks" / "corpus" / "runs-public" / "probe-pygat.jsonl.gz"


async def test_detail_view_says_both_sides_an_early_stop_reaches() -> None:
    app = make_replay_app([str(LOG)], speed=0)
    async with app.run_test(size=(160, 48)) as pilot:
        table = await finished_view(app, pilot)
        assert table.row_count == 1
        text = app.screen.query_one("#detail").plain_text(150)
        assert "an early stop ended this run after 115 of 10000 steps" in text
        assert "unseen +" in text and "unseen −16.7s" in text
