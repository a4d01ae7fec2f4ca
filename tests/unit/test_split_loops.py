"""A loop over the data's splits around the step counts the splits that train, not all of them
(core/agent/split_loops.py), on real frames (test_length.run_program). Before, PyTorch's
transfer-learning tutorial's ``for phase in ["train", "val"]`` around ``dataloaders[phase]``
read no length at all (a dict's loader was not iterated through a name), and with a name
iterated, twice the epochs."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_length import run_program

pytestmark = pytest.mark.unit

TRAIN, VAL = list(range(32)), list(range(8))


def per_pass(obj: object) -> int | None:
    return 32 if obj is TRAIN else None


def test_a_phase_loop_over_a_dict_of_loaders_steps_once_an_epoch(tmp_path: Path) -> None:
    (found,) = run_program(tmp_path, """
        dataloaders = {"train": train, "val": val}
        def train_model(num_epochs=25):
            for epoch in range(num_epochs):
                for phase in ["train", "val"]:
                    for inputs in dataloaders[phase]:
                        if phase == "train":
                            step(per_pass)
                            return
        train_model(num_epochs=10)
    """, train=TRAIN, val=VAL, per_pass=per_pass)
    assert (found.steps, found.epochs, found.steps_per_epoch) == (320, 10, None)
    assert "for phase in ['train', 'val'] (train.py:5), stepping in 'train' only" in found.source
    assert not found.every  # not periodic work once a pass of the epochs' loop


def test_phase_and_loader_pairs_with_the_step_in_the_else_branch(tmp_path: Path) -> None:
    (found,) = run_program(tmp_path, """
        for epoch in range(6):
            for phase, loader in [("val", val), ("train", train)]:
                for inputs in loader:
                    if phase != "train":
                        pass
                    else:
                        step(per_pass)
                        break
            break
    """, train=TRAIN, val=VAL, per_pass=per_pass)
    assert (found.steps, found.epochs) == (6 * 32, 6)
    assert "stepping in 'train' only" in found.source


def test_a_loop_over_tasks_that_all_train_counts_each(tmp_path: Path) -> None:
    """No guard on the loop's name around the step: every item trains (a model trained on two
    tasks in turn), as before."""
    (found,) = run_program(tmp_path, """
        for epoch in range(5):
            for task in ["a", "b"]:
                for inputs in train:
                    step(per_pass)
                    break
                break
            break
    """, train=TRAIN, per_pass=per_pass)
    assert (found.steps, found.epochs) == (5 * 2 * 32, 10)
    assert "stepping in" not in found.source


def test_a_guard_on_another_name_or_an_unreadable_one_counts_every_item(tmp_path: Path) -> None:
    (found,) = run_program(tmp_path, """
        for epoch in range(3):
            for phase in ["train", "val"]:
                for inputs in train:
                    if epoch >= 0 and model_ready(phase):
                        step(per_pass)
                        break
                break
            break
    """, train=TRAIN, per_pass=per_pass, model_ready=lambda phase: True)
    assert (found.steps, found.epochs) == (3 * 2 * 32, 6)  # a call it does not make: unknown


def test_a_generator_yielding_the_loaders_batches_makes_its_pass(tmp_path: Path) -> None:
    """torchvision's references: ``metric_logger.log_every(data_loader, ...)``, a generator of
    the program's own over the loader (loops._loader_generator): the loader's pass, counted as
    the loader's loop counts it (an object with no length of its own to the reader)."""
    (found,) = run_program(tmp_path, """
        class MetricLogger:
            def log_every(self, iterable, print_freq, header=""):
                for i, obj in enumerate(iterable):
                    yield obj
        def train_one_epoch(data_loader, epoch):
            metric_logger = MetricLogger()
            for x in metric_logger.log_every(data_loader, 10, f"Epoch: [{epoch}]"):
                step(loader_pass)
                return
        def main():
            for epoch in range(0, 12):
                train_one_epoch(data_loader, epoch)
                break
        main()
    """, data_loader=LOADER, loader_pass=lambda obj: 50 if obj is LOADER else None)
    assert (found.steps, found.epochs) == (12 * 50, 12)
    assert "log_every" in found.source


class _Batches:
    """A loader the reader cannot size itself (as a DataLoader): loader_loop counts it."""

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(range(3))


LOADER = _Batches()
