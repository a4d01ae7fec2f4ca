"""A `while` around the loader's loop whose counter each step advances counts steps, not passes
(core/agent/step_counters.py), on real frames (test_length.run_program). Before, each of these
read its bound as passes of the loader: `while step < 3000` around 32 batches a pass was planned
at 96 000 steps (a probe of it: +1 057 %)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_length import run_program

pytestmark = pytest.mark.unit

LOADER = list(range(32))


def per_pass(obj: object) -> int | None:
    return 32 if obj is LOADER else None


def test_a_while_whose_counter_the_steps_advance_counts_steps(tmp_path: Path) -> None:
    (found,) = run_program(tmp_path, """
        train_num_steps, global_step = 3000, 0
        while global_step < train_num_steps:
            for batch in loader:
                step(per_pass)
                global_step += 1
                if global_step >= train_num_steps:
                    break
                break
            break
    """, loader=LOADER, per_pass=per_pass)
    assert (found.steps, found.epochs, found.steps_per_epoch) == (3000, 94, None)
    assert "while global_step < train_num_steps (train.py:3): 3000 steps" in found.source


def test_while_true_with_a_break_on_the_steps_counter_counts_steps(tmp_path: Path) -> None:
    (found,) = run_program(tmp_path, """
        max_iters, it, done = 1000, 0, False
        while True:
            for batch in loader:
                step(per_pass)
                it = it + 1
                if it >= max_iters:
                    done = True
                    break
                break
            if done or True:
                break
    """, loader=LOADER, per_pass=per_pass)
    assert (found.steps, found.epochs) == (1000, 32)  # 31 passes and a cut one


def test_a_counter_advanced_by_a_written_number_counts_iterations_of_that_size(
        tmp_path: Path) -> None:
    (found,) = run_program(tmp_path, """
        total, seen = 6400, 0
        while seen < total:
            for batch in loader:
                step(per_pass)
                seen += 2
                break
            break
    """, loader=LOADER, per_pass=per_pass)
    assert (found.steps, found.epochs) == (3200, 100)


def test_a_counter_advanced_once_a_pass_counts_passes(tmp_path: Path) -> None:
    (found,) = run_program(tmp_path, """
        max_epochs, epoch, global_step = 60, 0, 0
        while epoch < max_epochs:
            for batch in loader:
                step(per_pass)
                global_step += 1  # (not the counter the while tests)
                break
            epoch += 1
            break
    """, loader=LOADER, per_pass=per_pass)
    assert (found.steps, found.epochs) == (60 * 32, 60)
    assert "steps" not in found.source


def test_a_counter_of_samples_is_no_step_count(tmp_path: Path) -> None:
    """`seen += len(batch)` counts samples, not iterations: not rescaled."""
    (found,) = run_program(tmp_path, """
        total, seen = 3000, 0
        while seen < total:
            for batch in loader:
                step(per_pass)
                seen += len([batch])
                break
            break
    """, loader=LOADER, per_pass=per_pass)
    assert found.steps != 3000 and ": 3000" not in found.source


def test_a_counter_advanced_in_the_whiles_own_body_too_is_no_step_count(tmp_path: Path) -> None:
    (found,) = run_program(tmp_path, """
        total, n = 3000, 0
        while n < total:
            for batch in loader:
                step(per_pass)
                n += 1
                break
            n += 1
            break
    """, loader=LOADER, per_pass=per_pass)
    assert found.steps != 3000 and ": 3000" not in found.source


def test_while_true_left_by_a_return_on_the_steps_counter_counts_steps(tmp_path: Path) -> None:
    """A trainer's `train()` that returns once its steps are done (before: a `while True` of no
    readable end - the length unknown where no setting's name said it)."""
    (found,) = run_program(tmp_path, """
        def train(train_num_steps):
            n = 0
            while True:
                for batch in loader:
                    step(per_pass)
                    n += 1
                    if n >= train_num_steps:
                        return n
                    return n
        train(3000)
    """, loader=LOADER, per_pass=per_pass)
    assert (found.steps, found.epochs) == (3000, 94)


@pytest.mark.parametrize(("test", "steps"), [
    ("it > 10 and total_training_time >= TIME_BUDGET", None),  # a budget of seconds
    ("args.max_steps >= 0 and it >= args.max_steps", 500),  # makemore: a guard, then the bound
    ("args.max_iters is not None and it >= args.max_iters", 400),  # minGPT's trainer
    ("it >= args.max_steps and master", 500),  # a flag is no bound
    ("it >= args.max_steps or loss_now < 0.01", 500),  # either ends it: at most N
])
def test_the_parts_of_a_break_are_weighed_as_they_combine(tmp_path: Path, test: str,
                                                          steps: int | None,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """`if it > 10 and total_training_time >= TIME_BUDGET: break` (a budget of seconds: the
    loop ends on time, not on steps) was read as 11 steps; now its length is unknown and the
    probe says what it trains until (while_bounds.py)."""
    import argparse

    from probecast.core.agent import length as agent_length

    # no settings by name but the program's: argparse Namespaces other tests in this process
    # parsed (length.watch_arguments keeps them) would say a length where the loop says none
    monkeypatch.setattr(agent_length, "_NAMESPACES", [])
    (found,) = run_program(tmp_path, f"""
        it, total_training_time, TIME_BUDGET, master, loss_now = 0, 0.0, 300, True, 1.0
        while True:
            step()
            it += 1
            if {test}:
                break
            break
    """, args=argparse.Namespace(max_steps=500, max_iters=400))
    assert found.steps == steps
    if steps is None:
        assert "TIME_BUDGET" in found.until
