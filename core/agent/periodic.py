"""Periodic work in a training loop: ``if step % K == 0:`` whose body evaluates, samples, saves or
draws (nanoGPT's ``iter_num % eval_interval``, a test pass every 50 steps), read off the program's
source (loops.py reads the loops around the step)."""

from __future__ import annotations

import ast
import functools
import inspect
import os
import textwrap
from collections.abc import Callable, Iterator
from types import CodeType, FrameType
from typing import Any

from .guards import EveryK, every_k_iterations
from .values import Evaluator, call_name, maybe_int

# The body of an `if step % K == 0:` is periodic work if it calls something named like this:
# evaluating, sampling, saving - or drawing (matplotlib's plot/draw/pause every K steps:
# MorvanZhou's GAN redraws its figure every 50 steps, ~70 ms against a 1.5 ms step)
PERIODIC_WORDS = ("eval", "valid", "test", "save", "checkpoint", "ckpt", "estimate_loss",
                  "sample", "generate", "val_", "dump", "export", "plot", "draw", "pause",
                  "imshow", "scatter", "add_image", "add_figure", "add_histogram")


def periodic_if(node: ast.If, ev: Evaluator, frame: FrameType) -> tuple[int, str] | None:
    """``if ... % K == 0:`` whose body evaluates or saves: (K, where it is written)."""
    k = _modulo(node.test, ev)
    if k is None or k <= 1 or not _works(node.body):
        return None
    return k, f"if {ast.unparse(node.test)[:80]} ({os.path.basename(frame.f_code.co_filename)}:{node.lineno})"


def _works(body: list[ast.stmt]) -> bool:
    """Whether statements evaluate, sample, save or draw (a call so named, or run on test data)."""
    calls = [c for b in body for c in ast.walk(b) if isinstance(c, ast.Call)]
    words = [call_name(c).lower() for c in calls] + [w for c in calls for w in _data_names(c)]
    return any(w in c for c in words for w in PERIODIC_WORDS)


def handler_works(handler: Any) -> bool:
    """Whether a handler the program hands its trainer to call every K iterations or epochs
    (Ignite's ``Events.EPOCH_COMPLETED(every=K)``) evaluates, samples, saves or draws: named so
    (``run_validation``, a ``ModelCheckpoint``), or its code names something so named - what it
    calls, what it runs on (``evaluator.run(val_loader)``; a lambda's too, whose source line
    is part of a call). A handler that only logs is not periodic work."""
    target = getattr(handler, "__func__", handler)  # a bound method: its function
    while isinstance(target, functools.partial):
        target = target.func
    names = [getattr(target, "__name__", ""), type(target).__name__]
    code = getattr(target, "__code__", None)
    todo = [code] if isinstance(code, CodeType) else []
    while todo:  # its code's names, and its nested functions' and comprehensions'
        code = todo.pop()
        names += [*code.co_names, *code.co_freevars]
        todo += [c for c in code.co_consts if isinstance(c, CodeType)]
    return any(w in name.lower() for name in names for w in PERIODIC_WORDS)


def _modulo(test: ast.expr, ev: Evaluator) -> int | None:
    if isinstance(test, ast.BoolOp):
        for value in test.values:
            k = _modulo(value, ev)
            if k is not None:
                return k
        return None
    if isinstance(test, ast.Call):
        return _divisible(test, ev)
    inner = _modulo_of(test)
    return maybe_int(inner.right, ev) if inner is not None else None


