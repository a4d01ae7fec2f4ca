"""The job's length as the program writes it: read at the first training step, from the program
itself, so a user configures nothing.

Two readings, the structural one first:

1. **The loops around the step.** The training step (an optimizer step, a backward pass, a
   ``fit()`` call) is taken on some line of the user's code; the ``for`` and ``while`` loops
   around that line - in its function and in every user function up the call stack - say how
   often it runs: ``for epoch in range(1, args.epochs + 1)``, ``for i in range(opt.steps)``,
   ``while True: ... if iter_num > max_iters: break``, ``while step < cfg.max_steps``. Each
   loop's bound is read in the running frame without calling the program's code. A loop over the
   training DataLoader counts its passes (the DataLoader hook knows its steps); a loop whose
   bound cannot be read leaves the total unknown from there out. Inside the step's loop, an
   ``if step % K == 0:`` whose body evaluates or saves is the job's periodic work, every K steps.
2. **Settings by name**, where the loops do not say: the program's parsed arguments (every
   ``argparse`` Namespace it made) and its module-level settings (a config-style script's
   globals): ``max_iters``, ``max_steps``, ``epochs``, ``num_epochs``, ``eval_interval`` ...

The loops are read by loops.py. Only the stdlib: this runs inside the user's process, on the probe host. Anything that goes
wrong here leaves the length unknown; it never reaches the program.
"""

from __future__ import annotations

import ast
import functools
import math
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from .early_break import own_statements
from .loops import Loop, loops_around
from .own_code import trainer_library
from .step_counters import read_step_counters

# Settings by name (lowercase, as written); the first found wins, in this order.
STEP_NAMES = ("max_iters", "max_steps", "total_steps", "num_steps", "train_steps",
              "training_steps", "num_train_steps", "max_iter", "num_iterations", "n_steps",
              "iterations", "max_train_steps", "num_training_steps", "train_num_steps",
              "train_iters", "max_iterations", "total_iters", "total_iterations", "num_iters",
              "n_iters", "max_updates", "total_training_steps", "steps")
EPOCH_NAMES = ("epochs", "num_epochs", "n_epochs", "max_epochs", "num_train_epochs",
               "train_epochs", "nb_epoch", "nb_epochs", "total_epochs", "epoch_num")
EVERY_NAMES = ("eval_interval", "eval_every", "eval_steps", "val_interval", "val_every",
               "eval_freq", "validate_every", "evaluation_interval", "eval_iters_interval",
               "save_every", "save_interval", "checkpoint_every", "checkpoint_interval",
               "ckpt_interval", "save_steps", "save_freq")
@dataclass
class Length:
    """What was read: totals and where each came from ("" where nothing was)."""

    epochs: int | None = None
    steps: int | None = None
    steps_per_epoch: int | None = None
    every: int | None = None
    source: str = ""
    every_source: str = ""
    loops: list[Loop] = field(default_factory=list)
    until: str = ""  # no total: the condition an endless loop around the step stops at
    early: str = ""  # what may end training before its epochs (a trainer's EarlyStopping) ...
    earliest_epochs: int | None = None  # ... and the soonest it can (its patience)
    earliest_steps: int | None = None  # ... in steps (a job of one loop of steps; evaluations
    # every K steps)
    earliest_pass: int | None = None  # a break that ends each epoch's pass sooner: its soonest
    every_epochs: int | None = None  # work between epochs after every K-th (periodic.py) ...
    every_epochs_at: int = 0  # ... after the epochs j (from 0) where j % K == this
    every_epochs_source: str = ""  # ... where it was read
    every_epochs_first: bool = False  # ... and after the first epoch (`or epoch == 0`)
    every_epochs_last: bool = False  # ... and after the last (`or epoch + 1 == args.epochs`)
    every_epochs_from: int = 0  # ... from the j-th epoch on (`epoch >= args.min_epoch and ...`)

    def fields(self) -> dict[str, Any]:
        """The `plan` event's fields (only those known)."""
        out: dict[str, Any] = {}
        for name in ("epochs", "steps", "every"):
            value = getattr(self, name)
            if value is not None and value > 0:
                out[name] = int(value)
        if self.source and ("epochs" in out or "steps" in out):
            out["source"] = self.source[:300]
        if self.every_source and "every" in out:
            out["every_source"] = self.every_source[:300]
        if self.every_epochs and self.every_epochs > 1:
            out["every_epochs"], out["every_epochs_at"] = self.every_epochs, self.every_epochs_at
            out["every_epochs_source"] = self.every_epochs_source[:300]
            for end in ("first", "last"):
                if getattr(self, f"every_epochs_{end}"):
                    out[f"every_epochs_{end}"] = True
            if self.every_epochs_from > 0:
                out["every_epochs_from"] = self.every_epochs_from
        if self.earliest_epochs and "epochs" in out:
            out["earliest_epochs"] = int(self.earliest_epochs)
        elif self.earliest_steps and ("steps" in out or "epochs" in out):
            out["earliest_steps"] = int(self.earliest_steps)
            if self.earliest_pass and "epochs" in out:
                out["earliest_pass_steps"] = int(self.earliest_pass)
        if self.until and "epochs" not in out and "steps" not in out:
            out["until"] = self.until[:300]
        return out


