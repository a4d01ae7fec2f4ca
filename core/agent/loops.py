"""The loops around a line of the program, read from its source and its running frames: how
many times each runs (length.py uses them for the job's length).

A loop's bound is evaluated in the running frame by a small evaluator that only reads values
(names, plain attributes, arithmetic, ``len``/``range``/``min``/``max``, a tensor's
``size()``/``shape``): nothing the program would not have run is called. Stdlib only.
"""

from __future__ import annotations

import ast
import linecache
import math
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from .early_break import early_break
from .generators import arguments, function_of, suspended, yields_once
from .guards import EveryK, guarded_count
from .index_break import index_break
from .own_code import user_code
from .siblings import beside_loops
from .split_loops import training_splits
from .periodic import once_a_pass, periodic_in_callbacks, \
    periodic_in_loop as _periodic, periodic_outside
from .while_bounds import while_count as _while_count
from .values import (Evaluator as _Evaluator, Unknown, call_name as _call_name, file_weight,
                     folds as _folds, maybe_int as _maybe_int, optimizer, sized as _sized)

_TRANSPARENT = ("enumerate", "tqdm", "iter", "list", "tuple", "sorted", "reversed",
                "progress_bar", "track")

@dataclass
class Loop:
    """One loop around the step: how many times it runs, and where it is written."""
    count: int | None  # None: not readable
    text: str  # "for epoch in range(1, args.epochs + 1)  (train.py:120)"
    over_loader: bool = False  # iterates the training DataLoader: its passes are the epochs
    turns: bool = False  # steps each of several optimizers in turn: one step (values.optimizer)
    code: Any = None  # the code whose frame runs it, and the first name its `for` binds:
    target: str = ""  # which iteration it is in (torch_phases: the loop a new part began in)
    node: Any = None  # its ast node (length.until: how a loop of no count ends)
    stop: tuple[int, str] | None = None  # an early stop in its body: its soonest pass, where
    leaves: str = ""  # where it breaks out at an index it counts, before its data runs out
    iterations: int | None = None  # its iterations, where it steps on fewer (guards.py)
    work_every: EveryK | None = None  # work after some of its iterations (guards.EveryK) ...
    work_source: str = ""  # ... where it is written
    weight: float | None = None  # its passes by its files' sizes (values.file_weight), not count
    beside: list[Loop] = field(default_factory=list)  # the step's: loops of steps beside it


_TREES: dict[str, ast.Module | None] = {}


def _tree(filename: str) -> ast.Module | None:
    if filename not in _TREES:
        try:
            source = "".join(linecache.getlines(filename))
            _TREES[filename] = ast.parse(source) if source else None
        except (SyntaxError, ValueError):
            _TREES[filename] = None
    return _TREES[filename]


def user_frames(frame: FrameType | None, is_user: Callable[[str], bool] | None = None,
                ) -> Iterator[tuple[FrameType, list[ast.For | ast.While]]]:
    """Each frame of the program's own code up the stack (60 at most), innermost first, with
    the loops around its line in its scope (innermost first; a loop's own header line counts:
    a dataset iterated by a `for` runs the loop it heads)."""
    is_user = is_user or user_code
    depth = 0
    while frame is not None and depth < 60:
        depth += 1
        code = frame.f_code
        if is_user(code.co_filename):
            tree = _tree(code.co_filename)
            yield frame, (_loops_cached(tree, frame.f_lineno, code) if tree is not None else [])
        frame = frame.f_back


def loops_around(frame: FrameType | None, loader_loop: Callable[[Any], int | None] | None,
                 is_user: Callable[[str], bool] | None = None,
                 ) -> tuple[list[Loop], tuple[int, str] | None]:
    loops: list[Loop] = []
    every: tuple[int, str] | None = None
    files: list[FrameType] = []
    for user, around in user_frames(frame, is_user):
        files.append(user)
        for node in around:
            loop = _count(node, user, loader_loop)
            if not loops and isinstance(node, ast.For) and any(optimizer(user.f_locals.get(n.id))
                                                               for n in ast.walk(node.target) if isinstance(n, ast.Name)):
                loop = Loop(1, f"{loop.text} (each optimizer in turn: one step)", turns=True)
            loop.code, loop.node, loop.target = user.f_code, node, next((n.id for n in ast.walk(
                node.target) if isinstance(n, ast.Name)), "") if isinstance(node, ast.For) else ""
            loop.stop = early_break(node, user)
            if not loops:  # the step's own loop: an `if step % K` there counts steps
                loop.beside = beside_loops(node, _tree(user.f_code.co_filename), user, _count)
                every = _periodic(node, user)
                if every is not None and once_a_pass(node, user, every[0], loop.count):
                    every = None
                if every is not None and loop.iterations and loop.count:  # K iterations: in
                    every = (max(1, round(every[0] * loop.count / loop.iterations)), every[1])
            else:  # work between passes; beside work every K steps too (timm's train.py)
                _splits(loop, loops[0], user)  # for phase in ["train", "val"]
                _weigh(loop, node, user)  # a loop over data files, a loader each
                outside, loop.work_every = periodic_outside(node, user)
                loop.work_source = outside[1] if outside and loop.work_every else ""
                every = outside if every is None else every
            loops.append(loop)
    if every is None and loops:
        every = periodic_in_callbacks(files, _tree)
    return loops, every