def _divisible(call: ast.Call, ev: Evaluator) -> int | None:
    """``divisible_by(self.step, self.save_and_sample_every)`` (lucidrains' trainers): a call
    of a function of the program's whose body is one ``return a % b == 0`` - K, the argument
    the call passes as ``b``. Its source is read, nothing of it called."""
    try:
        fn = ev.value(call.func)
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn))) \
            if inspect.isfunction(fn) else None
    except Exception:  # noqa: BLE001 - Unknown, no source, or the program's objects when read
        return None
    define = tree.body[0] if tree is not None and tree.body else None
    if not isinstance(define, ast.FunctionDef) or not define.body or \
            not isinstance(last := define.body[-1], ast.Return) or last.value is None:
        return None
    params = [a.arg for a in define.args.args]
    passed = dict(zip(params, call.args)) | {k.arg: k.value for k in call.keywords if k.arg}
    inner = _modulo_of(last.value)
    if inner is None or not isinstance(inner.right, ast.Name) or inner.right.id not in passed:
        return None
    return maybe_int(passed[inner.right.id], ev)


def _modulo_of(test: ast.expr) -> ast.BinOp | None:
    """The ``a % b`` of ``a % b == c`` or ``not a % b``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand  # `if not step % K:`
    elif isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        test = test.left
    return test if isinstance(test, ast.BinOp) and isinstance(test.op, ast.Mod) else None


def _data_names(call: ast.Call) -> list[str]:
    """The names a call's arguments read - the model run on ``test_x`` (MorvanZhou's CNN tests
    `if step % 50 == 0: cnn(test_x)`) - unless it only prints or logs them."""
    if call_name(call).lower() in _REPORTS:
        return []
    return [(n.id if isinstance(n, ast.Name) else n.attr).lower()
            for a in (*call.args, *(k.value for k in call.keywords)) for n in ast.walk(a)
            if isinstance(n, (ast.Name, ast.Attribute))]


_REPORTS = ("print", "log", "info", "debug", "warning", "write", "format", "append",
            "add_scalar", "set_postfix", "set_description", "item")


def periodic_outside(loop: ast.For | ast.While, frame: FrameType,
                     ) -> tuple[tuple[int, str] | None, EveryK | None]:
    """``if epoch % K == 0: evaluate()`` in a loop outside the step's (the epochs'): work
    between two passes, after the passes the second value says (guards.EveryK: the j-th, from
    0, where j % K == j0, from a start; the first or last too, where an ``or`` says so) - which
    the estimate counts, the probe timing a boundary or validation pass with it and one without.
    No work every K steps, whatever a setting's name says: (0, where). pytorch/examples' DDP
    tutorial saves ``if epoch % self.save_every == 0``; its ``--save_every`` read by name as
    steps made the estimate charge 160 of the probe's slow steps as periodic work."""
    ev = Evaluator(frame)
    for node in _periodic_ifs(loop, frame, shallow=True):
        hit = periodic_if(node, ev, frame)
        if hit is not None:
            work = every_k_iterations(loop, frame, node.test) \
                if isinstance(loop, ast.For) and not node.orelse else None  # an else: not only K
            return (0, f"{hit[1]}: every {hit[0]} passes of its loop"), work
    return _skipped(loop, frame)


def _skipped(loop: ast.For | ast.While, frame: FrameType,
             ) -> tuple[tuple[int, str] | None, EveryK | None]:
    """``if epoch_p_1 % K != 0 ...: continue`` in the epochs' loop, work after it: the passes
    that do not skip it work (timm's train.py: validation and a checkpoint every
    ``--val-interval`` epochs, and the last)."""
    for i, node in enumerate(loop.body):
        if not (isinstance(node, ast.If) and any(isinstance(s, ast.Continue) for s in node.body)
                and " % " in ast.unparse(node.test) and _works(loop.body[i + 1:])):
            continue
        work = every_k_iterations(loop, frame, node.test, skip=True) \
            if isinstance(loop, ast.For) else None
        if work is None:
            continue  # a test it cannot read on the index: nothing said
        where = f"if {ast.unparse(node.test)[:80]}: continue " \
                f"({os.path.basename(frame.f_code.co_filename)}:{node.lineno})"
        return (0, f"{where}: the passes it does not skip"), work
    return None, None


