"""The conditions a step is taken under, inside the loop around it. CleanRL's DQN loops over
every environment step and trains on some:

    for global_step in range(args.total_timesteps):
        ...
        if global_step > args.learning_starts:
            if global_step % args.train_frequency == 0:
                ...
                optimizer.step()

- 48 999 optimizer steps of its 500 000 iterations, not 500 000. The `if` tests between the loop
and the step's line that bound its own index (``i > S``, ``i >= S``, ``i < E``, ``i <= E``) or
thin it out (``i % K == 0``, ``(i + 1) % K == 0``), joined by ``and``, count the iterations that
step. A test on the index in any other form (an ``or``, ``!=``, a step under an ``else``) leaves
the loop's count as it was; tests that do not read the index hold on every iteration that steps.
Stdlib only."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from types import FrameType

from .values import Evaluator, Unknown, call_name, maybe_int

_BOUNDS = (ast.Gt, ast.GtE, ast.Lt, ast.LtE)
_MIRROR = {ast.Gt: ast.Lt, ast.GtE: ast.LtE, ast.Lt: ast.Gt, ast.LtE: ast.GtE}


def guarded_count(loop: ast.For, frame: FrameType, line: int) -> tuple[int, str] | None:
    """The iterations of ``for i in range(a, b)`` on which ``line`` runs, and the tests that
    say so; None where none of them reads ``i`` or one reads it in a form not counted here."""
    name, span = _range_loop(loop, frame)
    if name is None or span is None:
        return None
    tests = _tests_over(loop.body, line)
    if not tests:
        return None
    lo, hi = span
    modulus: tuple[int, int] | None = None
    used: list[str] = []
    ev = Evaluator(frame)
    for test in tests:
        if not any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(test)):
            continue
        read = _constraint(test, name, ev)
        if read is None or (read[0] == "mod" and modulus is not None):
            return None
        if read[0] == "mod":
            modulus = (read[1], read[2])
        elif read[0] == "lo":
            lo = max(lo, read[1])
        else:
            hi = min(hi, read[1])
        used.append(ast.unparse(test))
    if not used:
        return None
    return _count_in(lo, hi, modulus), " and ".join(used)


# Calls that iterate what they wrap as it is (a progress bar: `for epoch in tqdm(range(E))`)
_BARS = ("tqdm", "progress_bar", "track")


def _range_loop(loop: ast.For, frame: FrameType) -> tuple[str | None, tuple[int, int] | None]:
    """``for i in range(a, b)`` (step 1; under a progress bar, ``trange(a, b)``,
    ``np.arange(a, b)``): i's name and [a, b)."""
    it = loop.iter
    while isinstance(it, ast.Call) and call_name(it) in _BARS and it.args:
        it = it.args[0]
    if not (isinstance(it, ast.Call) and call_name(it) in ("range", "trange", "arange")
            and isinstance(loop.target, ast.Name)) or not 1 <= len(it.args) <= 3:
        return None, None
    try:
        bounds = [Evaluator(frame).value(a) for a in it.args]
    except Unknown:
        return None, None
    if not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds):
        return None, None
    if len(bounds) == 3 and bounds[2] != 1:
        return None, None
    a, b = (0, bounds[0]) if len(bounds) == 1 else (bounds[0], bounds[1])
    return loop.target.id, (a, b)


def _tests_over(body: list[ast.stmt], line: int) -> list[ast.expr] | None:
    """The ``if`` tests ``line`` sits under in a loop's own body (through ``with`` and
    ``try``, not into a nested loop or function), each ``and`` split; None under an ``else``."""
    tests: list[ast.expr] = []
    while True:
        stmt = next((s for s in body if s.lineno <= line <= (s.end_lineno or s.lineno)), None)
        if isinstance(stmt, ast.If):
            if _within(stmt.orelse, line):
                return None  # an else (an elif): its condition is a negation, not read
            if not _within(stmt.body, line):
                return tests  # the line is the test itself
            test = stmt.test
            tests += test.values if isinstance(test, ast.BoolOp) and isinstance(
                test.op, ast.And) else [test]
            body = stmt.body
        elif isinstance(stmt, (ast.With, ast.AsyncWith)) or (
                isinstance(stmt, ast.Try) and _within(stmt.body, line)):
            body = stmt.body
        else:
            return tests


def _within(body: list[ast.stmt], line: int) -> bool:
    return any(s.lineno <= line <= (s.end_lineno or s.lineno) for s in body)


