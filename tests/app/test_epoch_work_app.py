"""Validation after every K-th epoch, replayed in the app: the detail view's equation counts
N_val passes and says how many (a recorded probe of a Keras fit with validation_freq=5,
benchmarks/corpus/runs-epoch-work)."""

from __future__ import annotations

from conftest import ROOT
from pilot_steps import replayed_detail

LOG = ROOT / "benchmarks" / "corpus" / "runs-epoch-work" / "probe-ew-keras-freq5.jsonl.gz"


async def test_detail_view_counts_the_validation_passes() -> None:
    rows, text = await replayed_detail(str(LOG))
    assert rows == 1
    assert "(N_val−1)·T_val" in text and "N_val 6" in text
    assert "validation after epochs 5, 10, 15, ... (6 of 30)" in text
