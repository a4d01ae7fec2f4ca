"""The loops around a line of the program, read from its source and its running frames: how
many times each runs (length.py uses them for the job's length).

A loop's bound is evaluated in the running frame by a small evaluator that only reads values
(names, plain attributes, arithmetic, ``len``/``range``/``min``/``max``, a tensor's
``size()``/``shape``): nothing the program would not have run is called. Stdlib only.
"""

from __future__ import annotations

import ast
import linecache
import os
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any

from .values import Evaluator as _Evaluator
from .values import Unknown
from .values import sized as _sized

# The body of an `if step % K == 0:` is periodic work if it calls something named like this.
PERIODIC_WORDS = ("eval", "valid", "test", "save", "checkpoint", "ckpt", "estimate_loss",
                  "sample", "generate", "val_", "dump", "export")
_TRANSPARENT = ("enumerate", "tqdm", "trange", "iter", "list", "tuple", "sorted", "reversed",
                "progress_bar", "track")
_LIBRARY_ROOTS = tuple({os.path.realpath(p) + os.sep for p in (
    sysconfig.get_paths().get("purelib", ""), sysconfig.get_paths().get("platlib", ""),
    sysconfig.get_paths().get("stdlib", "")) if p})


@dataclass
class Loop:
    """One loop around the step: how many times it runs, and where it is written."""

    count: int | None  # None: not readable
    text: str  # "for epoch in range(1, args.epochs + 1)  (train.py:120)"
    over_loader: bool = False  # iterates the training DataLoader: its passes are the epochs


def user_code(filename: str) -> bool:
    """The program's own code: not the standard library, not an installed package, not ours."""
    if not filename or filename.startswith("<"):
        return False
    path = os.path.realpath(filename)
    if any(path.startswith(root) for root in _LIBRARY_ROOTS):
        return False
    here = os.path.dirname(os.path.realpath(__file__))
    return not path.startswith(here + os.sep) and "probecast_agent" not in path


_TREES: dict[str, ast.Module | None] = {}


def _tree(filename: str) -> ast.Module | None:
    if filename not in _TREES:
        try:
            source = "".join(linecache.getlines(filename))
            _TREES[filename] = ast.parse(source) if source else None
        except (SyntaxError, ValueError):
            _TREES[filename] = None
    return _TREES[filename]


def loops_around(frame: FrameType | None, loader_loop: Callable[[Any], int | None] | None,
                  ) -> tuple[list[Loop], tuple[int, str] | None]:
    loops: list[Loop] = []
    every: tuple[int, str] | None = None
    depth = 0
    while frame is not None and depth < 60:
        depth += 1
        code = frame.f_code
        if user_code(code.co_filename):
            tree = _tree(code.co_filename)
            if tree is not None:
                # header: a dataset iterated by a `for` runs the loop it heads (keras_loops)
                for node in _loops_cached(tree, frame.f_lineno, code):
                    if not loops:  # the step's own loop: an `if step % K` there counts steps
                        every = _periodic(node, frame)
                    loops.append(_count(node, frame, loader_loop))
        frame = frame.f_back
    return loops, every


def _enclosing_loops(tree: ast.Module, line: int, code: Any,
                     header: bool = False) -> list[ast.For | ast.While]:
    """The loops containing ``line`` inside the scope that runs as ``code`` (innermost first);
    ``header``: a loop whose own ``for``/``while`` line it is counts too (the line that
    iterates a dataset runs the loop it heads)."""
    scope: ast.AST = tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == code.co_name \
                and node.lineno <= line <= (node.end_lineno or node.lineno):
            if not isinstance(scope, ast.Module) and scope.lineno > node.lineno:  # type: ignore[attr-defined]
                continue  # keep the innermost function of that name
            scope = node
    out: list[ast.For | ast.While] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                  ast.ClassDef)):
                continue  # another scope
            start, end = getattr(child, "lineno", None), getattr(child, "end_lineno", None)
            if start is None or end is None or not start <= line <= end:
                if start is None:
                    visit(child)
                continue
            if isinstance(child, (ast.For, ast.While)) and (
                    _in_body(child, line) or (header and _in_header(child, line))):
                out.append(child)
            visit(child)

    visit(scope)
    return out[::-1]


