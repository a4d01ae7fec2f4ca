"""Leaving a loop of the program's own as a ``break`` would (loop_exit.py): the line a jump may
land on, read from real sources, and real frames of small programs left at their next line -
the program goes on after the loop (its post-training code, its next phase)."""

from __future__ import annotations

import ast
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from probecast.core.agent.loop_exit import arm, line_after, loop_exits

pytestmark = pytest.mark.unit


def after(source: str) -> int | None:
    """line_after for the loop marked `# here`."""
    source = textwrap.dedent(source)
    tree = ast.parse(source)
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "# here" in text)
    loop = next(n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While))
                and n.lineno == line)
    return line_after(tree, loop)


def test_the_line_after_a_loop_is_where_a_break_would_go_on() -> None:
    assert after("""
        for i in range(3):  # here
            x = i
        print(x)
    """) == 4
    # inside an if, or a plain try, the line after that block
    assert after("""
        if True:
            while True:  # here
                pass
        done = 1
    """) == 5
    assert after("""
        try:
            for i in range(3):  # here
                pass
        except ValueError:
            pass
        done = 1
    """) == 7
    # an inner loop with a line after it in the outer loop's body
    assert after("""
        for layer in range(2):
            for i in range(3):  # here
                pass
            print(layer)
    """) == 5


def test_no_line_where_a_jump_would_skip_cleanup_or_restart_a_loop() -> None:
    # a `with`'s __exit__ (torch.no_grad, autocast) and a `finally` must run
    assert after("""
        with open(__file__) as f:
            for i in range(3):  # here
                pass
        done = 1
    """) is None
    assert after("""
        try:
            for i in range(3):  # here
                pass
        finally:
            done = 1
    """) is None
    # the last statement of a function, and the last of an outer loop's body (its header
    # would start that loop again)
    assert after("""
        def train():
            for i in range(3):  # here
                pass
        train()
    """) is None
    assert after("""
        for epoch in range(2):
            for i in range(3):  # here
                pass
        done = 1
    """) is None


PROGRAM = """
import sys

def train_epoch(log, stop_at):
    for i in range(10):
        log.append(("step", i))
        stop_at(i)
        log.append(("after step", i))
    log.append("epoch's own end")

def main(log, stop_at):
    for epoch in range(5):
        train_epoch(log, stop_at)
        log.append(("epoch", epoch))
    log.append("post-training")

def layerwise(log, stop_at):
    for layer in range(3):
        for i in range(10):
            log.append((layer, i))
            stop_at(i)
        log.append(("layer done", layer))
    log.append("post-training")
"""


def program(tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "train.py"
    path.write_text(PROGRAM)
    scope: dict[str, Any] = {"__name__": "train"}
    exec(compile(PROGRAM, str(path), "exec"), scope)  # its frames are the user's own code
    return scope


def stopper(at: int, innermost: bool = False, said: list[str] | None = None) -> Any:
    """What the adapter does at the probe's stop: arm the exits of the loops around the step,
    once (a step after the stop would otherwise be unwound)."""
    state = {"armed": False}

    def stop_at(i: int) -> None:
        if i == at and not state["armed"]:
            exits = loop_exits(sys._getframe(1), innermost=innermost)
            assert exits is not None
            state["armed"] = arm(exits, lambda e: (said if said is not None else []).append(e.text),
                                 lambda: RuntimeError("refused"))
            assert state["armed"]

    return stop_at


def test_every_loop_around_the_step_is_left_and_the_program_goes_on(tmp_path: Path) -> None:
    log: list[Any] = []
    said: list[str] = []
    program(tmp_path)["main"](log, stopper(3, said=said))
    # the step's line ended, its loop's later lines did not run; the function's code after its
    # loop did, and the caller left its epoch loop at once: its post-training code ran
    assert log == [("step", 0), ("after step", 0), ("step", 1), ("after step", 1),
                   ("step", 2), ("after step", 2), ("step", 3), "epoch's own end",
                   "post-training"]
    assert len(said) == 2 and said[0].startswith("train.py:5-8 -> 9")
    assert said[1].startswith("train.py:12-14 -> 15")
    assert sys.gettrace() is None  # nothing left traced


def test_innermost_leaves_one_pass_and_the_outer_loop_goes_on(tmp_path: Path) -> None:
    """A layer-wise trainer: the pass over layer 0 is left; layers 1 and 2 still train."""
    log: list[Any] = []
    program(tmp_path)["layerwise"](log, stopper(2, innermost=True))
    assert log[:4] == [(0, 0), (0, 1), (0, 2), ("layer done", 0)]
    assert (1, 9) in log and (2, 9) in log and log[-1] == "post-training"
    assert sys.gettrace() is None


def test_a_pass_with_no_line_after_it_is_not_armed(tmp_path: Path) -> None:
    """Nothing follows the pass's loop inside the layer loop (a jump would land on that loop's
    header and start it again): no exit - the caller unwinds instead."""
    source = PROGRAM.replace('        log.append(("layer done", layer))\n', "")
    path = tmp_path / "bare.py"
    path.write_text(source)
    scope: dict[str, Any] = {}
    exec(compile(source, str(path), "exec"), scope)
    seen: list[Any] = []

    def stop_at(i: int) -> None:
        if i == 0 and not seen:
            seen.append(loop_exits(sys._getframe(1), innermost=True))
            seen.append(loop_exits(sys._getframe(1)))  # the whole loop: post-training follows

    scope["layerwise"]([], stop_at)
    assert seen[0] is None
    assert seen[1] is not None and len(seen[1]) == 1
    assert "post-training" in source.splitlines()[seen[1][0].target - 1]


def test_nothing_is_armed_under_another_tracer(tmp_path: Path) -> None:
    """A debugger or coverage owns the trace: nothing is armed, the loops run on (the probe
    unwinds them as before)."""
    log: list[Any] = []
    outcome: list[bool] = []
    previous = sys.gettrace()

    def stop_at(i: int) -> None:
        if i == 3 and not outcome:
            exits = loop_exits(sys._getframe(1))
            assert exits is not None
            outcome.append(arm(exits, lambda e: None, lambda: RuntimeError("refused")))

    sys.settrace(lambda *a: None)
    try:
        program(tmp_path)["main"](log, stop_at)
    finally:
        sys.settrace(previous)
    assert outcome == [False] and log[-1] == "post-training" and ("epoch", 4) in log