def once_a_pass(loop: ast.For | ast.While, frame: FrameType, k: int, count: int | None) -> bool:
    """``if i % K == 0`` on the loop's own index, K no less than a pass (DCGAN's ``i % 100``
    over 16 batches): it holds at each pass's start only - the pass's work, not every K steps."""
    if not isinstance(loop, ast.For) or not count or count > k:
        return False
    target, it = loop.target, loop.iter
    if isinstance(it, ast.Call) and call_name(it) == "enumerate" and isinstance(target, ast.Tuple):
        target = target.elts[0] if target.elts else target
    elif not (isinstance(it, ast.Call) and call_name(it) == "range"):
        return False
    if not isinstance(target, ast.Name):
        return False
    ev = Evaluator(frame)
    for node in ast.walk(ast.Module(body=loop.body, type_ignores=[])):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            left = node.left.left if isinstance(node.left, ast.BinOp) else node.left
            if isinstance(left, ast.Name) and left.id == target.id \
                    and maybe_int(node.right, ev) == k:
                return True
    return False


def periodic_in_loop(loop: ast.For | ast.While, frame: FrameType) -> tuple[int, str] | None:
    """``if step % K == 0:`` (or ``(step + 1) % K == 0``) in the loop's body whose body
    evaluates or saves: periodic work every K steps."""
    ev = Evaluator(frame)
    best: tuple[int, str] | None = None
    for node in _periodic_ifs(loop, frame):
        hit = periodic_if(node, ev, frame)
        if hit is not None and (best is None or hit[0] < best[0]):
            best = hit
    return best


def _periodic_ifs(loop: ast.For | ast.While, frame: FrameType, shallow: bool = False,
                  ) -> Iterator[ast.If]:
    """The ifs in the loop's body but the step's own guard (``shallow``: not inside its inner
    loops, whose ifs count their own iterations)."""
    line = frame.f_lineno
    for node in (outside_loops(loop.body) if shallow
                 else ast.walk(ast.Module(body=loop.body, type_ignores=[]))):
        if isinstance(node, ast.If) and not any(
                s.lineno <= line <= (s.end_lineno or s.lineno) for s in node.body):
            yield node


def outside_loops(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """The statements of a function's body and their parts, not inside a loop of its own (an
    ``if`` in another loop is that loop's periodic work, not a callback's) nor a nested scope."""
    skip = (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
            ast.ClassDef)
    todo: list[ast.AST] = [n for n in body if not isinstance(n, skip)]
    while todo:
        node = todo.pop()
        yield node
        todo.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, skip))


# A counter of steps, as a callback reads it off its trainer: `trainer.iter_num % 500`
_COUNTER_WORDS = ("iter", "step")


def periodic_in_callbacks(frames: list[FrameType], tree_of: Callable[[str], ast.Module | None],
                          ) -> tuple[int, str] | None:
    """Periodic work in a callback the loop calls each step (minGPT's ``add_callback``): an ``if
    <...iter/step...> % K == 0:`` that evaluates, samples or saves, in the program's files on
    the stack (``tree_of``: a file's parsed source); only a counter named like one
    (``iter_num``) - the step's own loop is ``periodic_in_loop``'s."""
    best: tuple[int, str] | None = None
    seen: set[str] = set()
    for frame in frames:
        filename = frame.f_code.co_filename
        tree = tree_of(filename) if filename not in seen else None
        seen.add(filename)
        if tree is None:
            continue
        ev = Evaluator(frame)
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in outside_loops(fn.body):
                if isinstance(node, ast.If) and _counts_steps(node.test):
                    hit = periodic_if(node, ev, frame)
                    if hit is not None and (best is None or hit[0] < best[0]):
                        best = hit
    return best


def _counts_steps(test: ast.expr) -> bool:
    names = [n.attr if isinstance(n, ast.Attribute) else n.id for n in ast.walk(test)
             if isinstance(n, (ast.Attribute, ast.Name))]
    return any(w in name.lower() for name in names for w in _COUNTER_WORDS)
