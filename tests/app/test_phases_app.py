"""A program that trains in phases, replayed in the app: the detail view says how many phases
the estimate adds and what each contributes (a recorded probe of two PyTorch loops)."""

from __future__ import annotations

from conftest import ROOT
from pilot_steps import replayed_detail

LOG = ROOT / "tests" / "data" / "phases" / "torch_pretrain_finetune.probe.jsonl"


async def test_detail_view_names_each_phase() -> None:
    rows, text = await replayed_detail(str(LOG))
    assert rows == 1
    assert "phases 2: " in text and " s + " in text  # both phases' seconds
    assert "trains in 2 phases" in text  # and the note says which loop each is
