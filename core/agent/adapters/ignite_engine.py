"""PyTorch Ignite's ``Engine.run(data, max_epochs, epoch_length)``: the engine remembered as a
trainer when its run begins, read for the length its own loop runs - ``max_epochs`` passes of
``epoch_length`` iterations (``len(data)`` unless given), or ``max_iters`` (0.5 on) - which no
loop of the program says, and stopped through ``Engine.terminate()``: the iteration under way
ends, the run fires its TERMINATE and COMPLETED events (the program's handlers run: a test-set
evaluation, a save) and returns, and the program goes on after it.

Only a run begun while no other is under way is a trainer: an evaluator's ``run(val_loader)``
inside the trainer's EPOCH_COMPLETED handler (Ignite's own examples' shape) is its validation,
timed as a pass over another loader. The PyTorch loops adapter (torch_loops.py) times the
optimizer steps the trainer's process function takes and marks each pass over its data as an
epoch; where ``epoch_length`` is not one pass (an endless loader, a pass split in several
epochs) the job is counted in steps, the work at each epoch's end every ``epoch_length`` steps.
An ``EarlyStopping`` handler made for the trainer may end it after ``patience`` evaluations
without improvement: the estimate is then an upper bound, said.
"""

from __future__ import annotations

import functools
import inspect
import sys
from types import FunctionType
from typing import Any

from .. import compat
from ..length import Length
from ..periodic import handler_works
from .base import Trainers, patch_constructor


