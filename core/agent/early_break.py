"""An early stop the program writes itself: a ``break`` out of a loop around the training step
once a patience runs out - what Keras', Lightning's and the Hugging Face Trainer's EarlyStopping
do inside their trainers (adapters read those), written out in the loop:

- a counter against a patience: ``if bad_counter == args.patience: break`` (pyGAT, GCNII and
  the many graph scripts after them), ``if epochs_no_improve >= patience: break``;
- a helper object that keeps one: ``if early_stopping.early_stop: break`` (pytorchtools'
  EarlyStopping), ``if stopper.step(val_acc, model): break`` (DGL's examples), any object
  with an integer ``patience`` the test reads.

Such a loop runs no sooner out than its patience allows: the first pass sets the best, then
``patience`` passes without a better one (``>`` one more). So the loop's planned count is an
upper bound, and its soonest end is patience + 1 passes - what the probe goes on for when it is
within reach (going_on.py), as for the trainers' own. The patience is read in the running frame
(values.py: names, plain attributes; nothing of the program is called).

A ``break`` on a value the loop computes each pass is an early end too, with no patience to
wait for: a test of convergence - ``if x_star == x_old: break`` (tensorflow/docs' optimizer
guide: nine tests of up to 2 000 iterations, converged in 80 or 1 156 or never), ``if loss <
1e-3: break``, ``if converged: break``, a time budget ``if elapsed > budget: break``. Its loop
can end after any pass: the soonest is 1. A value the loop computes is a name its body binds
that holds no whole number now (a counter's ``if step >= max_steps`` is a count, read by
loops.py); a guard against a diverged value only (``if math.isnan(loss)``) is no early end a
run is expected to meet. Stdlib only.
"""

from __future__ import annotations

import ast
import numbers
import os
from collections.abc import Iterator
from types import FrameType
from typing import Any

from .values import Evaluator, Unknown

PATIENCE = "patience"  # a stop helper's attribute
# a limit's name holds one of these (args.patience, PATIENCE, es_patience, n_epochs_stop,
# early_stopping_rounds); a counter's, one of the others (epochs_no_improve, bad_counter, wait)
LIMIT_WORDS = ("patience", "stop")
COUNTER_WORDS = ("no_improve", "not_improv", "noimprov", "bad", "wait", "stale", "counter",
                 "since_best", "without_improv")
_MOST = 10 ** 9


def early_break(loop: ast.For | ast.While, frame: FrameType) -> tuple[int, str] | None:
    """The soonest pass after which ``loop`` can end by an early stop in its own body, and
    where that is written ("`bad_counter == args.patience` (train.py:120)"); None: none found,
    or its patience not readable."""
    for stmt in own_statements(loop.body):
        if not isinstance(stmt, ast.If) or not any(isinstance(s, (ast.Break, ast.Return))
                                                   for s in stmt.body):
            continue
        passes = _soonest(stmt.test, Evaluator(frame))
        if passes is None and computed(stmt.test, loop, frame):
            passes = 1
        if passes is not None:
            file = os.path.basename(frame.f_code.co_filename)
            return passes, f"`{ast.unparse(stmt.test)[:100]}` ({file}:{stmt.lineno})"
    return None


def computed(test: ast.expr, loop: ast.For | ast.While, frame: FrameType) -> bool:
    """``test`` reads a value ``loop`` computes each pass (a loss, a parameter, a flag set from
    them), not a count: a name the loop's body binds, holding anything but a whole number now
    (unbound yet: bound by anything but a count - ``_counts``); not a guard of divergence only,
    nor a test that can never hold (``_never``)."""
    if _divergence_guard(test):
        return False
    bound = _bound_in(loop)
    if _never(test, bound, frame):
        return False
    read = _read(test)
    for name in sorted(read & set(bound)):
        found, value = _now(name, frame)
        if found:
            if not (isinstance(value, numbers.Integral) and not isinstance(value, bool)):
                return True
        elif not all(_counts(node, frame) for node in bound[name]):
            return True
    return False


def _read(node: ast.expr) -> set[str]:
    """The names and attribute paths (``self.iter_num``) ``node`` reads."""
    return {d for n in ast.walk(node) if isinstance(n, (ast.Name, ast.Attribute))
            and isinstance(n.ctx, ast.Load) and (d := _dotted(n))}