# ---- reading the program --------------------------------------------------------------------

_NAMESPACES: list[Any] = []  # every argparse Namespace the program parsed (a handful)


def watch_arguments() -> None:
    """Remember the Namespaces the program's argparse returns (its settings, by name)."""
    import argparse

    parser_class = argparse.ArgumentParser
    if getattr(parser_class.parse_known_args, "_probecast", False):
        return
    original = parser_class.parse_known_args

    def parse_known_args(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)
        try:
            if len(_NAMESPACES) < 20:
                _NAMESPACES.append(result[0])
        except Exception:  # noqa: BLE001
            pass
        return result

    parse_known_args._probecast = True  # type: ignore[attr-defined]
    parser_class.parse_known_args = parse_known_args  # type: ignore[method-assign]


def read_length(frame: FrameType | None, loader_loop: Callable[[Any], int | None] | None = None,
                ) -> Length:
    """The job's length from the loops around ``frame``'s line (and its callers'), then from
    settings by name. ``loader_loop(obj)``: the steps per pass when ``obj`` is the training
    loader (None otherwise). PROBECAST_LENGTH=0 (internal: benchmarks/overhead.py measures what
    the reading costs) reads nothing."""
    found = Length()
    if os.environ.get("PROBECAST_LENGTH", "") == "0":
        return found
    try:
        loops, every = loops_around(frame, loader_loop)
        read_step_counters(loops)  # (a `while step < N` around the loader's loop: N steps)
        found.loops = loops
        if every is not None:
            found.every, found.every_source = every
        _totals_from_loops(found)
    except Exception:  # noqa: BLE001 - an unreadable program leaves the length unknown
        pass
    try:
        _by_name(found)
        if found.steps is None and found.epochs is None:
            found = _in_the_library(frame, loader_loop) or found
        if found.steps is None and found.epochs is None:
            found.until = until(found.loops)
        _early_stop(found)
    except Exception:  # noqa: BLE001
        pass
    return found


def _in_the_library(frame: FrameType | None, loader_loop: Callable[[Any], int | None] | None,
                    ) -> Length | None:
    """Where neither the program's loops nor its settings say: the loops of the library that
    runs its training (loops.trainer_library: skorch's ``for _ in range(epochs)``), if they
    give a total."""
    library = trainer_library(frame)
    if library is None:
        return None
    found = Length()
    found.loops, every = loops_around(frame, loader_loop, library)
    if every is not None:
        found.every, found.every_source = every
    _totals_from_loops(found)
    return found if found.steps is not None or found.epochs is not None else None


