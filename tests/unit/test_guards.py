"""The conditions a step is taken under inside its loop (core/agent/guards.py): CleanRL's DQN
trains on some of its environment steps - read from the `if` tests between the loop and the step,
on real frames (test_length.run_program runs a program of its own file, as the hook reads one)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from test_length import run_program

pytestmark = pytest.mark.unit


def test_cleanrl_dqn_steps_past_learning_starts_every_train_frequency(tmp_path: Path) -> None:
    """CleanRL's dqn.py (blind: 500 000 steps read, +777 %): the loop is the environment's
    steps; the optimizer steps where global_step > learning_starts and global_step %
    train_frequency == 0 - 48 999 of them. The step's own guard is no periodic work (it was read
    as work every 10 steps); a print and a TensorBoard scalar every 100 iterations is none."""
    args = argparse.Namespace(total_timesteps=500_000, learning_starts=10_000, train_frequency=10)
    (found,) = run_program(tmp_path, """
        writer = None
        for global_step in range(args.total_timesteps):
            obs = global_step
            if global_step > args.learning_starts:
                if global_step % args.train_frequency == 0:
                    if global_step % 100 == 0:
                        print("SPS:", global_step)
                        writer.add_scalar("losses/td_loss", 0.0, global_step)
                    step()
                    break
            if global_step % 500 == 0:
                pass
    """, args=args)
    assert found.steps == 48_999 and found.epochs is None and found.every is None
    assert "stepping where global_step > args.learning_starts and global_step % " \
           "args.train_frequency == 0" in found.source


@pytest.mark.parametrize(("test", "steps"), [
    ("(i + 1) % 4 == 0", 25),  # gradient accumulation over a range: every 4th iteration
    ("i >= 20 and i % 5 == 0", 16),  # 20, 25, ..., 95
    ("i < 30", 30),
    ("30 <= i", 70),
])
def test_bounds_and_moduli_on_the_index_count_the_iterations_that_step(
        tmp_path: Path, test: str, steps: int) -> None:
    (found,) = run_program(tmp_path, f"""
        for i in range(100):
            if {test}:
                step()
                break
    """)
    assert found.steps == steps, found.source


@pytest.mark.parametrize("test", ["i % 4 != 0", "i > 10 or i % 2 == 0", "i * 2 > 10"])
def test_a_test_on_the_index_in_another_form_leaves_the_loop_count(tmp_path: Path,
                                                                  test: str) -> None:
    (found,) = run_program(tmp_path, f"""
        for i in range(100):
            if {test}:
                step()
                break
    """)
    assert found.steps == 100


def test_a_step_under_an_else_or_a_test_not_on_the_index_leaves_the_loop_count(
        tmp_path: Path) -> None:
    found = run_program(tmp_path, """
        flag = True
        for i in range(100):
            if i % 4 == 0:
                pass
            else:
                step()
                break
        for i in range(100):
            if flag:
                step()
                break
    """)
    assert [f.steps for f in found] == [100, 100]