def _splits(loop: Loop, step_loop: Loop, frame: FrameType) -> None:
    """A loop over the data's splits with an ``if`` on its name around the step (split_loops.py:
    ``for phase in ["train", "val"]``): its items that train, not all of them."""
    if loop.code is step_loop.code and (split := training_splits(loop.node, frame)) is not None:
        loop.count = split[0]
        loop.text += f", stepping in {', '.join(map(repr, split[1]))} only"


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
            loop, batches = None, None
            if loader_loop is not None:
                obj = _iterated_object(node.iter, frame)
                per_pass = loader_loop(obj) if obj is not None else None
                if per_pass is not None:  # steps a pass (fewer than batches: accumulation)
                    loop, batches = Loop(per_pass, where, over_loader=True), _length_of(obj)
                elif obj is None:  # a generator of the program's own over the loader, or
                    loop = _loader_generator(node.iter, frame, loader_loop, where) \
                        or _zipped_loaders(node.iter, frame, loader_loop, where)  # zip(a, b)
            loop = loop or Loop(_for_count(node.iter, frame), where)
            if not loop.over_loader and loop.count:
                guarded = guarded_count(node, frame, frame.f_lineno)
                if guarded is not None and 0 < guarded[0] < loop.count:
                    loop.iterations, loop.count = loop.count, guarded[0]
                    loop.text = f"{where}, stepping where {guarded[1][:80]}"
            count = loop.count or 0
            left = index_break(node, frame, batches or count)
            if left is not None and count and batches:
                left = (left[0] * count // batches, left[1])
            if left is not None and 0 < left[0] < count:
                loop.count, loop.leaves = left[0], left[1]
                loop.text = f"{where}, left at {left[1]}"
            return loop
        count, until = _while_count(node, frame)
        if until:
            where = where.replace("while True", f"while True ... if {until[:80]}: break", 1)
        return Loop(count, where)
    except Unknown:
        return Loop(None, where)
    except Exception:  # noqa: BLE001 - the program's objects may do anything when read
        return Loop(None, where)


def _weigh(loop: Loop, node: ast.For | ast.While, frame: FrameType) -> None:
    """A loop around the step's own that iterates data files (a name it binds holds the one
    being trained on): its passes weigh as their sizes (values.file_weight). Not the step's
    own loop: a step a file (an image each) is one step whatever the file's size."""
    if not isinstance(node, ast.For) or loop.over_loader or not 1 < (loop.count or 0) <= MAX_FILES:
        return
    items = _iterated_object(node.iter, frame)
    for name in (n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)):
        if (weight := file_weight(items, frame.f_locals.get(name))) is not None:
            loop.weight = weight
            loop.text += f", its files {weight:.2f} times the one trained on"
            return


MAX_FILES = 10_000  # more items than a loop's files of data: not read (a stat each)


def _length_of(obj: Any) -> int | None:
    try:
        return _sized(obj)
    except Exception:  # noqa: BLE001 - not sized (an object holding the loader)
        return None


def _unwrapped(expr: ast.expr) -> ast.expr:
    """What ``enumerate(...)``, ``tqdm(...)`` and the like iterate: their first argument."""
    while isinstance(expr, ast.Call) and _call_name(expr) in _TRANSPARENT and expr.args:
        expr = expr.args[0]
    return expr


def _iterated_object(expr: ast.expr, frame: FrameType) -> Any:
    """The object a ``for`` iterates, through enumerate()/tqdm() and the like (never called)."""
    expr = _unwrapped(expr)
    if isinstance(expr, (ast.Name, ast.Attribute, ast.Subscript)):  # dataloaders[phase] too
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
        if (n := _folds(expr, _Evaluator(frame))) is not None:  # kfold.split(data)
            return n
        if name == "zip" and expr.args:
            return min(_for_count(a, frame) for a in expr.args)
        if name in ("range", "trange", "arange"):  # trange(a, b), np.arange(a, b): range(a, b)
            ev = _Evaluator(frame)
            return len(range(*(ev.value(a) for a in expr.args))) if name != "range" \
                else len(ev.value(expr))
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
        return _generator_count(expr, frame)
    if isinstance(expr, (ast.List, ast.Tuple, ast.Set)) and not any(  # for lr in [1e-3, 1e-2]
            isinstance(e, ast.Starred) for e in expr.elts):
        return len(expr.elts)
    value = _Evaluator(frame).value(expr)
    return _sized(value)