def _early_stop(found: Length) -> None:
    """An early stop the program writes in the loop around the epochs (or, for a job that is
    one loop of steps, in that loop: a full-batch graph network's ``for epoch in
    range(args.epochs)``, one step each): the planned length is an upper bound, and the soonest
    end is its patience's (early_break.py). Not where the patience outlasts the length."""
    loops = found.loops
    if not loops:
        return
    at = _epoch_loop(loops)
    beside = _beside(loops, at)
    for i in (at + 1, at):
        stop = loops[i].stop if i < len(loops) else None
        if i == at and stop is None:  # a break in a loop beside the step's (PPO's value loop)
            stop = next((lp.stop for lp in beside if lp.stop is not None), None)
        if stop is None or (i == at and loops[at].over_loader):
            continue  # a break in a pass over the data ends the epoch early, not training
        passes, where = stop
        # (a loop around the epochs' runs them again: each run's soonest stop, as many times)
        again = math.prod(lp.count or 0 for lp in loops[at + 2:]) if i > at else 1
        if i > at and found.epochs and again and passes * again < found.epochs:
            found.earliest_epochs = passes * again
        elif i == at and found.steps:  # a loop of steps, each pass of the loops around it
            # (tensorflow/docs' optimizer guide: a test of 2 000 iterations a learning rate;
            # Spinning Up's PPO: up to 80 policy steps an epoch, fewer once the KL is too far)
            inner = math.prod(lp.count or 0 for lp in loops[:at])
            per = inner * math.prod(lp.count or 0 for lp in loops[at + 1:])
            if beside:  # each loop of the pass at its soonest (a break), else at its count
                passes = sum(lp.stop[0] if lp.stop else lp.count or 0 for lp in [loops[0], *beside])
            if per and passes * per < found.steps:
                found.earliest_steps = passes * per
                found.earliest_pass = passes * inner if found.epochs else None
        if found.earliest_pass:
            found.early = f"the program's break at {where}, in each epoch's loop,"
        elif found.earliest_epochs or found.earliest_steps:
            found.early = f"the program's early stop at {where}"
        return


def _beside(loops: list[Loop], at: int) -> list[Loop]:
    """The loops of steps beside the step's own in each epoch (siblings.py: PPO's value loop
    beside its policy loop), where the step's loop is the epoch and a loop runs around it."""
    own = loops[0]
    return own.beside if at == 0 and len(loops) > 1 and not own.over_loader else []


def _epoch_loop(loops: list[Loop]) -> int:
    """The index of the loop that makes an epoch: over the training loader, else the innermost
    that is not several optimizers stepped in turn."""
    return next((i for i, lp in enumerate(loops) if lp.over_loader),
                next((i for i, lp in enumerate(loops) if not lp.turns), 0))


ENDLESS = ("count", "cycle", "repeat")  # itertools' iterators of no end: for i in count(1)


def until(loops: list[Loop]) -> str:
    """How a loop with no end but its ``break`` stops - an RL loop ``for i_episode in count(1):``
    ... ``if running_reward > env.spec.reward_threshold: break`` - the innermost such loop's
    conditions ("running_reward > env.spec.reward_threshold (actor_critic.py:175)"), else "".
    A condition, not a count: the job's length is in no text to read."""
    for lp in loops:
        node = lp.node
        endless = (isinstance(node, ast.While) and isinstance(node.test, ast.Constant)
                   and bool(node.test.value)) or (isinstance(node, ast.For) and isinstance(
                       node.iter, ast.Call) and _name(node.iter.func) in ENDLESS)
        if lp.count is not None or not endless:
            continue
        file = os.path.basename(getattr(lp.code, "co_filename", ""))
        tests = [f"{ast.unparse(stmt.test)[:100]} ({file}:{stmt.lineno})"
                 for stmt in own_statements(node.body) if isinstance(stmt, ast.If)
                 and any(isinstance(b, ast.Break) for b in stmt.body)]
        if tests:
            return " or ".join(tests[:2])
    return ""


def _name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr \
        if isinstance(func, ast.Attribute) else ""


def calls_around(frame: FrameType | None) -> tuple[int, str] | None:
    """How many times the line running in ``frame`` (a ``fit()`` call) runs in all: the product
    of every loop around it, when every one is readable."""
    try:
        loops, _ = loops_around(frame, None)
    except Exception:  # noqa: BLE001
        return None
    if not loops or any(lp.count is None for lp in loops):
        return None
    return math.prod(lp.count or 1 for lp in loops), " x ".join(lp.text for lp in reversed(loops))