def _constraint(test: ast.expr, name: str, ev: Evaluator) -> tuple[str, int, int] | None:
    """One test on the index: ("lo", n, 0) - i >= n; ("hi", n, 0) - i < n; ("mod", K, r) -
    i % K == r. None: another form."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if isinstance(left, ast.BinOp) and isinstance(left.op, ast.Mod) and isinstance(op, ast.Eq):
        shift = _shifted(left.left, name, ev)
        k, r = maybe_int(left.right, ev), maybe_int(right, ev)
        if shift is None or k is None or r is None or k < 1:
            return None
        return "mod", k, (r - shift) % k
    if isinstance(right, ast.Name) and right.id == name and not isinstance(left, ast.Name):
        left, right, op = right, left, _MIRROR.get(type(op), ast.Eq)()
    if not (isinstance(left, ast.Name) and left.id == name and isinstance(op, _BOUNDS)):
        return None
    n = maybe_int(right, ev)
    if n is None:
        return None
    if isinstance(op, (ast.Gt, ast.GtE)):
        return "lo", n + (1 if isinstance(op, ast.Gt) else 0), 0
    return "hi", n + (1 if isinstance(op, ast.LtE) else 0), 0


def _shifted(expr: ast.expr, name: str, ev: Evaluator) -> int | None:
    """``i`` (0), ``i + c`` (c) or ``i - c`` (-c); None for anything else."""
    if isinstance(expr, ast.Name) and expr.id == name:
        return 0
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)) \
            and isinstance(expr.left, ast.Name) and expr.left.id == name:
        c = maybe_int(expr.right, ev)
        if c is not None:
            return c if isinstance(expr.op, ast.Add) else -c
    return None


def _count_in(lo: int, hi: int, modulus: tuple[int, int] | None) -> int:
    """Integers in [lo, hi), those congruent to r mod K where a modulus is given."""
    if hi <= lo:
        return 0
    if modulus is None:
        return hi - lo
    k, r = modulus
    return (hi - 1 - r) // k - (lo - 1 - r) // k


@dataclass(frozen=True)
class EveryK:
    """The passes of a ``for i in range(a, b)`` an ``if`` on ``i`` holds on: the j-th (from 0)
    where j % k == at and j >= start, and the first or the last pass besides where ``first`` /
    ``last`` say so (``if epoch % 20 == 0 or epoch + 1 == args.epochs:``, a checkpoint every 20
    epochs and at the end: MAE's pretraining; DINO's linear evaluation every ``--val_freq``
    epochs and the last; ``if epoch >= args.min_epoch and epoch % K == 0``: from a start)."""

    k: int
    at: int
    first: bool = False
    last: bool = False
    start: int = 0


def every_k_iterations(loop: ast.For, frame: FrameType, test: ast.expr,
                       skip: bool = False) -> EveryK | None:
    """The iterations of ``for i in range(a, b)`` an ``if`` holds on that thins its index out
    (``i % K == r``, ``(i + 1) % K == 0``; from a start: ``and i >= S``, ``i > S``, ``i``; ``or``
    the first or the last: ``i == 0``, ``i == b - 1``, ``i + 1 == b``; other tests joined by
    ``and`` not on ``i``). ``skip``: the iterations it does *not* hold on, the test ``i % K !=
    r`` (``and i != last``: the last pass works too). ``i`` may be moved first (``epoch += 1``)
    or named anew (``epoch_p_1 = epoch + 1``: timm's train.py). None where the test reads it in
    any other form or not at all."""
    name, span = _range_loop(loop, frame)
    if name is None or span is None:
        return None
    ev = Evaluator(frame)
    names = _index_names(loop.body, name, test.lineno, ev)
    if names is None:
        return None
    op = ast.NotEq if skip else ast.Eq
    reading, start = _bounded(test, names, ev, span[0], not skip)
    # the passes it holds on: the one test on the index, its `or`s; skipped: the passes that
    # fail one of the tests `and` joins
    if skip:
        parts = reading
    elif len(reading) == 1:
        one = reading[0]
        parts = one.values if isinstance(one, ast.BoolOp) and isinstance(one.op, ast.Or) \
            else [one]
    else:
        return None
    mod: tuple[int, int] | None = None
    ends: set[int] = set()
    for part in parts:
        inner, from_ = _bounded(part, names, ev, span[0], not skip)
        read = _reads(inner[0], names) if len(inner) == 1 else None
        m = None if read is None else _modulus(inner[0], read, ev, op)
        if m is not None and read is not None:
            if mod is not None:
                return None
            mod, start = (m[0], (m[1] - span[0] - names[read]) % m[0]), max(start, from_)
            continue
        read = _reads(part, names)
        if read is None:
            return None  # `or` a test not on the index: it may hold on every pass
        at = _equal_at(part, read, ev, op)
        if at is None and skip and _compared(part, read, ast.NotEq):
            continue  # `epoch_p_1 != n` of an n not read: the pass it names not counted
        if at is None or at - names[read] - span[0] not in (0, span[1] - span[0] - 1):
            return None
        ends.add(at - names[read] - span[0])
    if mod is None or mod[0] < 2:
        return None
    return EveryK(mod[0], mod[1], first=0 in ends, last=span[1] - span[0] - 1 in ends,
                  start=start)


def _bounded(test: ast.expr, names: dict[str, int], ev: Evaluator, first: int,
             bounds: bool) -> tuple[list[ast.expr], int]:
    """The tests ``and`` joins that read the index, and - with ``bounds`` - the pass (from 0)
    the lower bounds among them hold from (``epoch >= args.min_epoch``, ``epoch > 6``, a bare
    ``epoch`` or ``epoch != 0``: not the 0th), taken out of the list."""
    tests = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    reading, start = [], 0
    for t in tests:
        read = _reads(t, names)
        if read is None:
            continue
        low = _lower(t, read, ev) if bounds else None
        if low is None and bounds:  # `epoch != 0`: not the first pass
            at = _equal_at(t, read, ev, ast.NotEq)
            low = at + 1 if at is not None and at - names[read] - first == 0 else None
        if low is None:
            reading.append(t)
        else:
            start = max(start, low - names[read] - first)
    return reading, start


def _lower(test: ast.expr, name: str, ev: Evaluator) -> int | None:
    """The least value of ``name`` a test holds on, where it is a lower bound on it."""
    if isinstance(test, ast.Name):
        return 1  # truthy: not 0
    read = _constraint(test, name, ev)
    return read[1] if read is not None and read[0] == "lo" else None


def _reads(test: ast.expr, names: dict[str, int]) -> str | None:
    """The first of ``names`` the test reads."""
    return next((n.id for n in ast.walk(test) if isinstance(n, ast.Name) and n.id in names), None)


def _equal_at(test: ast.expr, name: str, ev: Evaluator, op: type) -> int | None:
    """``name + c <op> v`` (either side): the value of ``name`` it names, v - c."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], op)):
        return None
    for a, b in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
        shift = _shifted(a, name, ev)
        if shift is not None and not _reads(b, {name: 0}):
            v = maybe_int(b, ev)
            return None if v is None else v - shift
    return None


def _modulus(test: ast.expr, name: str, ev: Evaluator, op: type) -> tuple[int, int] | None:
    """``(name + c) % K <op> r``: (K, r - c mod K)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], op)
            and isinstance(test.left, ast.BinOp) and isinstance(test.left.op, ast.Mod)):
        return None
    shift = _shifted(test.left.left, name, ev)
    k, r = maybe_int(test.left.right, ev), maybe_int(test.comparators[0], ev)
    if shift is None or k is None or r is None or k < 1:
        return None
    return k, (r - shift) % k


def _compared(test: ast.expr, name: str, op: type) -> bool:
    return isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], op) \
        and any(isinstance(s, ast.Name) and s.id == name for s in (test.left, *test.comparators))


def _index_names(body: list[ast.stmt], name: str, line: int,
                 ev: Evaluator) -> dict[str, int] | None:
    """The names the loop's body holds its index in before ``line``, each with what it adds:
    the index itself moved first (``epoch += 1``: pytorch/examples' minGPT-DDP trainer counts
    its epochs from 1 so), a name made from it (``epoch_p_1 = epoch + 1``). None where the body
    assigns the index otherwise."""
    names = {name: 0}
    for stmt in body:
        if stmt.lineno >= line:
            break
        for node in ast.walk(stmt):
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) \
                    and node.target.id == name:
                c = maybe_int(node.value, ev) if isinstance(node.op, (ast.Add, ast.Sub)) \
                    and stmt is node else None
                if c is None:
                    return None
                names[name] += c if isinstance(node.op, ast.Add) else -c
            elif isinstance(node, ast.Assign) and stmt is node and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Name) and node.targets[0].id != name \
                    and (c := _shifted(node.value, name, ev)) is not None:
                names[node.targets[0].id] = names[name] + c
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and any(
                    isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
                    for n in ast.walk(node)):
                return None
    return names
