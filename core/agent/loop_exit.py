"""Ending a loop of the program's own that has no loader to run dry, the way ``break`` would:
the program goes on from the line after the loop - into its post-training code, or its next
phase of training - instead of being unwound by an exception (which skipped both: the estimate
then had no post-training work and no later phase, only a warning and a wider bound).

At the probe's stop, each user frame that loops around the step is given a trace function
(``frame.f_trace``, with ``sys.settrace`` on for this thread meanwhile: a trace for new calls
that traces none of them). At that frame's next line - the step's own line has ended, its
function's lines after the step do not run - the trace sets ``frame.f_lineno`` to the line
after the loop, which CPython allows out of a ``for`` or ``while`` loop, and removes itself.
Inner frames leave their loop first, return, and their callers leave theirs in turn.

A loop is left only where a line follows it in its own block, or after the ``if`` or ``try``
holding it: never out of a ``with`` (its ``__exit__`` would not run: a ``torch.no_grad()`` or an
autocast left on), a ``try`` with ``finally`` or an ``except`` clause, nor past the end of a
function (no line to go to), nor onto an outer loop's header (it would start that loop again).
Where any frame has no such line, or a tracer is already set (a debugger, coverage), nothing
is armed and the caller unwinds the loop as before. A jump CPython refuses raises the caller's
exception into the program at that line: the unwinding, one line later.
Stdlib only.
"""

from __future__ import annotations

import ast
import os
import sys
from dataclasses import dataclass
from types import FrameType
from typing import Any, Callable

from .loops import _tree, user_frames


@dataclass(frozen=True)
class LoopExit:
    """One frame's loop to leave, and the line the program goes on from."""

    frame: FrameType
    first: int  # the loop's lines
    last: int
    target: int  # the line after it
    text: str  # "train.py:40-52 -> 54"
    at_top: bool = False  # left when it would begin its next pass, not at the frame's next line


def loop_exits(frame: FrameType | None, innermost: bool = False) -> list[LoopExit] | None:
    """The loops to leave around ``frame``'s line, innermost frame first: in every user frame
    that loops there, its outermost loop (the training loop itself, and the loops that call
    it); with ``innermost``, only the innermost loop of the innermost such frame (one pass of
    the loops around it ends: the next may train something else). None where one of them has
    no line to go on from, or no user frame loops."""
    out: list[LoopExit] = []
    for user, loops in user_frames(frame):
        if not loops:
            continue
        loop = loops[0] if innermost else loops[-1]
        tree = _tree(user.f_code.co_filename)
        target = line_after(tree, loop) if tree is not None else None
        if target is None:
            return None
        last = loop.end_lineno or loop.lineno
        out.append(LoopExit(user, loop.lineno, last, target,
                            f"{os.path.basename(user.f_code.co_filename)}:{loop.lineno}-{last}"
                            f" -> {target}"))
        if innermost:
            break
    return out or None


def epochs_exit(frame: FrameType | None, loops: list[Any]) -> LoopExit | None:
    """The loop of epochs around the loop over the training data (the ``Loop`` marked
    ``over_loader`` among ``loops``, innermost first), left at the top of its next pass - only
    where it is the outermost loop around the step (a loop around the epochs may train more:
    its next pass goes on); None otherwise."""
    at = next((i for i, lp in enumerate(loops) if lp.over_loader), None)
    if at is None or len(loops) != at + 2 or loops[at + 1].node is None:
        return None
    return exit_at_top(frame, loops[at + 1].code, loops[at + 1].node)


def leave_epochs(session: Any, exit_: LoopExit, stop: Callable[[], BaseException]) -> None:
    """Arm ``exit_`` (a loop of epochs, left at the top of its next pass) for the probe
    ``session`` (a ProbeSession), the log saying so when it is left; ``stop``: the exception
    raised where CPython refuses the jump (the loop unwound instead)."""

    def left(exit_: LoopExit) -> None:
        session.loop_left()
        session.log("info", f"probe: phase {session.phase}'s epochs left at the top of their "
                    f"next pass, as a break would ({exit_.text}): the program goes on")

    arm([exit_], left, stop)


def leave_loops(session: Any, frame: FrameType | None, stop: Callable[[], BaseException],
                innermost: bool = False) -> bool:
    """Arm the loops around ``frame`` (``loop_exits``) to be left at their next line for the
    probe ``session``, the log saying so as each is left; ``stop`` as for ``leave_epochs``.
    False where nothing was armed (no loop to leave, or a tracer already set)."""
    exits = loop_exits(frame, innermost=innermost)
    if exits is None:
        return False

    def left(exit_: LoopExit) -> None:
        session.loop_left()  # training was over when the step's line ended
        session.log("info", f"probe: phase {session.phase}'s loop left at its next line, as a "
                    f"break would ({exit_.text}): the program goes on")

    return arm(exits, left, stop)