def _dotted(node: ast.expr) -> str | None:
    """``name`` or ``name.attr.attr`` (None: an attribute of anything else)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _now(name: str, frame: FrameType) -> tuple[bool, Any]:
    """Whether ``name`` (a local, or a plain attribute path of one) has a value now, and it."""
    if "." not in name:
        return name in frame.f_locals, frame.f_locals.get(name)
    try:
        return True, Evaluator(frame).value(ast.parse(name, mode="eval").body)
    except Exception:  # noqa: BLE001 - Unknown, or the program's objects when read
        return False, None


def _never(test: ast.expr, bound: dict[str, list[ast.AST]], frame: FrameType) -> bool:
    """``test`` can never hold: an ``and`` with a part that reads nothing the loop computes and
    is false now, on plain values - CleanRL's PPO breaks ``if args.target_kl is not None and
    approx_kl > args.target_kl``, its ``target_kl`` None by default."""
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)):
        return False
    ev = Evaluator(frame)
    for part in test.values:
        if _read(part) & set(bound):
            continue
        try:
            if not ev.truth(part):
                return True
        except Unknown:
            continue
        except Exception:  # noqa: BLE001 - the program's objects may do anything when read
            continue
    return False


_GUARDS = ("isnan", "is_nan", "isinf", "is_inf", "isfinite", "is_finite")


def _divergence_guard(test: ast.expr) -> bool:
    """``if math.isnan(loss)``, ``if not torch.isfinite(loss).all()``: every call a NaN/inf test."""
    calls = [n for n in ast.walk(test) if isinstance(n, ast.Call)]
    names = [n.func.id if isinstance(n.func, ast.Name) else n.func.attr
             if isinstance(n.func, ast.Attribute) else "" for n in calls]
    return any(name in _GUARDS for name in names) and all(
        name in _GUARDS or name in ("all", "any", "item") for name in names)


def _bound_in(loop: ast.For | ast.While) -> dict[str, list[ast.AST]]:
    """The names ``loop``'s body binds (inner loops' too, not nested functions'), each with the
    statements that bind it."""
    out: dict[str, list[ast.AST]] = {}
    todo: list[ast.AST] = list(loop.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
            targets = [node.target]
        elif isinstance(node, ast.NamedExpr):
            targets = [node.target]
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            targets = [node.optional_vars]
        for target in targets:  # `self.iter_num += 1` binds self.iter_num, not self
            for part in ast.walk(target):
                if not isinstance(part, (ast.Name, ast.Attribute, ast.Subscript)) \
                        or not isinstance(part.ctx, ast.Store):
                    continue
                bound = _dotted(part.value if isinstance(part, ast.Subscript) else part)
                if bound:  # (`x[i] = v`: x changes)
                    out.setdefault(bound, []).append(node)
        todo.extend(ast.iter_child_nodes(node))
    return out


def _counts(node: ast.AST, frame: FrameType) -> bool:
    """``step += 1``, ``step = step + 1``, ``step = 0``, or a whole number made of the frame's
    values now (``global_step = epoch * len(loader) + i``): a counter's binding."""
    if isinstance(node, ast.AugAssign):
        return isinstance(node.op, ast.Add) and isinstance(node.value, ast.Constant) and type(
            node.value.value) is int
    if isinstance(node, ast.Assign):
        value = node.value
        if isinstance(value, ast.Constant):
            return type(value.value) is int
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) and any(
                isinstance(side, ast.Constant) and type(side.value) is int
                for side in (value.left, value.right)):
            return True
        try:
            made = Evaluator(frame).value(value)
        except Exception:  # noqa: BLE001 - Unknown, or the program's objects when read
            return False
        return isinstance(made, numbers.Integral) and not isinstance(made, bool)
    return False


def own_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """A loop body's statements, into its ifs, withs and trys, not into inner loops or defs
    (their breaks end those)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef,
                             ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for name in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(stmt, name, None)
            if isinstance(inner, list):
                yield from own_statements([s for s in inner if isinstance(s, ast.stmt)] + [
                    t for h in inner if isinstance(h, ast.ExceptHandler) for t in h.body])


def _soonest(test: ast.expr, ev: Evaluator) -> int | None:
    """Passes before ``test`` can first hold: from a comparison with a patience, or a helper
    object's patience; None when the test holds none."""
    for node in ast.walk(test):
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            found = _compared(node, ev)
        elif isinstance(node, (ast.Attribute, ast.Call)):
            found = _helper(node, ev)
        else:
            continue
        if found is not None:
            return found
    return None


def _compared(node: ast.Compare, ev: Evaluator) -> int | None:
    """``counter >= patience`` (or ``==``; ``>``: one more pass), either way round: the limit a
    name holding a patience word (``args.patience``, ``n_epochs_stop``), or a number the counter
    - a name of epochs without improvement (``epochs_no_improve``, ``bad_counter``) - meets."""
    left, op, right = node.left, node.ops[0], node.comparators[0]
    if _limit(right, left):
        side, strict = right, isinstance(op, ast.Gt)
        if not isinstance(op, (ast.Eq, ast.GtE, ast.Gt)):
            return None
    elif _limit(left, right):
        side, strict = left, isinstance(op, ast.Lt)
        if not isinstance(op, (ast.Eq, ast.LtE, ast.Lt)):
            return None
    else:
        return None
    patience = _int(side, ev)
    return None if patience is None else patience + 1 + int(strict)


def _helper(node: ast.Attribute | ast.Call, ev: Evaluator) -> int | None:
    """``early_stopping.early_stop`` or ``stopper.step(...)``: the object's own ``patience``."""
    target = node.func if isinstance(node, ast.Call) else node
    if not isinstance(target, ast.Attribute) or not isinstance(target.value, (ast.Name,
                                                                                ast.Attribute)):
        return None
    if not ("stop" in target.attr.lower() or "stop" in ast.unparse(target.value).lower()):
        return None
    try:
        obj = ev.value(target.value)
    except Unknown:
        return None
    except Exception:  # noqa: BLE001 - the program's objects may do anything when read
        return None
    try:
        patience = vars(obj).get(PATIENCE)
    except TypeError:  # no __dict__
        return None
    return patience + 1 if _count(patience) else None


def _limit(limit: ast.expr, counter: ast.expr) -> bool:
    """``limit`` is a patience against ``counter``: named as one, or a number a counter of
    passes without improvement is held to."""
    if isinstance(limit, ast.Constant):
        return any(word in _name(counter) for word in COUNTER_WORDS)
    name = _name(limit)
    return any(word in name for word in LIMIT_WORDS) and not any(
        word in name for word in COUNTER_WORDS)


def _name(node: ast.expr) -> str:
    return (node.id if isinstance(node, ast.Name) else node.attr
            if isinstance(node, ast.Attribute) else "").lower()


def _int(node: ast.expr, ev: Evaluator) -> int | None:
    try:
        value: Any = ev.value(node)
    except Unknown:
        return None
    except Exception:  # noqa: BLE001
        return None
    return int(value) if _count(value) else None


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < _MOST
