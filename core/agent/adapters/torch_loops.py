"""PyTorch jobs timed with no code change: plain loops, and the loops of Lightning, the Hugging
Face Trainer and Accelerate, started by python, torchrun or accelerate launch.

- A training step is an optimizer step: torch's global optimizer post-step hook (``step(closure)``
  is one step however many passes its closure makes); with several optimizers, one leads (lead.py:
  a GAN's two steps a batch are one). A program that made no optimizer at all
  (weights updated by hand: ``p.data.add_(p.grad, alpha=-lr)``) steps at each backward pass
  (``Tensor.backward`` / ``torch.autograd.backward``). On CUDA a step ends when the device has
  run it, not when the host queued it: each step records a CUDA event and is told once the
  device reaches it (torch_devices.CudaStepClock). The device is synchronised only at the first
  step, at the probe's stop and at the exit, so the program keeps its own overlap of host and
  device (a synchronize after every step made each probed step slower than the program's).
- The job's length is read at the first step (length.py): the loops around the step in the
  program (``for epoch in range(args.epochs)``, ``while iter_num < max_iters``), a trainer's
  ``max_steps`` / ``max_epochs`` (the trainer adapters: lightning.py, hf_trainer.py), else its
  parsed arguments and settings by name; it goes out as a ``plan`` event with where it was read.
- Epochs and steps per epoch come from the DataLoader the steps consume (torch_data.py): a
  new pass over it is a new epoch; ``len(loader)`` batches, divided by the batches per optimizer
  step (gradient accumulation), is N_it - unless no batch comes between two steps (a full batch
  drawn once before a loop of the program's own: that loop is the epoch).
- Validation is a pass over another loader between training steps (Lightning's sanity check
  before training is not): timed as ``val``. T_init ends when the program asks for its first
  batch. The batch size is the training loader's own ``batch_size``.

Once the probe has seen enough, training ends at its next batch: the training loader's iterator
stops (StopIteration), and every loader iterated during training yields nothing from then on, so
the program's own loops run out and its post-training code runs (and is timed); a loader first
iterated after the stop (a test set) runs as usual. The trainers are stopped through their own
flags as well (Trainers.stop): those frameworks end their fit through their own exit. A loop
with no loader to run dry is left at its next line, as a ``break`` would (torch_phases.py); a
program stepping an optimizer after the stop anyway, with ProbeStop (a BaseException).

Under torch.distributed (torchrun, accelerate launch) rank 0 decides: its stop flag is
all-reduced at steps the ranks agreed on, about AGREE_EVERY_S apart (torch_devices.agree), so
every rank leaves at the same step and no rank waits forever in a collective for one that
already left.
"""

from __future__ import annotations

import atexit
import functools
import sys
import time
from typing import Any

from .. import compat
from ..anchors import inside, loop_anchor
from ..length import one_pass
from ..probe_session import ProbeSession
from .base import Trainers
from .lead import LeadOptimizer
from .torch_data import TorchData, key_of
from .torch_phases import TorchPhases
from .torch_devices import CudaStepClock, agree, cuda_in_use, cuda_step_clock, on_cuda

# A DataLoader longer than this many batches a pass is not an epoch (minGPT's sampler draws
# num_samples=1e10 with replacement): its length is never taken as N_it.
ENDLESS_BATCHES = 10_000_000


