"""``zip()`` of the training DataLoader with others makes the pass, as long as the shortest
(loops._zipped_loaders), on real frames (test_length.run_program) and real DataLoaders. Before:
no length at all - a zip's count asked each loader's size, and a DataLoader has none to the
reader (torch_data counts its passes): domain adaptation's ``zip(source, target)``, a
semi-supervised ``zip(labeled, cycle(unlabeled))``, CycleGAN's two domains."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_length import run_program

pytestmark = pytest.mark.unit

torch = pytest.importorskip("torch")
_data = torch.utils.data
TRAIN = _data.DataLoader(_data.TensorDataset(torch.zeros(64 * 4, 2)), batch_size=4)  # 64
TARGET = _data.DataLoader(_data.TensorDataset(torch.zeros(40 * 4, 2)), batch_size=4)  # 40


def each_batch(obj: object) -> int | None:
    return 64 if obj is TRAIN else None


def two_a_step(obj: object) -> int | None:
    return 32 if obj is TRAIN else None  # gradient accumulation: 2 batches a step


def zipped(tmp_path: Path, pair: str, per_pass: object) -> Any:
    (found,) = run_program(tmp_path, f"""
        from itertools import cycle
        for epoch in range(10):
            for i, (xs, xt) in enumerate({pair}):
                step(per_pass)
                break
            break
    """, train=TRAIN, target=TARGET, per_pass=per_pass)
    return found


def test_a_pass_of_zipped_loaders_ends_with_the_shortest(tmp_path: Path) -> None:
    found = zipped(tmp_path, "zip(train, target)", each_batch)
    assert (found.steps, found.epochs) == (10 * 40, 10)
    assert "zip(train, target)" in found.source


def test_a_cycled_loader_never_ends_the_pass(tmp_path: Path) -> None:
    found = zipped(tmp_path, "zip(train, cycle(target))", each_batch)
    assert (found.steps, found.epochs) == (10 * 64, 10)


def test_the_others_batches_count_at_the_training_loaders_batches_a_step(tmp_path: Path) -> None:
    assert zipped(tmp_path, "zip(target, train)", two_a_step).steps == 10 * 20  # 40 batches


def test_a_zip_with_an_argument_of_unknown_length_reads_none(tmp_path: Path) -> None:
    assert zipped(tmp_path, "zip(train, (b for b in target))", each_batch).steps is None


def test_a_range_over_a_loaders_length_counts_it(tmp_path: Path) -> None:
    """``for i in range(len(loader)): x, y = next(it)``: the count the program asks for itself
    (values.sized, asked) - a DataLoader was refused any length (none before)."""
    (found,) = run_program(tmp_path, """
        for epoch in range(10):
            it = iter(train)
            for i in range(len(train)):
                step(per_pass)
                break
            break
    """, train=TRAIN, per_pass=each_batch)
    assert (found.steps, found.epochs) == (10 * 64, 10)
