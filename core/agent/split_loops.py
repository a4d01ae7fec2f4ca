"""A loop over the data's splits around the step: PyTorch's transfer-learning tutorial, and
the many scripts that copy it, write each epoch as

    for phase in ["train", "val"]:
        ...
        for inputs, labels in dataloaders[phase]:
            ...
            if phase == "train":
                loss.backward(); optimizer.step()

(or ``for phase, loader in [("train", train_loader), ("val", val_loader)]``). Only the items
the ``if`` around the step lets through train; the others are validation between epochs (the
probe times them as the epoch boundary). Such a loop counts those items, not all of them: once
an epoch, not twice. Stdlib only."""

from __future__ import annotations

import ast
from types import FrameType, SimpleNamespace
from typing import Any

from .values import Evaluator, Unknown

MAX_SPLITS = 16  # more items than a handful of splits: not a loop over them


def training_splits(outer: ast.For | ast.While, frame: FrameType,
                    ) -> tuple[int, list[Any]] | None:
    """Where an ``if`` on a name ``outer`` binds guards the line ``frame`` runs: how many of
    the loop's items pass it, and their keys; None where it is no such loop (no such guard,
    its items not readable or too many, all or none of them passing)."""
    if not isinstance(outer, ast.For):
        return None
    names = _bound(outer)
    guards = [(test, want) for test, want in _guards(outer, frame.f_lineno)
              if any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(test))]
    if not guards:
        return None
    ev = Evaluator(frame)
    try:
        items = [_literal(ev, e) for e in outer.iter.elts] if isinstance(
            outer.iter, (ast.List, ast.Tuple)) else ev.value(outer.iter)
    except Unknown:
        return None
    if not isinstance(items, (list, tuple)) or not 0 < len(items) <= MAX_SPLITS:
        return None
    training = []
    for item in items:
        bound = _unpack(names, item)
        if bound and _passes(guards, frame, bound):
            training.append(next((v for v in bound.values() if isinstance(v, (str, int))), item))
    return (len(training), training) if 0 < len(training) < len(items) else None


def _guards(loop: ast.For, line: int) -> list[tuple[ast.expr, bool]]:
    """The ``if`` tests between the loop and ``line``, each with the truth the line needs."""
    found: list[tuple[ast.expr, bool]] = []
    body: list[ast.stmt] = loop.body
    while True:
        stmt = next((s for s in body if s.lineno <= line <= (s.end_lineno or s.lineno)), None)
        if stmt is None or isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return found
        if isinstance(stmt, ast.If):
            inside = any(s.lineno <= line <= (s.end_lineno or s.lineno) for s in stmt.body)
            found.append((stmt.test, inside))
            body = stmt.body if inside else stmt.orelse
        elif isinstance(stmt, (ast.For, ast.While, ast.With, ast.Try)):
            body = stmt.body + getattr(stmt, "orelse", []) + [
                s for h in getattr(stmt, "handlers", []) for s in h.body] + getattr(
                stmt, "finalbody", [])
        else:
            return found


def _passes(guards: list[tuple[ast.expr, bool]], frame: FrameType, bound: dict[str, Any]) -> bool:
    """Every guard as the line needs it, the loop's names bound to one item (a test it cannot
    read lets the item through)."""
    shim = SimpleNamespace(f_locals={**frame.f_locals, **bound}, f_globals=frame.f_globals)
    ev = Evaluator(shim)  # type: ignore[arg-type]
    for test, want in guards:
        try:
            if ev.truth(test) != want:
                return False
        except Unknown:
            continue
    return True


def _literal(ev: Evaluator, node: ast.expr) -> Any:
    """An item of the loop's own list: a value, or a tuple of them (``("train", loader)``)."""
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(ev.value(e) for e in node.elts)
    return ev.value(node)


def _bound(loop: ast.For | ast.While) -> list[str]:
    """The names a ``for`` binds, in order (a name, or a flat tuple of names)."""
    if not isinstance(loop, ast.For):
        return []
    target = loop.target
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
        return [e.id for e in target.elts]  # type: ignore[attr-defined]
    return []


def _unpack(names: list[str], item: Any) -> dict[str, Any]:
    if len(names) == 1:
        return {names[0]: item}
    if isinstance(item, (tuple, list)) and len(item) == len(names):
        return dict(zip(names, item))
    return {}
