"""The Lightning and Hugging Face trainers a PyTorch program makes: remembered as they are made
(their constructors patched on import), read for what they know - batches per epoch, gradient
accumulation, the planned epochs or steps, the evaluation interval - and stopped through their
own flags when the probe has seen enough. torch_probe.py times the steps they take."""

from __future__ import annotations

import functools
import math
from typing import Any

from .imports import OnError

_TRAINERS: list[Any] = []  # the Lightning / Hugging Face trainers this process made (a handful)


def trainer_frameworks() -> str:
    """The training framework in use: its trainer module is loaded (importing a framework's top
    package, which other libraries do to check for it, is not using it)."""
    import sys

    names = [label for module, label in (
        ("lightning.pytorch.trainer.trainer", "Lightning"),
        ("pytorch_lightning.trainer.trainer", "Lightning"),
        ("transformers.trainer", "Hugging Face Trainer"),
        ("accelerate.accelerator", "Accelerate")) if module in sys.modules]
    return f" ({', '.join(dict.fromkeys(names))})" if names else ""


def trainer_accumulation() -> int | None:
    """Batches per optimizer step as the framework's trainer says (its loops fetch batches ahead,
    so counting them at the first step would be wrong)."""
    for trainer in _TRAINERS:
        k = getattr(trainer, "accumulate_grad_batches", None)  # Lightning
        if k is None:
            k = getattr(getattr(trainer, "args", None), "gradient_accumulation_steps", None)
        if isinstance(k, int) and k >= 1:
            return k
    return None


def trainer_batches() -> int | None:
    """Lightning's batches per epoch (after limit_train_batches), when it knows them."""
    for trainer in _TRAINERS:
        n = getattr(trainer, "num_training_batches", None)
        if isinstance(n, int) and n > 0:
            return n
        if isinstance(n, float) and n == n and 0 < n < float("inf"):
            return int(n)
    return None


def trainer_length() -> Any:
    """The length a Lightning or Hugging Face trainer was given (max_steps wins over epochs
    where it is set, as in both frameworks), and its evaluation interval; None without one."""
    from .length import Length

    for trainer in _TRAINERS:
        found = Length()
        args = getattr(trainer, "args", None)
        if args is not None and hasattr(args, "num_train_epochs"):  # Hugging Face
            steps = getattr(args, "max_steps", -1)
            if isinstance(steps, int) and steps > 0:
                found.steps, found.source = steps, f"TrainingArguments.max_steps = {steps}"
            else:
                epochs = getattr(args, "num_train_epochs", None)
                if isinstance(epochs, (int, float)) and epochs > 0:
                    found.epochs = int(math.ceil(epochs))
                    found.source = f"TrainingArguments.num_train_epochs = {epochs:g}"
            strategy = str(getattr(args, "eval_strategy", getattr(args, "evaluation_strategy", "")))
            every = getattr(args, "eval_steps", None)
            if strategy.endswith("steps") and isinstance(every, int) and every > 0:
                found.every, found.every_source = every, f"TrainingArguments.eval_steps = {every}"
            return found
        steps = getattr(trainer, "max_steps", None)  # Lightning: -1 when not set
        if isinstance(steps, int) and steps > 0:
            found.steps, found.source = steps, f"Trainer(max_steps={steps})"
        epochs = getattr(trainer, "max_epochs", None)
        if isinstance(epochs, int) and epochs > 0:
            found.epochs = epochs
            found.source = "; ".join(filter(None, (found.source, f"Trainer(max_epochs={epochs})")))
        interval = getattr(trainer, "val_check_interval", None)
        if isinstance(interval, int) and not isinstance(interval, bool) and interval > 1:
            found.every, found.every_source = interval, f"Trainer(val_check_interval={interval})"
        if found.steps or found.epochs:
            return found
    return None


def trainer_planned_epochs() -> int | None:
    """N_ep from a framework's trainer when one is in use (Lightning max_epochs, the Trainer's
    num_train_epochs); plain loops keep --epochs / the config."""
    for trainer in _TRAINERS:
        epochs = getattr(trainer, "max_epochs", None)  # Lightning
        if epochs is None:
            args = getattr(trainer, "args", None)
            epochs = getattr(args, "num_train_epochs", None)
        if isinstance(epochs, (int, float)) and epochs > 0:
            return int(epochs)
    return None


def stop_frameworks() -> None:
    for trainer in _TRAINERS:
        if hasattr(trainer, "should_stop"):
            try:
                trainer.should_stop = True  # Lightning: leaves fit() through its own exit
            except Exception:  # noqa: BLE001
                pass
        control = getattr(trainer, "control", None)
        if control is not None and hasattr(control, "should_training_stop"):
            control.should_training_stop = True  # Hugging Face Trainer


def watch_trainers(on_error: OnError | None = None) -> None:
    """Remember Lightning and Hugging Face trainers as the program makes them (a patch that
    fails goes to ``on_error``, never to the program's import)."""
    from .imports import when_imported

    def patch(module_name: str, attr: str) -> None:
        import sys

        cls = getattr(sys.modules.get(module_name), attr, None)
        if cls is None or getattr(cls.__init__, "_probecast", False):
            return
        original = cls.__init__

        def init(self: Any, *args: Any, **kwargs: Any) -> None:
            original(self, *args, **kwargs)
            _TRAINERS.append(self)

        init._probecast = True  # type: ignore[attr-defined]
        cls.__init__ = init

    # the modules that define the classes: importing a framework does not import them, and
    # reaching for them early would (transformers loads its Trainer lazily)
    from .compat import TRAINERS

    for module_name, attr in TRAINERS:  # Lightning (both names), the Hugging Face Trainer
        when_imported(module_name, functools.partial(patch, module_name, attr), on_error)
