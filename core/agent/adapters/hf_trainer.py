"""The Hugging Face Trainer: remembered as the program makes it (its constructor patched once
``transformers.trainer`` is imported - transformers loads it lazily, so importing transformers is
not using it), read for what its TrainingArguments say - gradient accumulation, max_steps /
num_train_epochs, the evaluation interval - and stopped through its ``control`` flag, so train()
leaves through its own exit. The PyTorch loops adapter (torch_loops.py) times its steps."""

from __future__ import annotations

import math
from typing import Any

from .. import compat
from ..length import Length
from .base import Trainers, patch_constructor


class HfTrainerAdapter:
    name: str = "the Hugging Face Trainer"
    label: str = "Hugging Face Trainer"
    modules: tuple[str, ...] = (compat.module_of(compat.HF_TRAINER),)

    def __init__(self, trainers: Trainers) -> None:
        self.trainers = trainers

    def install(self, module: str) -> None:
        patch_constructor(compat.HF_TRAINER, lambda trainer: self.trainers.add(self, trainer))

    def in_use(self) -> bool:
        import sys

        return any(module in sys.modules for module in self.modules)

    def accumulation(self, trainer: Any) -> int | None:
        k = _setting(trainer, compat.HF_ACCUMULATION)
        return k if isinstance(k, int) and k >= 1 else None

    def batches(self, trainer: Any) -> int | None:
        return None  # its DataLoader's length is read as any other's

    def length(self, trainer: Any) -> Length | None:
        """max_steps wins over num_train_epochs where it is set (-1: not set), as in the Trainer;
        a Trainer always answers (its arguments are its length, even when they set none)."""
        args = getattr(trainer, compat.HF_ARGS, None)
        if args is None or not hasattr(args, compat.attribute(compat.HF_EPOCHS)):
            return None
        found = Length()
        steps = _setting(trainer, compat.HF_MAX_STEPS, -1)
        if isinstance(steps, int) and steps > 0:
            found.steps, found.source = steps, f"TrainingArguments.max_steps = {steps}"
        else:
            epochs = _setting(trainer, compat.HF_EPOCHS)
            if isinstance(epochs, (int, float)) and epochs > 0:
                found.epochs = int(math.ceil(epochs))
                found.source = f"TrainingArguments.num_train_epochs = {epochs:g}"
        # (an enum: "IntervalStrategy.STEPS" in recent releases, "steps" in older ones)
        strategy = str(_setting(trainer, compat.HF_EVAL_STRATEGY[0],
                                _setting(trainer, compat.HF_EVAL_STRATEGY[1], ""))).lower()
        every = _setting(trainer, compat.HF_EVAL_STEPS)
        if strategy.endswith(compat.HF_BY_STEPS) and isinstance(every, int) and every > 0:
            found.every, found.every_source = every, f"TrainingArguments.eval_steps = {every}"
        patience = _patience(trainer)
        # patience + 1 evaluations at the soonest (the first sets the best): in epochs where it
        # evaluates every epoch, in steps where every K steps; none where that outlasts the
        # length
        by_epoch = strategy.endswith(compat.HF_BY_EPOCH)
        soonest_steps = (patience + 1) * found.every if patience is not None and found.every \
            else None
        if patience is None or not (found.epochs or found.steps) \
                or (by_epoch and found.epochs and patience + 1 >= found.epochs) \
                or (soonest_steps and found.steps and soonest_steps >= found.steps):
            return found
        found.early = compat.attribute(compat.HF_EARLY_STOPPING)
        if by_epoch:
            found.earliest_epochs = patience + 1 if found.epochs else None
        else:
            found.earliest_steps = soonest_steps
        return found

    def planned_epochs(self, trainer: Any) -> int | None:
        epochs = _setting(trainer, compat.HF_EPOCHS)
        return int(epochs) if isinstance(epochs, (int, float)) and epochs > 0 else None

    def leaving(self, trainer: Any) -> bool:
        return False  # its loader runs dry: the probe's stop ends its steps

    def stop(self, trainer: Any) -> None:
        control = getattr(trainer, compat.HF_CONTROL, None)
        flag = compat.attribute(compat.HF_STOP)
        if control is not None and hasattr(control, flag):
            setattr(control, flag, True)  # train() leaves through its own exit


def _setting(trainer: Any, symbol: str, default: Any = None) -> Any:
    """One of the trainer's TrainingArguments, by the symbol compat names it with."""
    return getattr(getattr(trainer, compat.HF_ARGS, None), compat.attribute(symbol), default)


def _patience(trainer: Any) -> int | None:
    """The fewest evaluations without improvement an EarlyStoppingCallback among the trainer's
    callbacks waits for; None: none."""
    handler = getattr(trainer, compat.HF_CALLBACK_HANDLER, None)
    name = compat.attribute(compat.HF_EARLY_STOPPING)
    found = [getattr(c, compat.HF_PATIENCE, None)
             for c in getattr(handler, compat.HF_CALLBACK_LIST, None) or []
             if type(c).__name__ == name]
    counts = [p for p in found if isinstance(p, int) and not isinstance(p, bool) and p >= 0]
    return min(counts) if counts else None
