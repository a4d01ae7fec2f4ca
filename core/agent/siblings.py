"""Loops of steps beside the step's own, in each pass of a loop around it: Spinning Up's PPO
trains up to ``train_pi_iters`` policy steps, then ``train_v_iters`` value steps, every epoch -
each loop stepping an optimizer of its own (adapters/lead.py: both loops' steps are timed, the
lead moving to each in turn). An epoch's steps are all those loops' (length.py adds them); a
break in one (the policy loop's KL stop) shortens that one only.

A loop beside the step's is one written in the same body - the loop around the step's loop in
the same function, else the function's own body, when that function runs in a loop of its
caller's (``update()`` called each epoch) - that steps an optimizer: ``opt.step()`` on a torch
optimizer the frame can read, or ``apply_gradients`` (Keras), in its body or in a function of
the program it calls there (keras.io's PPO: ``train_value_function(...)``). An environment's
``env.step(action)`` is no optimizer's. Stdlib only: this runs inside the user's process.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

from .early_break import early_break, own_statements
from .values import Evaluator, Unknown, optimizer

Loops = ast.For | ast.While


def beside(step_loop: Loops, tree: ast.Module, frame: FrameType) -> list[Loops]:
    """The loops that step an optimizer written beside ``step_loop`` (the loop running the
    step in ``frame``), in program order; [] where it runs in no body that repeats it here."""
    block = _block(step_loop, tree, frame.f_code.co_name)
    if block is None:
        return []
    out: list[Loops] = []
    for stmt in own_statements(block):
        if stmt is step_loop or not isinstance(stmt, (ast.For, ast.While)) \
                or _contains(stmt, step_loop):
            continue
        if _body_steps(stmt.body, tree, frame):
            out.append(stmt)
    return out


def _block(step_loop: Loops, tree: ast.Module, function: str) -> list[ast.stmt] | None:
    """The statements that hold ``step_loop`` (into ifs, withs and trys): the innermost loop
    around it, else its function's body; None at module level with no loop around it (two
    loops one after the other there are phases, not one epoch)."""
    best: ast.AST | None = None
    for node in ast.walk(tree):
        if not isinstance(node, (ast.For, ast.While, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name != function:
            continue
        if any(s is step_loop for s in own_statements(node.body)) and (
                best is None or node.lineno > getattr(best, "lineno", 0)):
            best = node
    return best.body if best is not None else None  # type: ignore[attr-defined]


def _contains(outer: ast.AST, inner: ast.AST) -> bool:
    return any(n is inner for n in ast.walk(outer))


def _calls(body: list[ast.stmt]) -> Iterator[ast.Call]:
    """The calls in ``body``, not into the functions or classes it defines."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Call):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _body_steps(body: list[ast.stmt], tree: ast.Module, frame: FrameType, depth: int = 1) -> bool:
    """``body`` steps an optimizer: directly, or ``depth`` calls of the program's down."""
    ev = Evaluator(frame)
    for call in _calls(body):
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "apply_gradients":
            return True
        if isinstance(func, ast.Attribute) and func.attr == "step" and optimizer(_read(ev, func.value)):
            return True
        if depth > 0 and isinstance(func, ast.Name):  # a function of the program's, called here
            called = _function(tree, func.id)
            if called is not None and _body_steps(called.body, tree, frame, depth - 1):
                return True
    return False


def _read(ev: Evaluator, node: ast.expr) -> Any:
    try:
        return ev.value(node)
    except Unknown:
        return None
    except Exception:  # noqa: BLE001 - the program's objects may do anything when read
        return None


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The module-level function ``name`` of the program's file (decorated or not)."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node
    return None


def beside_loops(step_loop: Loops, tree: ast.Module | None, frame: FrameType,
                 count: Callable[[Loops, FrameType, None], Any]) -> list[Any]:
    """The loops beside ``step_loop`` as loops.py reads the step's own (``count``: loops._count,
    a Loop of its count and text), each with its early break (its soonest pass)."""
    if tree is None:
        return []
    out = []
    for node in beside(step_loop, tree, frame):
        loop = count(node, frame, None)
        if loop.count == 1:  # one step a pass: its optimizer never steps alone twice, never
            continue  # leads (lead.py) - a generator's step after its critic's loop
        loop.node, loop.stop = node, early_break(node, frame)
        out.append(loop)
    return out
