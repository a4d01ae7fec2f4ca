"""How many times a ``while`` loop around the step runs, read from its test or its break's.

``while x < N`` goes on N times from 0; ``while True`` with ``if x >= N: break`` (or ``return``)
until its test holds. A test of several parts weighs them as they combine: ``x >= N and
master`` leaves at N (a plain flag is no bound); but where leaving needs every part of an
``and`` (going on, every part of an ``or``) and one of them compares what is no count - a
budget of seconds, ``if step > 10 and total_training_time >= TIME_BUDGET: break`` - the end is
not known from the loop (it was read as 11 steps).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from types import FrameType

from .values import Evaluator, Unknown, maybe_int


ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


class NoNumber(Unknown):
    """A comparison whose sides are not both whole numbers now: no count's bound."""


def while_count(node: ast.While, frame: FrameType) -> tuple[int, str]:
    """``while x < N`` / ``<= N``, or ``while True`` with ``if x >= N: break`` (and its test)."""
    ev = Evaluator(frame)
    if not endless(node):
        return bound(node.test, ev, leave=False), ""
    for test in ending_tests(node):
        try:
            return bound(test, ev, leave=True), ast.unparse(test)
        except Unknown:
            continue
    raise Unknown("while True without a readable break")


def endless(node: ast.While) -> bool:
    """``while True``: only a ``break`` or ``return`` in its body ends it."""
    return isinstance(node.test, ast.Constant) and node.test.value is True


def ending_tests(node: ast.While) -> Iterator[ast.expr]:
    """The tests of the ``if ...: break`` / ``return`` in the loop's body, outermost first."""
    for stmt in ast.walk(ast.Module(body=node.body, type_ignores=[])):
        if isinstance(stmt, ast.If) and any(isinstance(s, (ast.Break, ast.Return))
                                            for s in stmt.body):
            yield stmt.test


def bound(test: ast.expr, ev: Evaluator, leave: bool) -> int:
    """Iterations of a loop that goes on while ``test`` holds (``leave``: until it holds),
    counting from 0 as such loops do."""
    if isinstance(test, ast.BoolOp):
        every = isinstance(test.op, ast.And) == leave  # each part must hold for the loop to end
        found: list[int] = []
        for value in test.values:
            try:
                found.append(bound(value, ev, leave))
            except NoNumber:
                if every:  # it ends on what is no count: not known from here
                    raise
            except Unknown:  # `master`, a guard `args.max_steps >= 0`: no bound of its own
                continue
        if not found:
            raise Unknown("no bound")
        return max(found) if every else found[0]
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        raise Unknown("not a comparison")
    op, right = test.ops[0], test.comparators[0]
    # the counter is the side the evaluator reads as an int that changes; the bound the other
    left_n, right_n = maybe_int(test.left, ev), maybe_int(right, ev)
    if left_n is None or right_n is None:  # (`x is not None`: a guard, no bound of its own)
        raise (NoNumber if isinstance(op, ORDER) else Unknown)("no number")
    counter_left = isinstance(op, (ast.Gt, ast.GtE, ast.Eq) if leave
                              else (ast.Lt, ast.LtE, ast.NotEq))
    if isinstance(ev.value(test.left if counter_left else right), float):
        raise NoNumber("a float: seconds or a loss, no count of steps")  # (a bound may be 1e4)
    if leave:  # leave when x > N (N+1 iterations from 0) or x >= N (N)
        table = {ast.Gt: (right_n, 1), ast.GtE: (right_n, 0), ast.Lt: (left_n, 1),
                 ast.LtE: (left_n, 0), ast.Eq: (right_n, 0)}
    else:  # go on while x < N (N iterations) or x <= N (N+1)
        table = {ast.Lt: (right_n, 0), ast.LtE: (right_n, 1), ast.Gt: (left_n, 0),
                 ast.GtE: (left_n, 1), ast.NotEq: (right_n, 0)}
    for kind, (n, extra) in table.items():
        if isinstance(op, kind):
            if n <= 0:
                raise Unknown("not a bound")
            return n + extra
    raise Unknown("not a bound")
