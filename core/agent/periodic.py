"""Periodic work in a training loop: ``if step % K == 0:`` whose body evaluates, samples, saves or
draws (nanoGPT's ``iter_num % eval_interval``, a test pass every 50 steps), read off the program's
source (loops.py reads the loops around the step)."""

from __future__ import annotations

import ast
import os
from types import FrameType

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
    if k is None or k <= 1:
        return None
    calls = [c for b in node.body for c in ast.walk(b) if isinstance(c, ast.Call)]
    words = [call_name(c).lower() for c in calls] + [w for c in calls for w in _data_names(c)]
    if not any(w in c for c in words for w in PERIODIC_WORDS):
        return None
    return k, f"if {ast.unparse(node.test)[:80]} ({os.path.basename(frame.f_code.co_filename)}:{node.lineno})"


def _modulo(test: ast.expr, ev: Evaluator) -> int | None:
    if isinstance(test, ast.BoolOp):
        for value in test.values:
            k = _modulo(value, ev)
            if k is not None:
                return k
        return None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand  # `if not step % K:`
    elif isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        test = test.left
    if isinstance(test, ast.BinOp) and isinstance(test.op, ast.Mod):
        return maybe_int(test.right, ev)
    return None


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
