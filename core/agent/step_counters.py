"""A ``while`` around the steps' loop whose counter the steps advance counts steps, not passes.

Diffusion and GAN trainers, and many a script of one loop of steps, write::

    while step < train_num_steps:          # or: while True: ... if it >= max_iters: break
        for batch in loader:
            ...; opt.step()
            step += 1
            if step >= train_num_steps:
                break

The ``while`` runs ``train_num_steps`` steps - about that over the loader's length passes - not
``train_num_steps`` passes of the loader: read as passes, a 3 000-step job of 32 batches a pass
was planned at 96 000 steps (+1 057 %). Where the counter its test reads is advanced inside a
loop nested in it (the loader's, in the same function) and nowhere else in its body, its bound
counts that loop's iterations: the passes are the bound over the iterations of one pass, and
the steps the bound times the loops inside that one (``Loop.weight``: the passes, fractional;
``count``: the whole passes it takes, its last one cut short). A counter advanced once a pass
(``epoch += 1`` after the loader's loop) leaves the loop as it was.
"""

from __future__ import annotations

import ast
import math

from .loops import Loop
from .while_bounds import ending_tests, endless


def read_step_counters(loops: list[Loop]) -> None:
    """Rescale each ``while`` among ``loops`` (innermost first) whose bound counts the
    iterations of a loop inside it."""
    for k in range(1, len(loops)):
        lp = loops[k]
        if not isinstance(lp.node, ast.While) or not lp.count or lp.weight:
            continue
        names = _counter_names(lp.node)
        advanced = _advanced_in(lp.node, names, loops[:k], lp.code) if names else None
        if advanced is None:
            continue
        j, by = advanced
        inner = loops[j:k]
        if any(not x.count or x.code is not lp.code for x in inner):
            continue
        per_pass = math.prod(x.count or 1 for x in inner)  # iterations of loops[j] in a pass
        bound = math.ceil(lp.count / by)  # iterations of loops[j]
        lp.weight, lp.count = bound / per_pass, math.ceil(bound / per_pass)
        what = "steps" if j == 0 else f"iterations of {loops[j].text.rpartition(' (')[0]}"
        lp.text = f"{lp.text}: {bound} {what}"


def _counter_names(node: ast.While) -> set[str]:
    """The names the loop's test compares (``while True``: those of its first comparing
    ``if ...: break`` or ``return``)."""
    test: ast.expr | None = node.test
    if endless(node):
        test = next((t for t in ending_tests(node)
                     if any(isinstance(c, ast.Compare) for c in ast.walk(t))), None)
    if test is None:
        return set()
    return {ast.unparse(n) for c in ast.walk(test) if isinstance(c, ast.Compare)
            for n in (c.left, *c.comparators) if isinstance(n, (ast.Name, ast.Attribute))}


def _advanced_in(node: ast.While, names: set[str], inside: list[Loop], code: object,
                 ) -> tuple[int, int] | None:
    """(the index in ``inside`` of the innermost loop whose body advances a counter of
    ``names``, by how much each time): every ``n += k`` / ``n = n + k`` (``k`` a whole number
    written as one) in the ``while`` inside one of them; None where one is in the while's own
    body (once a pass), advances by what is not written as a number (a batch's size: samples),
    or there is none."""
    found: tuple[int, int] | None = None
    for stmt in ast.walk(ast.Module(body=node.body, type_ignores=[])):
        if not isinstance(stmt, (ast.AugAssign, ast.Assign)):
            continue
        by = _advances(stmt, names)
        if by is None:
            continue
        line = stmt.lineno
        hits = [i for i, x in enumerate(inside)
                if x.code is code and isinstance(x.node, (ast.For, ast.While))
                and x.node.lineno < line <= (x.node.end_lineno or 0)]
        if not hits or by <= 0 or (found is not None and found[1] != by):
            return None
        found = (hits[0] if found is None else min(found[0], hits[0]), by)
    return found


def _advances(stmt: ast.AugAssign | ast.Assign, names: set[str]) -> int | None:
    """By how much the statement advances a counter of ``names`` (0: by what is not written as
    a whole number); None where it advances none."""
    if isinstance(stmt, ast.AugAssign):
        if not isinstance(stmt.op, ast.Add) or ast.unparse(stmt.target) not in names:
            return None
        return _whole(stmt.value)
    value = stmt.value
    if len(stmt.targets) != 1 or not (isinstance(value, ast.BinOp)
                                      and isinstance(value.op, ast.Add)):
        return None
    target = ast.unparse(stmt.targets[0])
    if target not in names:
        return None
    if ast.unparse(value.left) == target:
        return _whole(value.right)
    return _whole(value.left) if ast.unparse(value.right) == target else None


def _whole(expr: ast.expr) -> int:
    return expr.value if isinstance(expr, ast.Constant) and type(expr.value) is int else 0