class TorchLoopsAdapter(TorchData, TorchPhases):
    """Optimizer steps (or backward passes) and DataLoader passes: every PyTorch loop, a
    trainer's included (``trainers``: what the trainer adapters remembered)."""

    name: str = "PyTorch loops"
    modules: tuple[str, ...] = (compat.TORCH_MODULE,)

    def __init__(self, session: ProbeSession, steps_per_epoch: int | None = None,
                 trainers: Trainers | None = None) -> None:
        self.session = session
        self.trainers = trainers or Trainers()
        self.steps_per_epoch = steps_per_epoch  # --steps-per-epoch wins over the loader's len
        self.epoch = 0
        self.index = 0  # step within the epoch
        self.train_loader: int | None = None  # the key of the loader the steps consume (torch_data)
        self.loaders: dict[int, int | None] = {}  # every loader iterated so far: len or None
        self.batch_sizes: dict[int, int] = {}  # ... and its batch_size (0: none)
        self.last_loader: int | None = None  # the loader whose iterator yielded last
        self.batches_since_step = 0
        self.first_batch_at: float | None = None
        self.val: list[int] | None = None  # [loader id, batches] of a validation pass under way
        self.sites: dict[int, Any] = {}  # the line that made each loader's latest pass
        self.ran_out: set[int] = set()  # loaders whose latest pass ran to its end
        self.side: Any = None  # a side pass's iterator (torch_data._side_pass)
        self.stopped = False
        self.empty_passes = 0
        self.sync_cuda: bool | None = None  # decided at the first step: steps run on CUDA
        self.clock: CudaStepClock | None = None  # their device clock (None: the host's)
        self.framework = ""
        self.optimizers = 0  # torch.optim optimizers the program made
        self.lead = LeadOptimizer()  # whose steps are the steps, with several optimizers
        self.by_backward: bool | None = None  # decided at the first step: no optimizer, backward
        self.loop_epoch = 0  # N_it of a loop without a DataLoader (read at the first step)
        self.unwind = False  # stop by unwinding the loop, not by running its loader dry
        self.per_pass: tuple[int, int] | None = None  # (batches a pass, per step) at the start
        self.init_torch_phases()
        self.generation = 0  # probe stops so far: an iterator made before the latest one ends
        self.wrapping: tuple[int, int] | None = None  # a library's pass drawing (torch_data)
        self.began = False  # this adapter began the session: its steps are the training steps
        self._synchronize: Any = None  # torch.cuda.synchronize, resolved at install
        self._installed = False

    # ---- patches -----------------------------------------------------------------------------

    def install(self, module: str = compat.TORCH_MODULE) -> None:
        if self._installed:
            return
        self._installed = True
        register_optimizer_step_post_hook = compat.resolve(compat.TORCH_STEP_HOOK)
        self._synchronize = compat.resolve(compat.TORCH_CUDA_SYNCHRONIZE)
        self.framework = f"torch {compat.resolve(compat.TORCH_VERSION)}"
        register_optimizer_step_post_hook(self._after_optimizer_step)
        self._patch_backward()
        self._patch_loaders()
        atexit.register(self._at_exit)

    def _patch_backward(self) -> None:
        """Count the optimizers the program makes, and take a backward pass as the step of a
        program that made none (hand-written updates): once one is made, backward is torch's
        own again."""
        optimizer_class, init_name = compat.owner(compat.TORCH_OPTIMIZER_INIT)
        original_init = getattr(optimizer_class, init_name)
        autograd_module, backward_name = compat.owner(compat.TORCH_BACKWARD)
        original_backward = getattr(autograd_module, backward_name)
        hook = self

        @functools.wraps(original_init)
        def init(optimizer: Any, *args: Any, **kwargs: Any) -> None:
            hook.optimizers += 1
            if getattr(autograd_module, backward_name) is backward:  # (nobody's patch on ours)
                setattr(autograd_module, backward_name, original_backward)  # idle from now on:
            original_init(optimizer, *args, **kwargs)  # its frame cost every backward ~1 %

        @functools.wraps(original_backward)
        def backward(*args: Any, **kwargs: Any) -> Any:
            out = original_backward(*args, **kwargs)
            if hook.by_backward is not False and not hook.optimizers:
                t0 = time.perf_counter()
                try:
                    hook._after_step(None, "backward")
                finally:
                    hook.own(t0)
            return out

        setattr(optimizer_class, init_name, init)
        setattr(autograd_module, backward_name, backward)

    def _timed(self, kind: str, epoch: int, count: int) -> bool:
        """A step (count: its index) or a validation pass (count: its batches) ended: told now
        on the host's clock, or, on CUDA, once the device has run it. True: the probe stops."""
        if self.clock is None:
            if kind == "step" and self.began:  # every step on the host's clock: _tell, short
                return self.session.step(epoch, count)
            return self._tell(kind, epoch, count, None)
        self.clock.mark((kind, epoch, count))
        stop = False
        for at, (what, ep, n) in self.clock.ready():
            stop = self._tell(what, ep, n, at) or stop
        return stop

    def _drain(self) -> None:
        """What the device still runs, told (one synchronize): at the stop and at the exit."""
        if self.clock is not None:
            for at, (what, ep, n) in self.clock.drain():
                self._tell(what, ep, n, at)

    def _tell(self, kind: str, epoch: int, count: int, at: float | None) -> bool:
        if self.session.started and not self.began:  # another loop's passes (Keras' own)
            return False
        if kind == "val":
            self.session.val(epoch, count, at=at)
            return False
        return self.session.step(epoch, count, at=at)

    # ---- the step clock ----------------------------------------------------------------------

    def own(self, since: float) -> None:
        """The hook's own seconds since ``since`` (perf_counter), spent inside the program's
        step on the host's clock: the plain program does not spend them (ProbeSession.own).
        On a device's clock the host's work hides behind the device's."""
        if self.clock is None:
            self.session.own += time.perf_counter() - since

    def _after_optimizer_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        t0 = time.perf_counter()
        try:
            self._optimizer_stepped(optimizer)
        finally:
            self.own(t0)

    def _optimizer_stepped(self, optimizer: Any) -> None:
        if self.by_backward:  # steps were backward passes (no optimizer made then): this
            if not self.session.phases_enabled:  # optimizer's are a later phase's (torch_phases)
                return
            self.by_backward = False
        key = id(optimizer)
        self.fresh = self._next_part(key)  # a layer-wise trainer's next part (torch_phases.py)
        recur = self.fresh and self._parts_recur()  # no: a fold's, leading from its first step
        self.fresh = self.fresh and not recur
        self.stepped.add(key)
        if not self.lead.leads(key, self.stopped,
                               lambda: recur or self.fresh or self._another_phase(),
                               time.monotonic()):
            return  # another optimizer's step inside the lead's iteration (a GAN's generator)
        if not (self.found is not None and self.found.loops and self.found.loops[0].beside):
            self.lead.warn(self.session.log)  # (where the length read counts both: no warning)
        self._after_step(optimizer, "optimizer", self.lead.missed_at)

    def _another_phase(self) -> bool:
        """A step outside the lead's loop: the probe stopped that loop and this one is
        elsewhere (or a trainer was made since), or that loop ran to its end."""
        s = self.session
        if not s.started or not s.phases_enabled:
            return False
        if self.stopped and len(self.trainers.made) > self.trainers_at_stop:
            return True
        return s.anchor is not None and not inside(s.anchor, sys._getframe())

    def _trainer_made(self) -> bool:
        """A trainer was made since this phase began: its fit() is the next phase, though it
        runs from the same line of the program (fastai's fine_tune: two fit()s)."""
        return self.session.phases_enabled and len(self.trainers.made) > self.trainers_at_begin

    def _after_step(self, optimizer: Any, kind: str, missed: float | None = None) -> None:
        s = self.session
        if s.started and not self.began:  # another loop times these steps: Keras' fit() on
            return  # the torch backend (its backward passes), a StepTimer - one step, not two
        if self.stopped and self.trainers.leaving():
            return  # a stopped trainer's steps on its way out of its own loop (sb3_learn.py)
        if self.stopped or self.fresh or (s.started and (self._left_the_loop()
                                                         or self._trainer_made())):
            self._next_phase()  # or ProbeStop: the stopped loop trains on without data
        if s.ended:
            return
        if self.by_backward is None:
            self.by_backward = kind == "backward"
        if self.sync_cuda is None:
            self.sync_cuda = on_cuda(optimizer) if optimizer is not None else cuda_in_use()
            self.clock = cuda_step_clock() if self.sync_cuda else None
            if self.clock is not None:
                self.clock.anchor()  # T_init and T_it1 meet where the device has caught up
        if self.sync_cuda and self.clock is None:
            self._synchronize()  # no device events: the host's clock, after the device's work
        begins = not s.started or self.phase_pending
        if begins:
            self._begin()
        if self.val is not None:  # (asked here: a call less at every step)
            if not self._adopt_side():  # training's next pass over its loader (torch_data.py)
                self._adopt_loader()  # a new loader each pass (torch_phases.py)
            self._end_val()  # a validation pass the program left early
        if s.total_steps == 1 and self.per_pass:
            self._check_batches_per_step(self.batches_since_step, *self.per_pass)
        self.batches_since_step = 0
        if self.loop_epoch and self._loop_passed():  # the program's loop ran a pass
            self.epoch += 1
            self.index = 0
        if missed is not None and self.clock is None and not begins:
            s.step(self.epoch, self.index, at=missed)  # the new lead's first step, alone then
            self.index += 1  # (lead.py: PPO's value loop's first step)
        stop = self._timed("step", self.epoch, self.index)
        self.index += 1
        stop = agree(stop)
        if stop:
            self.stopped = True
            self.generation += 1
            self._drain()  # every step the program ran is in the log before `done`
            self.trainers.stop()
            self.trainers_at_stop = len(self.trainers.made)
            if s.phases_enabled:
                s.end_phase(at_exit=False)  # _at_exit ends training; its loaders run dry; a later loop is the next phase
                if self.trainers.leaving():
                    pass  # the trainer leaves its loop by itself (sb3_learn.py)
                elif self.train_loader is None or self.unwind:
                    self._leave_loops()  # no loader to run dry
                else:
                    self._leave_epochs_loop()  # its loader runs dry; its later epochs: none
            else:
                s.mark_done("probe-done", s.policy.reason or "stopped with rank 0")

    def _at_exit(self) -> None:
        """A run that trained to its end (no probe stop): training was over at its last step or
        validation pass; what came after is the program's post-training work."""
        s = self.session
        if s.started and not s.ended:
            self._end_val()
            self._drain()
            s.trained_to_exit()

    def _begin(self) -> None:
        s = self.session
        self.began = True
        self.trainers_at_begin = len(self.trainers.made)
        self.train_loader = self._own_side()  # the loader the last batch came from
        batches = self.trainers.batches()
        if batches is None and self.train_loader is not None:
            batches = self.loaders.get(self.train_loader)
        per_step = self.trainers.accumulation() or max(1, self.batches_since_step)
        endless = bool(batches and batches > ENDLESS_BATCHES)
        n = self.steps_per_epoch or (batches // per_step if batches and not endless else 0)
        found = self._length(batches if not endless else None, per_step)
        if batches and not endless and not self.trainers.accumulation():
            self.per_pass = (batches, per_step)  # checked again at the second step
        if self.train_loader is None:
            how = "no DataLoader seen"
        elif not batches:
            how = "its DataLoader has no length"
        elif endless:
            how = f"its DataLoader's {batches} batches a pass are not an epoch"
        else:
            how = f"{batches} batches per pass" + (f", {per_step} per optimizer step"
                                                  if per_step > 1 else "")
        # The program draws batches with next() inside a loop of its own (an endless sampler):
        # running its loader dry is no end it expects - the probe unwinds the loop instead.
        self.unwind = self.train_loader is not None and bool(found.loops) and not any(
            lp.over_loader for lp in found.loops)
        n, how = self._epoch_by_count(found, n, how)
        anchor = loop_anchor(sys._getframe()) if s.phases_enabled else None
        if self.phase_pending:
            self.phase_pending = False
            s.new_phase(steps_per_epoch=max(0, n), anchor=anchor,
                        loop=anchor.text if anchor is not None else "")
        else:
            s.anchor = anchor
            s.begin(steps_per_epoch=max(0, n), framework=self.framework + self._frameworks(),
                    at=self.first_batch_at, epochs=self.trainers.planned_epochs(),
                    batch_size=self.batch_sizes.get(self.train_loader or 0))
        if self.by_backward:
            s.log("info", "PyTorch without an optimizer (no torch.optim optimizer was made): each "
                  "backward pass is a training step", code="backward-step")
        s.log("info", f"PyTorch: each {'backward pass' if self.by_backward else 'optimizer step'}"
              " is a training step; "
              + (f"{n} steps per epoch ({how})" if n else f"steps per epoch unknown ({how})"),
              code="torch-loop")
        self.found = found
        self.began_at = self._loop_values()
        self.marker.start(found)
        s.plan(**(one_pass(found, self.part_depth) if self.per_pass_phase else found).fields())
        if found.early:
            s.log("warning", f"{found.early} may end training before its planned length: the "
                  "estimate for that is an upper bound", code="early-stop")
        if endless:
            s.log("warning", f"the training DataLoader has {batches} batches per pass (a "
                  "sampler's num_samples far past its data?): that is not an epoch"
                  + (f"; the job's length: {found.source}" if found.steps else
                     " - give the job's length with --steps or --epochs"), code="endless-loader")

    def _epoch_by_count(self, found: Any, n: int, how: str) -> tuple[int, str]:
        """Where no loader's pass makes the epoch, a count does, the steps counted here: a loop
        of the program's own, or a trainer's steps an iteration (Stable-Baselines3's rollouts)."""
        if not n and found.steps_per_epoch:
            n = self.loop_epoch = found.steps_per_epoch
            how = f"the loop {found.loops[0].text}"
        elif n and self.train_loader is None and not self.steps_per_epoch:
            self.loop_epoch = n
            how = f"the trainer's {n} steps an iteration"
        return _left_early(found, n, how)

    def _length(self, batches: int | None, per_step: int) -> Any:
        """The job's length as the program says it: a trainer's settings, else the loops around
        this step, else its settings by name (length.py)."""
        from ..length import read_length

        def loader_loop(obj: Any) -> int | None:  # the DataLoader, or an object holding it
            try:  # (Fabric's, a DeviceDataLoader)
                held = vars(obj)
            except TypeError:  # no __dict__
                held = {}
            if self.train_loader is not None and batches and (key_of(obj) == self.train_loader or any(
                    key_of(v) == self.train_loader for v in list(held.values()))):
                return max(1, batches // per_step)
            return None

        return self.trainers.length() or read_length(sys._getframe(), loader_loop)

    def _frameworks(self) -> str:
        """The training frameworks in use, by their trainer modules: " (Lightning, Accelerate)"."""
        names = self.trainers.labels()
        if compat.module_of(compat.ACCELERATE[0]) in sys.modules:
            names.append("Accelerate")
        return f" ({', '.join(dict.fromkeys(names))})" if names else ""


def _left_early(found: Any, n: int, how: str) -> tuple[int, str]:
    """The steps an epoch takes where the program's loop over the loader leaves each pass
    early, at an index it counts (index_break.py) - its passes are still the epochs."""
    left = next((lp for lp in found.loops if lp.over_loader and lp.leaves), None)
    if left is None or not found.steps_per_epoch or found.steps_per_epoch >= n:
        return n, how
    return found.steps_per_epoch, f"{how}; its loop leaves after {found.steps_per_epoch}, " \
                                  f"at {left.leaves}"
