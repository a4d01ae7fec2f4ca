"""PyTorch jobs timed with no code change: plain loops, and the loops of Lightning, the Hugging
Face Trainer and Accelerate, started by python, torchrun or accelerate launch.

- A training step is an optimizer step: torch's global optimizer post-step hook. On CUDA the
  hook synchronises the device before it reads the clock, so queued kernels are not taken for
  fast steps (the cost: the host cannot queue the next step while this one finishes).
- Epochs and steps per epoch come from the DataLoader the steps consume: a new pass over it is a
  new epoch; ``len(loader)`` batches, divided by the batches per optimizer step (gradient
  accumulation), is N_it.
- Validation is a pass over another loader between training steps (Lightning's sanity check
  before training is not): timed as ``val``.
- T_init ends when the program asks for its first batch.

Once the probe has seen enough, training ends at its next batch: the training loader's iterator
stops (StopIteration), and every loader iterated during training yields nothing from then on, so
the program's own loops run out and its post-training code runs (and is timed); a loader first
iterated after the stop (a test set) runs as usual. Lightning's ``trainer.should_stop`` and the
Trainer's ``control.should_training_stop`` are set as well, so those frameworks end their fit
through their own exit. A program that steps an optimizer after the stop anyway is stopped with
ProbeStop (a BaseException: ``except Exception`` does not swallow it).

Under torch.distributed (torchrun, accelerate launch) rank 0 decides: each step ends with an
all_reduce of its stop flag, so every rank leaves at the same step and no rank waits forever in a
collective for one that already left.
"""

from __future__ import annotations

import functools
import time
from typing import Any

from .imports import OnError
from .session import ProbeSession, ProbeStop

MAX_EMPTY_PASSES = 10_000  # a loop that re-iterates its finished loaders forever is stopped


