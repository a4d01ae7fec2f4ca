"""The loop a phase of training runs in (a program may train in phases, one loop after
another): where it is written, whether the program still runs it, and whether training is written
after it. Read from the running frames and the program's source, as loops.py reads the loops
around the step. Stdlib only.
"""

from __future__ import annotations

import ast
import functools
import linecache
import os
import sys
from dataclasses import dataclass
from types import FrameType
from typing import Any

from .loops import _tree, _where, user_frames
from .own_code import user_code
from .values import call_name as _call_name


@dataclass(frozen=True)
class LoopAnchor:
    """The loop a phase of training runs in: the outermost loop of the innermost user function
    that loops around the point (a step, or a dataset iterated), and the lines its callers call
    it from. Two phases of a program (pretrain, then fine-tune) differ in one or the other: the
    loop itself, or - one ``train()`` called twice - the line it is called from. Work called
    from inside the loop's body (a validation pass, a GAN's second optimizer) is inside it."""

    frame_id: int  # id() of the loop's running frame (no reference kept: it holds the program)
    code: Any  # the frame's code object
    first: int  # the loop's lines
    last: int
    callers: tuple[tuple[str, int], ...]  # (file, line) of each user caller, innermost first
    text: str  # "for epoch in range(3)  (train.py:40)"


def loop_anchor(frame: FrameType | None) -> LoopAnchor | None:
    """The loop running ``frame``'s line: the outermost loop of the outermost user function
    looping around it (a validation pass or a second optimizer called from the loop's body is
    inside it); with no loop, the innermost user line (a trainer's ``fit()`` call, wherever
    main() makes it). None without user code on the stack (a step run by a framework's own
    thread)."""
    found: tuple[FrameType, ast.For | ast.While | None] | None = None
    for user, loops in user_frames(frame, _user):
        if loops:
            found = (user, loops[-1])
        elif found is None or (found[1] is None and _called_back(found[0])):
            # the line nearest the framework: `trainer.train()` in main() - not a callback the
            # framework's loop calls (a LightningModule's `training_step`, stepping its own
            # optimizers: each of its `opt.step()` lines was a phase of its own)
            found = (user, None)
    if found is None:
        return None
    where, loop = found
    if loop is None:
        line = where.f_lineno
        text = f"{linecache.getline(where.f_code.co_filename, line).strip()[:120]} " \
               f"({os.path.basename(where.f_code.co_filename)}:{line})"
        return LoopAnchor(id(where), where.f_code, line, line, _callers(where.f_back), text)
    return LoopAnchor(id(where), where.f_code, loop.lineno, loop.end_lineno or loop.lineno,
                      _callers(where.f_back), _where(loop, where))


def _called_back(frame: FrameType) -> bool:
    """``frame`` runs the program's code called from a framework's (a callback)."""
    caller = frame.f_back
    return caller is not None and not _user(caller.f_code.co_filename)


@functools.lru_cache(maxsize=4096)
def _user(filename: str) -> bool:
    """user_code, once per file: ``inside`` asks at every step (realpath costs syscalls)."""
    return user_code(filename)


def _same_callers(frame: FrameType | None, callers: tuple[tuple[str, int], ...]) -> bool:
    """``frame``'s user callers are ``callers`` (stops at the first that differs)."""
    i = 0
    while frame is not None and i < 60:  # as _callers keeps them
        code = frame.f_code
        if _user(code.co_filename):
            if i >= len(callers) or callers[i] != (code.co_filename, frame.f_lineno):
                return False
            i += 1
        frame = frame.f_back
    return i == len(callers)


def _callers(frame: FrameType | None) -> tuple[tuple[str, int], ...]:
    out: list[tuple[str, int]] = []
    while frame is not None and len(out) < 60:
        if _user(frame.f_code.co_filename):
            out.append((frame.f_code.co_filename, frame.f_lineno))
        frame = frame.f_back
    return tuple(out)


def inside(anchor: LoopAnchor, frame: FrameType | None) -> bool:
    """``frame`` (the running point) is inside the anchor's loop, still running: the same
    frame, on a line of the loop, called from the same lines."""
    return _found(anchor, frame)[0]


def _found(anchor: LoopAnchor, frame: FrameType | None) -> tuple[bool, int]:
    """``inside``, and how many frames out from ``frame`` the anchor's was (0: not found)."""
    depth = 0
    while frame is not None and depth < 60:
        depth += 1
        if id(frame) == anchor.frame_id and frame.f_code is anchor.code:
            return _running(anchor, frame), depth
        frame = frame.f_back
    return False, 0


def _running(anchor: LoopAnchor, frame: FrameType) -> bool:
    return anchor.first <= frame.f_lineno <= anchor.last \
        and _same_callers(frame.f_back, anchor.callers)


_DEPTH: dict[int, int] = {}  # the anchor frame's id: how far out inside_caller found it last


def inside_caller(anchor: LoopAnchor) -> bool:
    """``inside(anchor, <the caller's frame>)``, asked at every step: the anchor's frame is
    looked for first where it was the last time (one C call), then walked to as ``inside``
    does - the same answer, in a few of its instructions (a step's hook runs cold)."""
    depth = _DEPTH.get(anchor.frame_id, 0)
    if depth:
        try:
            frame = sys._getframe(depth)
        except ValueError:  # a shallower stack
            frame = None
        if frame is not None and id(frame) == anchor.frame_id and frame.f_code is anchor.code:
            return _running(anchor, frame)
    found, depth = _found(anchor, sys._getframe(1))
    _DEPTH.clear()
    if depth:
        _DEPTH[anchor.frame_id] = depth  # counted from the caller's frame: 1 from here
    return found


# Calls that train, written after a loop the probe had to unwind: the program trains on there.
TRAIN_CALLS = ("step", "fit", "apply_gradients", "backward", "minimize", "train_on_batch")


def trains_after(anchor: LoopAnchor) -> str | None:
    """Training written after the anchor's loop - in its function, or after the lines that
    called it - that the probe's unwinding skipped: the first such line ("train.py:88"), or
    None. Read from the source (the program has left those frames by now)."""
    places = [(anchor.code.co_filename, anchor.last, anchor.code.co_name)]
    places += [(file, line, "") for file, line in anchor.callers]
    for filename, after, name in places:
        tree = _tree(filename)
        if tree is None:
            continue
        scope = _scope_at(tree, after, name)
        for node in _calls_in(scope):
            if node.lineno > after and _trains(_call_name(node)):
                return f"{os.path.basename(filename)}:{node.lineno}"
    return None


def _scope_at(tree: ast.Module, line: int, name: str) -> ast.AST:
    """The innermost function around ``line`` (named ``name`` when given), else the module."""
    scope: ast.AST = tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and (not name or node.name == name) \
                and node.lineno <= line <= (node.end_lineno or node.lineno) \
                and (isinstance(scope, ast.Module) or node.lineno > scope.lineno):  # type: ignore[attr-defined]
            scope = node
    return scope


def _calls_in(scope: ast.AST) -> list[ast.Call]:
    """The calls a scope runs itself (not those of functions or classes it defines)."""
    out: list[ast.Call] = []
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Call):
            out.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return sorted(out, key=lambda c: c.lineno)


def _trains(name: str) -> bool:
    low = name.lower()
    return low in TRAIN_CALLS or low.startswith("train")