def _generator_count(call: ast.Call, frame: FrameType) -> int:
    """The items of a generator of the program's own the ``for`` iterates (generators.py): the
    loops around its ``yield``, read in its own frame, the innermost yielding once a turn."""
    return _generator_loop(call, frame, None)[0]


def _generator_loop(call: ast.Call, frame: FrameType,
                    loader_loop: Callable[[Any], int | None] | None) -> tuple[int, bool]:
    """``_generator_count``, and whether the generator's one loop iterates the training loader
    (``loader_loop`` says: its steps a pass) - then a ``for`` over the generator makes a pass."""
    value = _Evaluator(frame).value
    func = function_of(call, value)
    gen = suspended(func, arguments(call, func, value))
    own = gen.gi_frame if gen is not None else None
    tree = _tree(own.f_code.co_filename) if own and user_code(own.f_code.co_filename) else None
    loops = _enclosing_loops(tree, own.f_lineno, own.f_code) if tree and own else []
    if not loops or not yields_once(loops[0]):
        raise Unknown("a call")
    counted = [_count(loop, own, loader_loop) for loop in loops]  # type: ignore[arg-type]
    if (total := math.prod(loop.count or 0 for loop in counted)) <= 0:
        raise Unknown("a generator's loop")
    return total, len(counted) == 1 and counted[0].over_loader


def _loader_generator(expr: ast.expr, frame: FrameType,
                      loader_loop: Callable[[Any], int | None], where: str) -> Loop | None:
    """A ``for`` over a generator of the program's own that yields the training loader's
    batches one by one (torchvision's and timm's ``metric_logger.log_every(data_loader, ...)``):
    the loader's pass, its steps counted as the loader's own loop would count them."""
    expr = _unwrapped(expr)
    if not isinstance(expr, ast.Call):
        return None
    try:
        count, over = _generator_loop(expr, frame, loader_loop)
    except Exception:  # noqa: BLE001 - no generator of its own, or not one it can read
        return None
    return Loop(count, where, over_loader=over)


def _zipped_loaders(expr: ast.expr, frame: FrameType,
                    loader_loop: Callable[[Any], int | None], where: str) -> Loop | None:
    """``zip(source_loader, target_loader)`` with the training loader among them (domain
    adaptation, semi-supervised learning, CycleGAN): a pass ends with the shortest, each
    other loader's batches counted at the training loader's batches a step; one under
    ``cycle()`` never ends. None where any other's length is not known."""
    expr = _unwrapped(expr)
    if not (isinstance(expr, ast.Call) and _call_name(expr) == "zip" and expr.args):
        return None
    objects = [_iterated_object(a, frame) for a in expr.args]
    train = next((o for o in objects if o is not None and loader_loop(o) is not None), None)
    steps = loader_loop(train) if train is not None else None
    if not steps:
        return None
    per_step = (_batches(train) or steps) / steps
    counts = [steps]
    for arg, obj in zip(expr.args, objects):
        if obj is train or isinstance(arg, ast.Call) and _call_name(arg) == "cycle":
            continue
        batches = _batches(obj) if obj is not None else None
        if batches is None:
            try:
                batches = _for_count(arg, frame)
            except Exception:  # noqa: BLE001 - one whose length is not known: nor the pass's
                return None
        counts.append(int(batches / per_step))
    return Loop(max(1, min(counts)), where, over_loader=True)


def _batches(obj: Any) -> int | None:
    """A loader's batches a pass: a DataLoader's len() (its sampler's; nothing iterated)."""
    if type(obj).__name__ == "DataLoader" and type(obj).__module__.startswith("torch.utils.data"):
        try:
            return len(obj)
        except TypeError:  # an IterableDataset's, of no length
            return None
    return _length_of(obj)


_LOOPS: dict[tuple[Any, int], list[ast.For | ast.While]] = {}


def _loops_cached(tree: ast.Module, line: int, code: Any) -> list[ast.For | ast.While]:
    """The loops around a line (and the one it heads), once per line (asked at every step)."""
    key = (code, line)
    if key not in _LOOPS:
        if len(_LOOPS) > 10_000:
            _LOOPS.clear()
        _LOOPS[key] = _enclosing_loops(tree, line, code, header=True)
    return _LOOPS[key]