def exit_at_top(frame: FrameType | None, code: Any, loop: ast.stmt) -> LoopExit | None:
    """``loop`` (an ast node of ``code``) left when it would begin its next pass - as a
    ``break`` at the top of its body would - in the frame up the stack that runs it; None where
    no frame does, or no line follows it (line_after)."""
    for user, loops in user_frames(frame):
        if user.f_code is not code or not any(
                (n.lineno, n.col_offset) == (loop.lineno, loop.col_offset) for n in loops):
            continue
        tree = _tree(user.f_code.co_filename)
        target = line_after(tree, loop) if tree is not None else None
        if target is None or not isinstance(loop, (ast.For, ast.While)):
            return None
        last = loop.end_lineno or loop.lineno
        return LoopExit(user, loop.lineno, last, target,
                        f"{os.path.basename(user.f_code.co_filename)}:{loop.lineno}-{last}"
                        f" -> {target}", at_top=True)
    return None


def line_after(tree: ast.Module, loop: ast.stmt) -> int | None:
    """The line a ``break`` out of ``loop`` would run next, where a jump may land: the next
    statement in its block, else after the ``if`` or plain ``try`` around it (climbing); None
    inside a ``with``, ``try``/``finally``, ``except``, another loop or at a function's end."""
    parents = _parents(tree)
    node: ast.AST = loop
    if id(node) not in parents:  # the loop read from a twin tree (loops' cache keys on code,
        # equal across files with the same function): this tree's own node at its place
        twin = next((n for n in ast.walk(tree) if type(n) is type(loop)
                     and (n.lineno, n.col_offset) == (loop.lineno, loop.col_offset)), None)
        if twin is None:
            return None
        node = twin
    while True:
        parent = parents.get(id(node))
        if parent is None:
            return None
        for name, value in ast.iter_fields(parent):
            if isinstance(value, list) and any(item is node for item in value):
                block, field = value, name
                break
        else:
            return None
        at = next(i for i, item in enumerate(block) if item is node)
        if at + 1 < len(block):
            return getattr(block[at + 1], "lineno", None)
        if isinstance(parent, ast.If):
            node = parent
        elif isinstance(parent, ast.Try) and not parent.finalbody and field in ("body",
                                                                                "orelse"):
            node = parent
        else:
            return None


_PARENTS: dict[int, dict[int, ast.AST]] = {}


def _parents(tree: ast.Module) -> dict[int, ast.AST]:
    """Each statement's parent node, by id(), once per source tree (kept by loops._tree)."""
    key = id(tree)
    if key not in _PARENTS:
        _PARENTS[key] = {id(child): node for node in ast.walk(tree)
                         for child in ast.iter_child_nodes(node)}
    return _PARENTS[key]


def arm(exits: list[LoopExit], on_left: Callable[[LoopExit], None],
        refused: Callable[[], BaseException]) -> bool:
    """Leave each loop at its frame's next line (``at_top``: when it would begin its next
    pass, the rest of this one run). ``on_left(exit)`` is told as each frame
    leaves; ``refused()`` makes the exception raised where CPython refuses a jump. False (nothing
    armed) where a tracer is already set in this thread."""
    if sys.gettrace() is not None or not exits:
        return False
    waiting = {id(e.frame): e for e in exits}

    def done_with(frame: FrameType) -> None:
        waiting.pop(id(frame), None)
        frame.f_trace = None
        if not waiting:
            sys.settrace(None)

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        exit_ = waiting.get(id(frame))
        if exit_ is None or exit_.frame is not frame:
            return None
        if event == "line" and exit_.at_top and frame.f_lineno != exit_.first:
            if not exit_.first <= frame.f_lineno <= exit_.last:
                done_with(frame)  # it ended by itself: nothing to leave
                return None
            return local  # the rest of this pass runs
        if event == "line":
            try:
                setattr(frame, "f_lineno", exit_.target)  # typeshed: read-only; a trace may set it
            except ValueError:
                done_with(frame)
                raise refused() from None
            done_with(frame)
            on_left(exit_)
            return None
        if event == "return":  # left by an exception: nothing to jump out of any more
            done_with(frame)
            return None
        return local

    for e in exits:
        e.frame.f_trace = local
        e.frame.f_trace_lines = True
    sys.settrace(_no_calls)
    return True


def _no_calls(frame: FrameType, event: str, arg: Any) -> None:
    """While a loop waits to be left: calls in between are not traced."""
    return None