def _in_body(loop: ast.For | ast.While, line: int) -> bool:
    """The line runs once per iteration (in the loop's body, not its else)."""
    return any(s.lineno <= line <= (s.end_lineno or s.lineno) for s in loop.body)


def _in_header(loop: ast.For | ast.While, line: int) -> bool:
    return loop.lineno <= line < (loop.body[0].lineno if loop.body else loop.lineno + 1)


def _where(node: ast.AST, frame: FrameType) -> str:
    head = ""
    if isinstance(node, ast.For):
        head = f"for {ast.unparse(node.target)} in {ast.unparse(node.iter)}"
    elif isinstance(node, ast.While):
        head = f"while {ast.unparse(node.test)}"
    line = getattr(node, "lineno", 0)
    return f"{head[:120]} ({os.path.basename(frame.f_code.co_filename)}:{line})"


def _count(node: ast.For | ast.While, frame: FrameType,
           loader_loop: Callable[[Any], int | None] | None) -> Loop:
    where = _where(node, frame)
    try:
        if isinstance(node, ast.For):
            if loader_loop is not None:
                obj = _iterated_object(node.iter, frame)
                if obj is not None:
                    per_pass = loader_loop(obj)
                    if per_pass is not None:
                        return Loop(per_pass, where, over_loader=True)
            return Loop(_for_count(node.iter, frame), where)
        count, until = _while_count(node, frame)
        if until:
            where = where.replace("while True", f"while True ... if {until[:80]}: break", 1)
        return Loop(count, where)
    except Unknown:
        return Loop(None, where)
    except Exception:  # noqa: BLE001 - the program's objects may do anything when read
        return Loop(None, where)


def _iterated_object(expr: ast.expr, frame: FrameType) -> Any:
    """The object a ``for`` iterates, through enumerate()/tqdm() and the like (never called)."""
    while isinstance(expr, ast.Call) and _call_name(expr) in _TRANSPARENT and expr.args:
        expr = expr.args[0]
    if isinstance(expr, (ast.Name, ast.Attribute)):
        try:
            return _Evaluator(frame).value(expr)
        except Unknown:
            return None
    return None


def _for_count(expr: ast.expr, frame: FrameType) -> int:
    if isinstance(expr, ast.Call):
        name = _call_name(expr)
        if name in _TRANSPARENT and expr.args:
            return _for_count(expr.args[0], frame)
        if name == "zip" and expr.args:
            return min(_for_count(a, frame) for a in expr.args)
        if name == "range":
            return len(_Evaluator(frame).value(expr))
        if name == "islice" and len(expr.args) >= 2:  # islice(loader, stop) / (start, stop, step)
            ev = _Evaluator(frame)
            bounds = [ev.value(a) for a in expr.args[1:]]
            if not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds):
                raise Unknown("islice bounds")
            count = len(range(*bounds)) if len(bounds) > 1 else max(0, bounds[0])
            try:
                return min(count, _for_count(expr.args[0], frame))
            except Unknown:
                return count
    value = _Evaluator(frame).value(expr)
    return _sized(value)


def _while_count(node: ast.While, frame: FrameType) -> tuple[int, str]:
    """``while x < N`` / ``while x <= N``, or ``while True`` with ``if x >= N: break`` (then
    the break's condition, for the source)."""
    ev = _Evaluator(frame)
    test = node.test
    if not (isinstance(test, ast.Constant) and test.value is True):
        return _bound(test, ev, leave=False), ""
    for stmt in ast.walk(ast.Module(body=node.body, type_ignores=[])):
        if isinstance(stmt, ast.If) and any(isinstance(s, ast.Break) for s in stmt.body):
            try:
                return _bound(stmt.test, ev, leave=True), ast.unparse(stmt.test)
            except Unknown:
                continue
    raise Unknown("while True without a readable break")


