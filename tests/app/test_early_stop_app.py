"""A run an early stop ended, replayed in the app (pyGAT's recorded probe: its own
``if bad_counter == args.patience: break`` after 115 of 10 000 planned steps): the detail view
says the run was measured, what a repeat may do, and both sides the bounds reach."""

from __future__ import annotations

from conftest import ROOT
from pilot_steps import replayed_detail

LOG = ROOT / "benchmarks" / "corpus" / "runs-public" / "probe-pygat.jsonl.gz"


async def test_detail_view_says_both_sides_an_early_stop_reaches() -> None:
    rows, text = await replayed_detail(str(LOG))
    assert rows == 1
    assert "an early stop ended this run after 115 of 10000 steps" in text
    assert "unseen +" in text and "unseen −16.7s" in text
    assert "fit alone" not in text  # (the equations' fit is of the planned 10 000 steps)