class _Run:
    """One top-level Engine.run() call: the engine and the data it runs over."""

    def __init__(self, engine: Any, data: Any) -> None:
        self.engine = engine
        self.data = data
        self.done: tuple[int, int] | None = None  # epochs, iterations a resumed run had run
        self.stopped = False  # the probe terminated it: the iteration under way is its last
        self.returned = False  # run() left (a finished run answers nothing: the next does)

    def settings(self) -> tuple[int | None, int | None, int | None]:
        """max_epochs, epoch_length, max_iters as the run set them up (None: not set)."""
        state = getattr(self.engine, compat.IGNITE_STATE, None)
        epochs, length = (getattr(state, name, None) for name in compat.IGNITE_LENGTH)
        iters = getattr(state, compat.IGNITE_MAX_ITERS, None)  # (0.5 on)
        return tuple(v if _count(v) else None for v in (epochs, length, iters))  # type: ignore[return-value]

    def resumed(self) -> tuple[int, int]:
        """What the run had done before its first step here (a run resumed from a state): read
        once, at that step, when the engine's counters stand at its first iteration."""
        if self.done is None:
            state = getattr(self.engine, compat.IGNITE_STATE, None)
            epoch, iteration = (getattr(state, name, 0) for name in compat.IGNITE_COUNTERS)
            self.done = (max(0, epoch - 1) if _count(epoch) else 0,
                         max(0, iteration - 1) if _count(iteration) else 0)
        return self.done

    def as_done(self) -> None:
        """The terminated run's state as the run left it where it ran to its end: its last
        epoch and iteration. The program's code after run() reads what it would have, and the
        engine's next run() goes on (Ignite 0.5) or starts afresh (0.4) from where the plain
        run's would - not from the epoch the probe ended (a fine-tune's epochs planned and run
        off by that many)."""
        state = getattr(self.engine, compat.IGNITE_STATE, None)
        epochs, length, iters = self.settings()
        last = iters or (epochs * length if epochs and length else None)
        if length and iters:
            epochs = -(-iters // length)
        try:
            if epochs:
                setattr(state, compat.IGNITE_COUNTERS[0], epochs)
            if last:
                setattr(state, compat.IGNITE_COUNTERS[1], last)
        except AttributeError:  # a state that takes no attributes: left as the probe ended it
            pass

    def one_pass(self, epoch_length: int) -> bool:
        """An epoch is one pass over the data (the loader's length), as the loops adapter
        counts epochs."""
        try:
            return len(self.data) == epoch_length
        except TypeError:  # no length: an iterator, run for epoch_length at a time
            return False


class IgniteAdapter:
    name: str = "Ignite"
    label: str = "Ignite"
    modules: tuple[str, ...] = (compat.module_of(compat.IGNITE_RUN),
                                compat.module_of(compat.IGNITE_EARLY_STOPPING))

    def __init__(self, trainers: Trainers) -> None:
        self.trainers = trainers
        self.running: list[_Run] = []  # the trainers' runs under way (an evaluator's inside)
        self.stoppers: list[Any] = []  # the EarlyStopping handlers the program made

    def install(self, module: str) -> None:
        if module == compat.module_of(compat.IGNITE_EARLY_STOPPING):
            patch_constructor(compat.IGNITE_EARLY_STOPPING, self.stoppers.append)
            return
        engine_class, run_name = compat.owner(compat.IGNITE_RUN)
        original_run = getattr(engine_class, run_name)
        if getattr(original_run, "_probecast", False):
            return
        data_name = compat.IGNITE_RUN_DATA
        adapter = self

        @functools.wraps(original_run)
        def run(engine: Any, *args: Any, **kwargs: Any) -> Any:
            if adapter.running:  # an evaluator's run inside the trainer's: its validation
                return original_run(engine, *args, **kwargs)
            record = _Run(engine, kwargs.get(data_name, args[0] if args else None))
            adapter.trainers.add(adapter, record)
            adapter.running.append(record)
            try:
                return original_run(engine, *args, **kwargs)
            finally:
                record.returned = True
                adapter.running.remove(record)
                if record.stopped:
                    record.as_done()

        run._probecast = True  # type: ignore[attr-defined]
        setattr(engine_class, run_name, run)

    def in_use(self) -> bool:
        return self.modules[0] in sys.modules and any(
            adapter is self for adapter, _ in self.trainers.made)

    def accumulation(self, trainer: Any) -> int | None:
        return None  # iterations per optimizer step: as the loops adapter counts them

    def batches(self, trainer: Any) -> int | None:
        """Iterations an epoch: its epoch_length where that is one pass over the data."""
        record: _Run = trainer
        _, length, _ = record.settings()
        return None if record.returned or not length or not record.one_pass(length) else length

    def length(self, trainer: Any) -> Length | None:
        record: _Run = trainer
        if record.returned:
            return None
        epochs, length, iters = record.settings()
        done_epochs, done_iters = record.resumed()
        found = Length()
        call = "Ignite Engine.run"
        if iters:  # max_iters: a total of iterations (its epochs, where known, end before)
            found.steps, found.source = iters - done_iters, f"{call}(max_iters={iters})"
        elif epochs and length and not record.one_pass(length):
            found.steps = epochs * length - done_iters
            found.source = f"{call}(max_epochs={epochs}, epoch_length={length})"
            found.every, found.every_source = length, f"{call}'s epoch end every {length} iterations"
        elif epochs:
            found.epochs = epochs - done_epochs
            found.source = f"{call}(max_epochs={epochs})" + (
                f" of {length} iterations" if length else "")
        if not (found.steps or found.epochs) or (found.steps or 1) < 1 or (found.epochs or 1) < 1:
            return None
        if done_epochs or done_iters:
            found.source += f", resumed after {done_iters} iterations"
        _read_periodic(record.engine, found)
        for stopper in self.stoppers:  # one made for this trainer may end it sooner
            trainer_of, patience = (getattr(stopper, n, None)
                                    for n in compat.IGNITE_EARLY_STOPPING_SETTINGS)
            if trainer_of is record.engine and isinstance(patience, int) and _count(patience):
                found.early = f"Ignite EarlyStopping(patience={patience})"
                # (evaluated each epoch at the most: the first sets the best score)
                found.earliest_epochs = patience + 1 if found.epochs else None
        return found

    def planned_epochs(self, trainer: Any) -> int | None:
        found = self.length(trainer)
        return found.epochs if found is not None else None

    def stop(self, trainer: Any) -> None:
        record: _Run = trainer
        if not record.returned and not record.stopped:
            record.stopped = True
            getattr(record.engine, compat.IGNITE_TERMINATE)()  # after the iteration under way

    def leaving(self, trainer: Any) -> bool:
        """Terminated, and run() has not returned: it leaves its loop by itself - no loader to
        run dry, and the passes its TERMINATE / COMPLETED handlers make (a test-set evaluation)
        run whole."""
        record: _Run = trainer
        return record.stopped and not record.returned


def _read_periodic(engine: Any, found: Length) -> None:
    """The work the trainer's handlers do every K iterations (``Events.ITERATION_COMPLETED(
    every=K)``: periodic work every K steps - Ignite counts iterations over the whole run) or
    after every K-th epoch (``Events.EPOCH_COMPLETED(every=K)``, Ignite's cifar10 example's
    validation: after the epochs j, from 0, where j % K == K - 1), where it evaluates or saves
    (periodic.handler_works). The probe goes on to time one, as for ``if step % K == 0:``."""
    work = filtered_work(engine)
    iterations, epochs = (work.get(kind) for kind in compat.IGNITE_EVERY_EVENTS)
    if iterations and not found.every:  # (an epoch end every epoch_length steps: that first)
        found.every, found.every_source = iterations
    if epochs and found.epochs:
        found.every_epochs, found.every_epochs_at = epochs[0], epochs[0] - 1
        found.every_epochs_source = epochs[1]


def filtered_work(engine: Any) -> dict[str, tuple[int, str]]:
    """By event (of IGNITE_EVERY_EVENTS): the smallest K of the handlers added for it every K
    that do work, and where it was read."""
    out: dict[str, tuple[int, str]] = {}
    handlers = getattr(engine, compat.IGNITE_HANDLERS, None)
    for event, entries in (handlers.items() if isinstance(handlers, dict) else ()):
        kind = str(getattr(event, compat.IGNITE_EVENT_VALUE, event))
        if kind not in compat.IGNITE_EVERY_EVENTS:
            continue
        for entry in entries:
            wrapper = entry[0] if isinstance(entry, tuple) and entry else None
            every = _cell(_cell(wrapper, compat.IGNITE_FILTER_CELLS[0]),
                          compat.IGNITE_FILTER_CELLS[1])
            if not _count(every) or every < 2 or not isinstance(wrapper, FunctionType):
                continue
            handler = inspect.unwrap(wrapper)  # (functools.wraps: the program's own handler)
            if handler_works(handler) and (kind not in out or every < out[kind][0]):
                name = handler.__name__ if isinstance(handler, FunctionType) \
                    else type(handler).__name__
                out[kind] = (every, f"Ignite Events.{kind.upper()}(every={every}): {name}")
    return out


def _cell(fn: Any, name: str) -> Any:
    """The value a function's closure holds under ``name`` (None: none, or empty)."""
    if not isinstance(fn, FunctionType) or not fn.__closure__ or \
            name not in fn.__code__.co_freevars:
        return None
    try:
        return fn.__closure__[fn.__code__.co_freevars.index(name)].cell_contents
    except ValueError:  # an empty cell
        return None


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0
