"""A loop over a generator of the program's own: the pass is the generator's own loop.

``for xb, yb in iterate_minibatches(X, y, 32):`` iterates a generator that is suspended at
its ``yield`` inside ``for i in range(0, len(X) - bs + 1, bs)`` when the step runs; that loop's
count, read in the generator's own frame (its locals as they are), is the pass's length, where
each iteration yields once (loops.py counts it). The generator is not on any frame a program
can read, so it is found among the live objects by its function's code - once, at the step the
length is read, and only where the ``for`` calls a generator function of the program's own.
Stdlib only."""

from __future__ import annotations

import ast
import gc
import inspect
from collections.abc import Callable
from types import GeneratorType
from typing import Any


def function_of(call: ast.Call, value: Callable[[ast.expr], Any]) -> Any:
    """The function a call names, read without calling anything: ``iterate(X)``'s, or a
    method's as its class stores it (``train_data.batches(32)``, a static or class method
    too); ``value`` reads an expression in the caller's frame (values.Evaluator)."""
    if isinstance(call.func, ast.Attribute):
        owner = value(call.func.value)
        try:
            func = inspect.getattr_static(owner, call.func.attr)
        except AttributeError:
            return None
        return func.__func__ if isinstance(func, (staticmethod, classmethod)) else func
    return value(call.func)


def arguments(call: ast.Call, func: Any, value: Callable[[ast.expr], Any]) -> dict[str, Any]:
    """The plain values (numbers, text, None) the call passes, by parameter name: what tells
    the generator it made from another of the same function's still under way (a notebook's
    ``batches = get_batches(encoded, 8, 50); next(batches)`` before training's
    ``get_batches(data, 128, 100)``). Only a plain function's call; nothing is called."""
    if not isinstance(call.func, ast.Name) or any(isinstance(a, ast.Starred) for a in call.args):
        return {}
    try:
        args = [value(a) for a in call.args]
        kwargs = {k.arg: value(k.value) for k in call.keywords if k.arg}
        bound = inspect.signature(func).bind_partial(*args, **kwargs).arguments
    except Exception:  # noqa: BLE001 - an argument it will not read, a signature it cannot bind
        return {}
    return {k: v for k, v in bound.items()
            if v is None or isinstance(v, (bool, int, float, str))}


def suspended(func: Any, passed: dict[str, Any] | None = None,
              ) -> GeneratorType | None:  # type: ignore[type-arg]
    """The one live generator of ``func`` suspended at a ``yield`` (a for over it is under
    way) - of several, the one whose frame still holds the plain values ``passed``; None if
    there is none or which one the loop iterates is not known."""
    if not inspect.isgeneratorfunction(func):
        return None
    code = func.__code__
    found = [g for g in gc.get_objects() if type(g) is GeneratorType and g.gi_code is code
             and inspect.getgeneratorstate(g) == inspect.GEN_SUSPENDED]
    if len(found) > 1 and passed:
        found = [g for g in found if _holds(g.gi_frame.f_locals if g.gi_frame else {}, passed)]
    return found[0] if len(found) == 1 else None


def yields_once(loop: ast.For | ast.While) -> bool:
    """The loop's body yields exactly once an iteration: one ``yield`` statement in it, not in
    a nested loop or function (each iteration is then one item of the generator)."""
    count = 0

    def visit(node: ast.AST, nested: bool) -> None:
        nonlocal count
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                  ast.ClassDef)):
                continue
            if isinstance(child, (ast.Yield, ast.YieldFrom)):
                count += 2 if nested or isinstance(child, ast.YieldFrom) else 1
            visit(child, nested or isinstance(child, (ast.For, ast.While)))

    for stmt in loop.body:
        visit(ast.Module(body=[stmt], type_ignores=[]), False)
    return count == 1


def _holds(scope: dict[str, Any], passed: dict[str, Any]) -> bool:
    return all(type(scope.get(k)) is type(v) and scope.get(k) == v for k, v in passed.items())
