"""Work after every K-th epoch, replayed in the app: the detail view's equation counts N_val
validation passes and says how many, or adds the work at the boundaries after those epochs
(recorded probes of benchmarks/corpus/runs-epoch-work)."""

from __future__ import annotations

from conftest import ROOT
from pilot_steps import replayed_detail

RUNS = ROOT / "benchmarks" / "corpus" / "runs-epoch-work"


async def test_detail_view_counts_the_validation_passes() -> None:
    rows, text = await replayed_detail(str(RUNS / "probe-ew-keras-freq5.jsonl.gz"))  # freq 5
    assert rows == 1
    assert "(N_val−1)·T_val" in text and "N_val 6" in text
    assert "validation after epochs 5, 10, 15, ... (6 of 30)" in text


async def test_detail_view_adds_the_work_at_the_boundaries_after_those_epochs() -> None:
    rows, text = await replayed_detail(str(RUNS / "probe-ew-torch-hand10.jsonl.gz"))  # a test
    assert rows == 1 and "+ n·T_per" in text and "× 10" in text  # by hand every 10th epoch
    assert "after epochs 1, 11, 21, ... (10 of 100)" in text
