"""A loop over the training data that leaves before the data runs out, at an index it counts:

    for batch_idx, (data, target) in enumerate(train_loader):
        if batch_idx * BATCHSIZE >= N_TRAIN_EXAMPLES:  # "limiting training data"
            break

(Optuna's PyTorch examples; scripts that train on a slice of a large set). Its epoch is the
passes before the first index at which the test holds - one more where the ``break`` comes
after the training step - not the loader's length: 30 of FashionMNIST's 469 batches there.

The test is read in the running frame with the index set to each candidate (values.py: names,
plain attributes, arithmetic; nothing of the program is called), the first index at which it
holds found by bisection (a count leaves at a bound: the test holds from there on). Stdlib only.
"""

from __future__ import annotations

import ast
import operator
import os
from collections.abc import Callable
from types import FrameType
from typing import Any

from .early_break import own_statements
from .values import Evaluator, Unknown, call_name

SCAN = 10_000  # indices tried one by one, where the test is no bound
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne}


class _With(Evaluator):
    """The frame's values, with some names set to values of our own."""

    def __init__(self, frame: FrameType, names: dict[str, Any]) -> None:
        super().__init__(frame)
        self.names = names

    def value(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Name) and node.id in self.names:
            return self.names[node.id]
        return super().value(node)


def index_break(loop: ast.For, frame: FrameType, count: int) -> tuple[int, str] | None:
    """The passes ``loop`` - ``for i, x in enumerate(...)``, ``count`` passes long - makes before
    an ``if`` on ``i`` in its own body breaks out, and where that is written; None where no such
    break comes within ``count`` or its test is not readable."""
    it, target = loop.iter, loop.target
    if not (isinstance(it, ast.Call) and call_name(it) == "enumerate" and it.args
            and isinstance(target, ast.Tuple) and target.elts
            and isinstance(target.elts[0], ast.Name)) or count < 1:
        return None
    index = target.elts[0].id
    try:
        start_node = it.args[1] if len(it.args) > 1 else next(
            (k.value for k in it.keywords if k.arg == "start"), None)
        start = Evaluator(frame).value(start_node) if start_node is not None else 0
    except Unknown:
        return None
    if not isinstance(start, int):
        return None
    for stmt in own_statements(loop.body):
        if not (isinstance(stmt, ast.If) and any(isinstance(s, ast.Break) for s in stmt.body)
                and any(isinstance(n, ast.Name) and n.id == index for n in ast.walk(stmt.test))):
            continue
        test = stmt.test
        first = _first_holding(lambda k: _holds(test, _With(frame, {index: start + k})), count)
        if first is None:
            continue
        after = stmt.lineno > frame.f_lineno  # the step ran before the test, that pass too
        where = f"`{ast.unparse(test)[:100]}` ({os.path.basename(frame.f_code.co_filename)}:" \
                f"{stmt.lineno})"
        return min(count, first + int(after)), where
    return None


def _first_holding(holds: Callable[[int], bool], count: int) -> int | None:
    """The first k in [0, count) at which ``holds`` is true: bisected where it is false, then
    true from there on (a bound: ``>=``), else looked for one by one in the first SCAN (an
    index met: ``== 40``); None where it never is (or is not readable)."""
    try:
        if not holds(count - 1):
            return next((k for k in range(min(count, SCAN)) if holds(k)), None)
        low, high = 0, count - 1  # holds(high); the first true one is in [low, high]
        while low < high:
            mid = (low + high) // 2
            if holds(mid):
                high = mid
            else:
                low = mid + 1
        return high if high == 0 or not holds(high - 1) else None
    except Unknown:
        return None
    except Exception:  # noqa: BLE001 - the program's objects may do anything when read
        return None


def _holds(test: ast.expr, ev: Evaluator) -> bool:
    if isinstance(test, ast.BoolOp):
        values = (_holds(v, ev) for v in test.values)
        return all(values) if isinstance(test.op, ast.And) else any(values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return not _holds(test.operand, ev)
    if isinstance(test, ast.Compare):
        left = ev.value(test.left)
        for op, right_node in zip(test.ops, test.comparators):
            compare, right = _COMPARE.get(type(op)), ev.value(right_node)
            if compare is None or not (_number(left) and _number(right)):
                raise Unknown("not a comparison of numbers")
            if not compare(left, right):
                return False
            left = right
        return True
    raise Unknown("not a comparison")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
