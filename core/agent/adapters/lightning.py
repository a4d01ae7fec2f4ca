"""Lightning's Trainer (``lightning`` and the older ``pytorch_lightning``): remembered as the
program makes it (its constructor patched once its module is imported), read for what it knows -
batches per epoch, gradient accumulation, max_steps / max_epochs, the validation interval - and
stopped through its own ``should_stop`` flag, so fit() leaves through its own exit. The PyTorch
loops adapter (torch_loops.py) times the optimizer steps it takes."""

from __future__ import annotations

import math

from typing import Any

from .. import compat
from ..length import Length
from .base import Trainers, patch_constructor


class LightningAdapter:
    name: str = "Lightning"
    label: str = "Lightning"
    modules: tuple[str, ...] = tuple(compat.module_of(s) for s in compat.LIGHTNING_TRAINERS)

    def __init__(self, trainers: Trainers) -> None:
        self.trainers = trainers

    def install(self, module: str) -> None:
        for symbol in compat.LIGHTNING_TRAINERS:
            if compat.module_of(symbol) == module:
                patch_constructor(symbol, lambda trainer: self.trainers.add(self, trainer))

    def in_use(self) -> bool:
        import sys

        return any(module in sys.modules for module in self.modules)

    def accumulation(self, trainer: Any) -> int | None:
        k = getattr(trainer, compat.LIGHTNING_ACCUMULATION, None)
        return k if isinstance(k, int) and k >= 1 else None

    def batches(self, trainer: Any) -> int | None:
        """Batches per epoch after limit_train_batches (a float, inf before fit knows them)."""
        n = getattr(trainer, compat.LIGHTNING_BATCHES, None)
        if isinstance(n, int) and n > 0:
            return n
        if isinstance(n, float) and n == n and 0 < n < float("inf"):
            return int(n)
        return None

    def length(self, trainer: Any) -> Length | None:
        """max_steps wins over max_epochs where it is set (-1: not set), as in Lightning."""
        found = Length()
        steps = getattr(trainer, compat.LIGHTNING_MAX_STEPS, None)
        if isinstance(steps, int) and steps > 0:
            found.steps, found.source = steps, f"Trainer(max_steps={steps})"
        epochs = getattr(trainer, compat.LIGHTNING_MAX_EPOCHS, None)
        if isinstance(epochs, int) and epochs > 0:
            found.epochs = epochs
            found.source = "; ".join(filter(None, (found.source, f"Trainer(max_epochs={epochs})")))
        between = _batches_between_validations(trainer)
        if between is not None:  # (in optimizer steps: accumulated batches make one)
            accumulated = getattr(trainer, compat.LIGHTNING_ACCUMULATION, 1)
            per_step = accumulated if isinstance(accumulated, int) and accumulated > 1 else 1
            found.every = max(1, round(between / per_step))
            found.every_source = (f"Trainer(val_check_interval="
                                  f"{getattr(trainer, compat.LIGHTNING_VAL_INTERVAL, '')}): "
                                  f"every {between} batches")
        every = getattr(trainer, compat.LIGHTNING_VAL_EVERY_EPOCHS, None)
        if isinstance(every, int) and not isinstance(every, bool) and every > 1 and not found.every:
            # validation after the epochs j (from 0) where (j + 1) % every == 0 (epoch_work)
            found.every_epochs, found.every_epochs_at = every, every - 1
            found.every_epochs_source = f"Trainer(check_val_every_n_epoch={every})"
        soonest = earliest_stop(trainer)
        if isinstance(soonest, tuple):  # a validation every K steps: its soonest, in steps
            if not found.steps or soonest[0] < found.steps:
                found.earliest_steps, found.early = soonest[0], "EarlyStopping"
        elif soonest and found.epochs and not found.steps and soonest < found.epochs:
            found.earliest_epochs, found.early = soonest, "EarlyStopping"  # (a patience that
        return found if found.steps or found.epochs else None  # outlasts them: no early stop)

    def planned_epochs(self, trainer: Any) -> int | None:
        epochs = getattr(trainer, compat.LIGHTNING_MAX_EPOCHS, None)
        return int(epochs) if isinstance(epochs, (int, float)) and epochs > 0 else None

    def leaving(self, trainer: Any) -> bool:
        return False  # its loader runs dry: the probe's stop ends its steps

    def stop(self, trainer: Any) -> None:
        if hasattr(trainer, compat.LIGHTNING_STOP):
            try:
                setattr(trainer, compat.LIGHTNING_STOP, True)  # fit() leaves through its exit
            except Exception:  # noqa: BLE001
                pass


def _batches_between_validations(trainer: Any) -> int | None:
    """Where validation runs within epochs, every K training batches: an integer
    ``val_check_interval`` K, or a fraction f of an epoch (fit sets ``val_check_batch`` to
    int(f x its batches): 0.5 of 64 batches, after batch 32 and 64). None where it is once an
    epoch (1.0), by time, or not known yet."""
    interval = getattr(trainer, compat.LIGHTNING_VAL_INTERVAL, None)
    if isinstance(interval, bool):
        return None
    if isinstance(interval, int):
        return interval if interval > 1 else None
    check = getattr(trainer, compat.LIGHTNING_VAL_CHECK_BATCH, None)
    if isinstance(interval, float) and 0 < interval < 1 and isinstance(check, int) \
            and not isinstance(check, bool) and check >= 1:
        return check
    return None


def earliest_stop(trainer: Any) -> int | tuple[int] | None:
    """The fewest epochs the Trainer's EarlyStopping callbacks let it run: the first validation
    improves on nothing, then ``patience`` checks without improvement stop it - one check every
    ``check_val_every_n_epoch`` epochs, or every ``val_check_interval`` of an epoch (a
    fraction), or every ``val_check_interval`` steps (a count: the soonest in steps, a
    1-tuple) - and never before ``min_epochs``. None: no EarlyStopping."""
    stops = getattr(trainer, compat.LIGHTNING_EARLY_STOPPING, None) or []
    patience = [p for p in (getattr(c, compat.LIGHTNING_PATIENCE, None) for c in stops)
                if isinstance(p, int) and not isinstance(p, bool)]
    if not patience:
        return None
    every = getattr(trainer, compat.LIGHTNING_VAL_EVERY_EPOCHS, None)
    interval = getattr(trainer, compat.LIGHTNING_VAL_INTERVAL, 1.0)
    checks = max(min(patience), 1) + 1
    least = getattr(trainer, compat.LIGHTNING_MIN_EPOCHS, None)
    least = least if isinstance(least, int) else 0
    if isinstance(interval, int) and not isinstance(interval, bool) and interval > 1:
        return (checks * interval,) if not least else least  # (min_epochs: in epochs)
    if isinstance(interval, float) and 0 < interval < 1:
        soonest = max(1, math.ceil(checks * interval - 1e-9))
    else:
        soonest = checks * (every if isinstance(every, int) and every > 0 else 1)
    return max(soonest, least)
