"""Two import defects, on real excerpts of MLPerf Training v4.0 (tests/data/mlperf, README):

- a GPU memory written in MiB (``"accelerator_memory_capacity": "46068 MiB"``, NVIDIA's L40S
  systems; B200 systems write "183359 MiB") was read as GB, 1024 times too large;
- a 2-node system's run cut at its first evaluation holds one ``block`` and one ``val``, and
  ``probecast rank`` said "no training steps" when no complete run had its global batch size
  (more nodes, a larger batch than any other system's): it is now estimated from the complete
  runs of the nearest batch sizes, and a run that cannot be says why.

L40S_N2 is NVIDIA's l40s_n2_ngc24.04_pytorch ssd run (2 nodes x 4 L40S, batch 256, 4 epochs);
HPE_N1 is HPE's 1-node 8 x H100 ssd run at batch 320 (also 4 epochs).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from probecast.core.model.estimate.batch_length import length_at
from probecast.core.model.estimate.blocks import RunLength
from probecast.core.model.events import Block, Start, Val
from probecast.core.model.mlperf.cut import Cut, cut_run
from probecast.core.model.mlperf.runs import load_system, read_run, to_events
from probecast.core.model.pricing import Catalog
from probecast.core.model.state import fold_all

RunCli = Callable[..., tuple[int, str, str]]  # conftest's run_cli: (exit code, stdout, stderr)
DATA = Path(__file__).resolve().parents[1] / "data" / "mlperf"
L40S_N2 = DATA / "v4.0/NVIDIA/results/l40s_n2_ngc24.04_pytorch/ssd/result_0.txt"
HPE_N1 = DATA / ("v4.0/HPE/results/HPE-Cray-XD670-Gen11-H100-SXM5-80GB_n1_pytorch_24.04/ssd/"
                 "result_2.txt")


def _events(path: Path) -> list:
    return to_events(read_run(path), Catalog.embedded())


# ---- GPU memory in MiB ---------------------------------------------------------------------

def test_memory_in_mib_is_read_as_mib() -> None:
    run = read_run(L40S_N2)
    assert run.system.accelerator == "NVIDIA L40S"
    assert run.system.accelerator_memory_mb == 46068.0  # "46068 MiB" in its systems JSON
    start = _events(L40S_N2)[0]
    assert isinstance(start, Start)
    assert {d.memory_mb for d in start.devices} == {46068.0}


def test_memory_in_gb_is_still_read_as_gb() -> None:
    run = read_run(HPE_N1)
    assert run.system.accelerator_memory_mb == 80 * 1024.0  # "80 GB"


@pytest.mark.parametrize("nodes, per_node, expected", [
    (2, 4, (2, 4)), ("2", "4", (2, 4)), (2.0, "8", (2, 8)), ("2.0", 8, (2, 8)),
])
def test_node_counts_written_as_floats_are_read(tmp_path: Path, nodes: object, per_node: object,
                                                expected: tuple[int, int]) -> None:
    # as L40S_N2's systems JSON, with the counts in the forms systems JSON use (v3.1 has 1.0)
    doc = json.loads((DATA / "v4.0/NVIDIA/systems/l40s_n2_ngc24.04_pytorch.json").read_text())
    doc["number_of_nodes"], doc["accelerators_per_node"] = nodes, per_node
    path = tmp_path / "system.json"
    path.write_text(json.dumps(doc))
    system = load_system(path, "l40s_n2", "NVIDIA")
    assert (system.nodes, system.accelerators_per_node) == expected
    assert system.accelerator_memory_mb == 46068.0


# ---- a 2-node run cut at its first evaluation ------------------------------------------------

def test_the_two_node_run_cut_at_its_first_evaluation_holds_one_block_and_one_val() -> None:
    run = read_run(L40S_N2)
    assert (run.system.nodes, run.system.accelerators_per_node) == (2, 4)
    cut = cut_run(_events(L40S_N2), Cut(first_eval=True))
    assert sum(isinstance(e, Block) for e in cut) == 1
    assert sum(isinstance(e, Val) for e in cut) == 1
    start = cut[0]
    assert isinstance(start, Start) and start.batch_size == 256 and len(start.devices) == 8


def _import(tmp_path: Path, run_cli: RunCli) -> tuple[Path, Path, float]:
    """The L40S run cut at its first evaluation, HPE's complete run, and the L40S run's truth."""
    cut, full = tmp_path / "cut", tmp_path / "full"
    code, _, _ = run_cli("import", "mlperf", str(L40S_N2), "--out", str(cut), "--cut", "first-eval")
    assert code == 0
    code, _, _ = run_cli("import", "mlperf", str(HPE_N1), "--out", str(full))
    assert code == 0
    whole = fold_all(_events(L40S_N2))
    assert whole.end is not None and whole.end.status == "complete"
    return cut / "ssd", full / "ssd", whole.end.t


def test_rank_estimates_it_from_complete_runs_of_another_batch_size(
        tmp_path: Path, run_cli: RunCli) -> None:
    cut, full, truth = _import(tmp_path, run_cli)
    code, text, _ = run_cli("rank", str(cut), str(full), "--json")
    assert code == 0
    rows = {r["batch_size"]: r for r in json.loads(text)}
    assert set(rows) == {256, 320}
    row = rows[256]
    assert row["equation"] == "blocks"
    assert row["instance"] == "l40s_n2_ngc24.04_pytorch"
    assert row["runtime_low_s"] <= truth <= row["runtime_high_s"]
    assert abs(row["runtime_s"] - truth) / truth < 0.05
    assert "none at 256" in row["epochs_source"] and "batch 320" in row["epochs_source"]
    assert any("one block seen" in n for n in row["notes"])  # scaled by the warm-up seen


def test_rank_alone_says_why_it_cannot_estimate_not_no_training_steps(
        tmp_path: Path, run_cli: RunCli) -> None:
    cut, _, _ = _import(tmp_path, run_cli)
    code, _, err = run_cli("rank", str(cut), "--json")
    assert code == 1
    assert "no training steps" not in err
    assert "complete runs of the same workload" in err


# ---- the length across batch sizes -----------------------------------------------------------

def _length(progress: float, evals: float, spread: float = 0.0, runs: int = 5) -> RunLength:
    return RunLength(progress, evals, f"complete runs of it ({runs})", progress - spread,
                     progress + spread, evals, evals, runs=runs, warm_ratio=1.5)


def test_length_between_two_batch_sizes_is_interpolated_in_log_batch() -> None:
    # MLPerf v4.0 resnet: 35 epochs at 3200, 70 at 40448 (medians of their complete runs)
    lengths = {("resnet", 3200): _length(35, 9), ("resnet", 40448): _length(70, 18, 4)}
    got = length_at(lengths, "resnet", 11377)  # ~the geometric mean: half-way in log batch
    assert got is not None
    assert got.progress == pytest.approx(52.5, abs=0.01)
    assert got.evals == pytest.approx(13.5, abs=0.01)
    assert got.progress_low == 35 and got.progress_high == 74
    assert got.runs == 10 and got.warm_ratio == 1.5
    assert "batch 3200 and 40448" in got.source and "interpolated" in got.source


def test_length_beyond_the_largest_batch_size_is_extrapolated_and_bounded_by_it() -> None:
    lengths = {("ssd", 256): _length(4, 4, runs=90), ("ssd", 320): _length(4, 4),
               ("ssd", 2528): _length(9, 8, 1)}
    same = length_at(lengths, "ssd", 256)
    assert same is lengths[("ssd", 256)]
    two_node = length_at(lengths, "ssd", 5056)  # twice the largest
    assert two_node is not None and two_node.progress > 9
    assert two_node.progress_low == 8 and two_node.progress_high == two_node.progress
    assert "extrapolated" in two_node.source
    small = length_at(lengths, "ssd", 64)  # below: flat between 256 and 320, so 4
    assert small is not None and small.progress == pytest.approx(4)


def test_no_complete_run_of_the_workload_is_no_length() -> None:
    assert length_at({("ssd", 256): _length(4, 4)}, "resnet", 3200) is None
    unknown = length_at({("ssd", 256): _length(4, 4, runs=90), ("ssd", 320): _length(5, 4)},
                        "ssd", 0)
    assert unknown is not None and unknown.progress == 4 and "logs no batch size" in unknown.source