def _totals_from_loops(found: Length) -> None:
    """Steps = the product of the loops from the step outwards, when every one is known. The
    loop over the training loader (else the innermost loop) makes an epoch; loops inside it
    multiply its steps, loops outside it count epochs (a loop that sweeps settings around the
    training repeats it too: the job is all of it)."""
    loops = found.loops
    if not loops:
        return
    at = _epoch_loop(loops)
    per_epoch: int | None = 1
    for lp in loops[: at + 1]:
        per_epoch = None if per_epoch is None or lp.count is None else per_epoch * lp.count
    outer = loops[at + 1:]
    beside = _beside(loops, at)
    texts = [lp.text for lp in reversed(loops[: at + 1] + outer)]
    if beside:  # each epoch runs them all: their steps add up
        counts = [lp.count for lp in beside]
        per_epoch = None if per_epoch is None or None in counts else per_epoch + sum(
            c or 0 for c in counts)
        texts[-1] = f"({' + '.join(lp.text for lp in [loops[0], *beside])})"
    if per_epoch is not None and (not loops[at].over_loader or loops[at].leaves):
        found.steps_per_epoch = per_epoch  # (a loader's loop left early: fewer than its length)
    if per_epoch is None or any(lp.count is None for lp in outer):
        return  # a loop whose bound is not readable: the total is not known from the loops
    epochs = math.prod(lp.count or 1 for lp in outer)
    # a loop over data files weighs its passes by their sizes: the steps, not the epochs' count
    found.steps = round(per_epoch * math.prod(lp.weight or lp.count or 1 for lp in outer))
    if outer or loops[at].over_loader:
        found.epochs = epochs
    found.source = " x ".join(texts)
    if outer and outer[0].work_every:  # `if epoch % K == 0: evaluate()` in the epochs' loop
        work = outer[0].work_every
        found.every_epochs, found.every_epochs_at = work.k, work.at
        found.every_epochs_first, found.every_epochs_last = work.first, work.last
        found.every_epochs_from = work.start
        found.every_epochs_source = outer[0].work_source
    repeating = [lp for lp in outer if (lp.count or 0) > 1]  # (a split loop's 'train': once)
    if len(repeating) >= 2 and not found.every and (outer[-1].count or 0) > 1:
        # a loop around the epochs' loop: its own work each pass (an RL rollout before each
        # update's epochs) comes every K steps - periodic work the probe goes on to time
        found.every = per_epoch * math.prod(lp.count or 1 for lp in outer[:-1])
        found.every_source = f"each pass of {outer[-1].text}"


def one_pass(found: Length, depth: int = 1) -> Length:
    """The length of one pass of the loop ``depth`` loops out from the step: a phase that is one
    iteration of a loop around those (a layer-wise trainer trains each layer in a loop of its
    own, called once per layer: depth 1, one epoch; a new model fitted for some epochs in each
    pass of a loop over settings: the fit's loops, its epochs)."""
    out = Length(every=found.every, every_source=found.every_source, loops=found.loops[:depth])
    _totals_from_loops(out)
    if out.steps and depth == 1:
        out.epochs = 1
    return out


def _by_name(found: Length) -> None:
    """Settings by name where the loops did not say: parsed arguments, then module globals."""
    sources: list[tuple[str, Callable[[str], Any]]] = []
    for ns in _NAMESPACES:
        sources.append(("argument --{}", functools.partial(_setting, ns)))
    main = sys.modules.get("__main__")
    if main is not None:
        sources.append(("setting {} (module global)", lambda name: vars(main).get(name)))
    if found.steps is None and found.epochs is None:
        for fmt, get in sources:
            hit = _first(STEP_NAMES, get)
            if hit is not None:
                found.steps, found.source = hit[1], fmt.format(hit[0]) + f" = {hit[1]}"
                break
            hit = _first(EPOCH_NAMES, get)
            if hit is not None:
                found.epochs, found.source = hit[1], fmt.format(hit[0]) + f" = {hit[1]}"
                break
    if found.every is None:
        for fmt, get in sources:
            hit = _first(EVERY_NAMES, get)
            if hit is not None:
                found.every, found.every_source = hit[1], fmt.format(hit[0]) + f" = {hit[1]}"
                break


def _setting(namespace: Any, name: str) -> Any:
    return getattr(namespace, name, None)


def _first(names: tuple[str, ...], get: Callable[[str], Any]) -> tuple[str, int] | None:
    for name in names:
        value = get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if isinstance(value, float) and not value.is_integer():
            continue
        if 0 < value < 1e12:
            return name, int(value)
    return None