class TorchHook:
    def __init__(self, session: ProbeSession, steps_per_epoch: int | None = None) -> None:
        self.session = session
        self.steps_per_epoch = steps_per_epoch  # --steps-per-epoch wins over the loader's len
        self.epoch = 0
        self.index = 0  # step within the epoch
        self.train_loader: int | None = None  # id() of the loader the steps consume
        self.loaders: dict[int, int | None] = {}  # every loader iterated so far: len or None
        self.last_loader: int | None = None  # the loader whose iterator yielded last
        self.batches_since_step = 0
        self.first_batch_at: float | None = None
        self.val: list[int] | None = None  # [loader id, batches] of a validation pass under way
        self.stopped = False
        self.empty_passes = 0
        self.sync_cuda: bool | None = None  # decided at the first step
        self.framework = ""
        self._installed = False

    # ---- patches -----------------------------------------------------------------------------

    def install(self) -> None:
        if self._installed:
            return
        self._installed = True
        import torch

        from .compat import TORCH_LOADER_ITER, TORCH_LOADER_NEXT, TORCH_STEP_HOOK, owner, resolve

        register_optimizer_step_post_hook = resolve(TORCH_STEP_HOOK)
        loader_class, iter_name = owner(TORCH_LOADER_ITER)  # DataLoader.__iter__
        iterator_class, next_name = owner(TORCH_LOADER_NEXT)  # _BaseDataLoaderIter.__next__
        self.framework = f"torch {torch.__version__}"
        register_optimizer_step_post_hook(self._after_step)
        import atexit

        atexit.register(self._at_exit)
        hook = self
        original_iter = getattr(loader_class, iter_name)
        original_next = getattr(iterator_class, next_name)

        def loader_iter(loader: Any) -> Any:
            key = id(loader)
            if hook.stopped and key in hook.loaders:
                hook.empty_passes += 1
                if hook.empty_passes > MAX_EMPTY_PASSES:
                    raise ProbeStop("the program kept iterating its training data after the probe")
                return iter(())
            it = original_iter(loader)
            try:
                n: int | None = len(loader)
            except TypeError:  # an iterable dataset without a length
                n = None
            hook._new_pass(key, n)
            try:
                it._probecast_loader = key
            except AttributeError:  # a custom iterator with __slots__: timed by steps only
                pass
            return it

        def iter_next(it: Any) -> Any:
            key = getattr(it, "_probecast_loader", None)
            if hook.stopped and key is not None and key == hook.train_loader:
                raise StopIteration  # training ends here: the epoch loop runs out
            if hook.first_batch_at is None:
                hook.first_batch_at = time.monotonic()  # the program asks for data: T_init ends
            try:
                batch = original_next(it)
            except StopIteration:
                if hook.val is not None and hook.val[0] == key:
                    hook._end_val()
                raise
            hook._batch(key)
            return batch

        setattr(loader_class, iter_name, loader_iter)
        setattr(iterator_class, next_name, iter_next)

    # ---- data ------------------------------------------------------------------------------

    def _new_pass(self, key: int, n: int | None) -> None:
        if key == self.train_loader:
            self._end_val()
            if self.index > 0:  # a new pass over the training data: a new epoch
                self.epoch += 1
                self.index = 0
            self.batches_since_step = 0
        elif self.session.started and not self.stopped:
            self._end_val()
            self.val = [key, 0]
        self.loaders[key] = n

    def _batch(self, key: Any) -> None:
        self.last_loader = key
        if self.val is not None and self.val[0] == key:
            self.val[1] += 1
        elif self.train_loader is None or key == self.train_loader:
            self.batches_since_step += 1

    def _end_val(self) -> None:
        if self.val is not None:
            _, batches = self.val
            self.val = None
            if batches and not self.session.ended:
                self.session.val(self.epoch, batches)

    # ---- the step clock ----------------------------------------------------------------------

    def _after_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        s = self.session
        if self.stopped:
            raise ProbeStop(s.policy.reason or "the probe stopped")  # trains on without data
        if s.ended:
            return
        if self.sync_cuda is None:
            self.sync_cuda = _on_cuda(optimizer)
        if self.sync_cuda:
            import torch

            torch.cuda.synchronize()
        if not s.started:
            self._begin()
        self._end_val()  # a validation pass the program left early
        self.batches_since_step = 0
        stop = s.step(self.epoch, self.index)
        self.index += 1
        stop = _agree(stop)
        if stop:
            self.stopped = True
            _stop_frameworks()
            s.mark_done("probe-done", s.policy.reason or "stopped with rank 0")

    def _at_exit(self) -> None:
        """A run that trained to its end (no probe stop): training was over at its last step or
        validation pass; what came after is the program's post-training work."""
        s = self.session
        if s.started and not s.ended:
            self._end_val()
            s.mark_done("complete", "training ran to its end",
                        at=self.session.emitter.last_timed)

    def _begin(self) -> None:
        s = self.session
        self.train_loader = self.last_loader
        batches = _trainer_batches()
        if batches is None and self.train_loader is not None:
            batches = self.loaders.get(self.train_loader)
        per_step = _trainer_accumulation() or max(1, self.batches_since_step)
        n = self.steps_per_epoch or (batches // per_step if batches else 0)
        s.begin(steps_per_epoch=max(0, n), framework=self.framework + _frameworks(),
                at=self.first_batch_at, epochs=_planned_epochs())
        if self.train_loader is None:
            how = "no DataLoader seen"
        elif not batches:
            how = "its DataLoader has no length"
        else:
            how = f"{batches} batches per pass" + (f", {per_step} per optimizer step"
                                                  if per_step > 1 else "")
        s.log("info", "PyTorch: each optimizer step is a training step; "
              + (f"{n} steps per epoch ({how})" if n else
                 f"steps per epoch unknown ({how}) - give it with --steps-per-epoch"),
              code="torch-loop")


def _on_cuda(optimizer: Any) -> bool:
    try:
        return any(p.is_cuda for group in optimizer.param_groups for p in group["params"])
    except Exception:  # noqa: BLE001
        return False


def _agree(stop: bool) -> bool:
    """Under torch.distributed: rank 0's decision, the same on every rank at the same step."""
    try:
        import torch
        import torch.distributed as dist

        if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() < 2:
            return stop
        device = (torch.device("cuda", torch.cuda.current_device())
                  if dist.get_backend() == "nccl" else torch.device("cpu"))
        flag = torch.tensor([1 if stop and dist.get_rank() == 0 else 0], device=device)
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        return bool(flag.item())
    except Exception:  # noqa: BLE001 - never break the program's own collectives
        return stop


_TRAINERS: list[Any] = []  # the Lightning / Hugging Face trainers this process made (a handful)


def _frameworks() -> str:
    """The training framework in use: its trainer module is loaded (importing a framework's top
    package, which other libraries do to check for it, is not using it)."""
    import sys

    names = [label for module, label in (
        ("lightning.pytorch.trainer.trainer", "Lightning"),
        ("pytorch_lightning.trainer.trainer", "Lightning"),
        ("transformers.trainer", "Hugging Face Trainer"),
        ("accelerate.accelerator", "Accelerate")) if module in sys.modules]
    return f" ({', '.join(dict.fromkeys(names))})" if names else ""


def _trainer_accumulation() -> int | None:
    """Batches per optimizer step as the framework's trainer says (its loops fetch batches ahead,
    so counting them at the first step would be wrong)."""
    for trainer in _TRAINERS:
        k = getattr(trainer, "accumulate_grad_batches", None)  # Lightning
        if k is None:
            k = getattr(getattr(trainer, "args", None), "gradient_accumulation_steps", None)
        if isinstance(k, int) and k >= 1:
            return k
    return None


def _trainer_batches() -> int | None:
    """Lightning's batches per epoch (after limit_train_batches), when it knows them."""
    for trainer in _TRAINERS:
        n = getattr(trainer, "num_training_batches", None)
        if isinstance(n, int) and n > 0:
            return n
        if isinstance(n, float) and n == n and 0 < n < float("inf"):
            return int(n)
    return None


def _planned_epochs() -> int | None:
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


def _stop_frameworks() -> None:
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
