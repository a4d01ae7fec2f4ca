"""fastai's Learner: each ``fit()`` remembered as a trainer (fit_one_cycle, fit_flat_cos and
fine_tune's two fits all call it), read for its length - ``n_epoch`` less ``start_epoch`` - and
its training DataLoader's batches, and stopped at its next epoch with the exception fit() ends on
(``CancelFitException``), so fit() leaves through its own exit (its ``after_fit`` callbacks run).

fastai's DataLoader drives torch's iterators over a stand-in of its own, never through torch's
``DataLoader.__iter__``: its ``__iter__`` is wrapped so each pass is a pass as a DataLoader's
(TorchData.wrap_passes) - epochs, validation and the stop. fastai's own optimizers are no
torch.optim ones: the PyTorch loops adapter (torch_loops.py) times each backward pass as the step.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

from .. import compat
from ..length import Length
from .base import Trainers
from .torch_loops import TorchLoopsAdapter


class _Fit:
    """One fit() call: the trainer the PyTorch loops adapter asks."""

    def __init__(self, learner: Any, epochs: int | None, callbacks: Any) -> None:
        self.learner = learner
        self.epochs = epochs
        self.steps: int | None = None  # lr_find's: its LRFinder ends the fit after num_it
        self.diverge = False  # ... or sooner, once the loss diverges
        self.stopped = False
        name = compat.attribute(compat.FASTAI_LR_FINDER)
        for cb in _each(callbacks):
            n = getattr(cb, compat.FASTAI_LR_FINDER_STEPS, None)
            if type(cb).__name__ == name and isinstance(n, int) and n > 0:
                self.steps = n
                self.diverge = bool(getattr(cb, compat.FASTAI_LR_FINDER_DIVERGE, False))


class FastaiAdapter:
    name: str = "fastai"
    label: str = "fastai"
    modules: tuple[str, ...] = (compat.module_of(compat.FASTAI_FIT),
                                compat.module_of(compat.FASTAI_LOADER_ITER))

    def __init__(self, trainers: Trainers, loops: TorchLoopsAdapter) -> None:
        self.trainers = trainers
        self.loops = loops

    def install(self, module: str) -> None:
        if module == compat.module_of(compat.FASTAI_LOADER_ITER):
            self.loops.wrap_passes(*compat.owner(compat.FASTAI_LOADER_ITER),
                                   compat.FASTAI_LOADER_BATCH_SIZE)
        if module == compat.module_of(compat.FASTAI_FIT):
            self._patch_learner()

    def _patch_learner(self) -> None:
        learner_class, fit_name = compat.owner(compat.FASTAI_FIT)
        original_fit = getattr(learner_class, fit_name)
        if getattr(original_fit, "_probecast", False):
            return
        _, epoch_name = compat.owner(compat.FASTAI_EPOCH)
        original_epoch = getattr(learner_class, epoch_name)
        cancel = compat.resolve(compat.FASTAI_CANCEL_FIT)
        adapter = self

        @functools.wraps(original_fit)
        def fit(learner: Any, n_epoch: Any, *args: Any, **kwargs: Any) -> Any:
            start = kwargs.get(compat.FASTAI_FIT_START, args[4] if len(args) > 4 else 0)
            epochs = n_epoch - start if isinstance(n_epoch, int) and isinstance(start, int) \
                else None
            record = _Fit(learner, epochs,
                          kwargs.get(compat.FASTAI_FIT_CBS, args[2] if len(args) > 2 else None))
            adapter.trainers.add(adapter, record)
            learner._probecast_fit = record
            return original_fit(learner, n_epoch, *args, **kwargs)

        @functools.wraps(original_epoch)
        def do_epoch(learner: Any, *args: Any, **kwargs: Any) -> Any:
            record = getattr(learner, "_probecast_fit", None)
            if record is not None and record.stopped:
                raise cancel()  # fit() ends here, through its own exit
            return original_epoch(learner, *args, **kwargs)

        fit._probecast = True  # type: ignore[attr-defined]
        setattr(learner_class, fit_name, fit)
        setattr(learner_class, epoch_name, do_epoch)

    def in_use(self) -> bool:
        return compat.module_of(compat.FASTAI_FIT) in sys.modules

    def accumulation(self, trainer: Any) -> int | None:
        return None  # its GradientAccumulation callback steps fastai's optimizer: each backward
        # pass is the step already

    def batches(self, trainer: Any) -> int | None:
        dls = getattr(trainer.learner, compat.FASTAI_DLS, None)
        try:
            n = len(getattr(dls, compat.FASTAI_TRAIN))
        except (AttributeError, TypeError):
            return None
        return n if n > 0 else None

    def length(self, trainer: Any) -> Length | None:
        found = Length()
        if trainer.steps:  # lr_find: num_it batches, at most (its epochs only cover them)
            found.steps = trainer.steps
            found.source = f"fastai lr_find: LRFinder(num_it={trainer.steps})"
            if trainer.diverge:
                found.early = f"{compat.attribute(compat.FASTAI_LR_FINDER)} (stop_div)"
            return found
        if not trainer.epochs or trainer.epochs < 1:
            return None
        found.epochs, found.source = trainer.epochs, f"fastai Learner.fit({trainer.epochs})"
        return found

    def planned_epochs(self, trainer: Any) -> int | None:
        return trainer.epochs if trainer.epochs and trainer.epochs > 0 else None

    def leaving(self, trainer: Any) -> bool:
        return False  # its loader runs dry: the probe's stop ends its steps

    def stop(self, trainer: Any) -> None:
        trainer.stopped = True


def _each(callbacks: Any) -> list[Any]:
    """fit()'s cbs: none, one callback, or a list of them (fastcore's L among lists)."""
    if callbacks is None:
        return []
    try:
        return list(iter(callbacks))
    except TypeError:  # one callback
        return [callbacks]