def _bound(test: ast.expr, ev: _Evaluator, leave: bool) -> int:
    """Iterations of a loop that goes on while ``test`` holds (``leave``: until it holds),
    counting from 0 as such loops do."""
    if isinstance(test, ast.BoolOp):
        for value in test.values:  # `x >= N and master`: the comparison is the bound
            try:
                return _bound(value, ev, leave)
            except Unknown:
                continue
        raise Unknown("no bound")
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        raise Unknown("not a comparison")
    op, right = test.ops[0], test.comparators[0]
    # the counter is the side the evaluator reads as an int that changes; the bound the other
    left_n, right_n = _maybe_int(test.left, ev), _maybe_int(right, ev)
    if left_n is None or right_n is None:
        raise Unknown("no number")
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


def _maybe_int(expr: ast.expr, ev: _Evaluator) -> int | None:
    try:
        value = ev.value(expr)
    except Unknown:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    return int(value) if abs(value) < 1e15 else None


def _periodic(loop: ast.For | ast.While, frame: FrameType) -> tuple[int, str] | None:
    """``if step % K == 0:`` (or ``(step + 1) % K == 0``) in the loop's body whose body
    evaluates or saves: periodic work every K steps."""
    ev = _Evaluator(frame)
    best: tuple[int, str] | None = None
    for node in ast.walk(ast.Module(body=loop.body, type_ignores=[])):
        if not isinstance(node, ast.If):
            continue
        k = _modulo(node.test, ev)
        if k is None or k <= 1:
            continue
        calls = [_call_name(c).lower() for b in node.body for c in ast.walk(b)
                 if isinstance(c, ast.Call)]
        if not any(w in c for c in calls for w in PERIODIC_WORDS):
            continue
        text = f"if {ast.unparse(node.test)[:80]} ({os.path.basename(frame.f_code.co_filename)}:{node.lineno})"
        if best is None or k < best[0]:
            best = (k, text)
    return best


def _modulo(test: ast.expr, ev: _Evaluator) -> int | None:
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
        return _maybe_int(test.right, ev)
    return None


def _call_name(call: ast.Call) -> str:
    f = call.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return ""


# ---- the loop a phase of training runs in ---------------------------------------------------

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
    inside it); with no loop, the outermost user line (a trainer's ``fit()`` call). None
    without user code on the stack (a step run by a framework's own thread)."""
    found: tuple[FrameType, ast.For | ast.While | None] | None = None
    depth = 0
    while frame is not None and depth < 60:
        depth += 1
        code = frame.f_code
        if user_code(code.co_filename):
            tree = _tree(code.co_filename)
            loops = _loops_cached(tree, frame.f_lineno, code) if tree else []
            if loops:
                found = (frame, loops[-1])
            elif found is None or found[1] is None:
                found = (frame, None)
        frame = frame.f_back
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


_LOOPS: dict[tuple[Any, int], list[ast.For | ast.While]] = {}


def _loops_cached(tree: ast.Module, line: int, code: Any) -> list[ast.For | ast.While]:
    """The loops around a line (and the one it heads), once per line: an eager step asks at
    every step."""
    key = (code, line)
    if key not in _LOOPS:
        if len(_LOOPS) > 10_000:
            _LOOPS.clear()
        _LOOPS[key] = _enclosing_loops(tree, line, code, header=True)
    return _LOOPS[key]


def _callers(frame: FrameType | None) -> tuple[tuple[str, int], ...]:
    out: list[tuple[str, int]] = []
    while frame is not None and len(out) < 60:
        if user_code(frame.f_code.co_filename):
            out.append((frame.f_code.co_filename, frame.f_lineno))
        frame = frame.f_back
    return tuple(out)


def inside(anchor: LoopAnchor, frame: FrameType | None) -> bool:
    """``frame`` (the running point) is inside the anchor's loop, still running: the same
    frame, on a line of the loop, called from the same lines."""
    depth = 0
    while frame is not None and depth < 60:
        depth += 1
        if id(frame) == anchor.frame_id and frame.f_code is anchor.code:
            return anchor.first <= frame.f_lineno <= anchor.last \
                and _callers(frame.f_back) == anchor.callers
        frame = frame.f_back
    return False


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
