"""Custom training loops (GradientTape, no fit) timed with no code change.

A training step is an optimizer step: every ``Optimizer.apply`` / ``apply_gradients`` outside
``fit``. A program that made no Keras optimizer updates its weights by hand (tensorflow/docs' Core
API guides: ``v.assign_sub(learning_rate * g)``, or an optimizer class of its own): there each
gradient a ``GradientTape`` computes is the step, as a backward pass is in PyTorch. In eager
code the patched method reports it directly; inside a ``tf.function`` (or a ``jax.jit`` on
Keras' jax backend) it adds a call back that runs at every run of the traced step
(traced_steps.py). Epochs and steps per epoch come from the tf.data
dataset the loop iterates (a new iterator over the same dataset is a new epoch; its cardinality,
when known, is N_it). Once the probe has seen enough, the loop is stopped at its next Python-level
point - the dataset iterator's ``__next__``, or the next eager optimizer step - with ProbeStop, a
BaseException that ``except Exception`` does not swallow.

Under the agent a program may train in phases, one loop after another (several GradientTape
loops). There the probe ends the loop the way it ends: its dataset iterators stop
(StopIteration) and every dataset iterated inside that loop from then on yields nothing, so the
loop runs out and the program goes on. Why not ProbeStop: an exception unwinds past every later
loop too, and a traced step cannot be left mid-graph anyway - the iterator's ``__next__`` is the
one Python-level point every such loop passes. Steps that come after, from a dataset iterated
outside that loop (or an optimizer step traced or run there), are the next phase. A loop with no
dataset (NumPy slices, a full batch) is left at its next line as a ``break`` would
(loop_exit.py), where its step ran eagerly; a traced one is unwound at its next step.
"""

from __future__ import annotations

import atexit

import functools
import sys
import threading
import time
from typing import Any

from .. import compat, own_code
from ..anchors import LoopAnchor, inside, loop_anchor
from ..epoch_marker import EpochMarker, program_frame
from ..probe_session import ProbeSession, ProbeStop
from . import traced_steps
from .lead import LeadOptimizer


class KerasLoopsAdapter:
    """Optimizer steps outside fit(), and the tf.data passes they consume. Installed after the
    Keras fit adapter (both on the program's ``import keras``), which counts ``in_fit`` so the
    steps fit() takes are its callback's, not this adapter's."""

    name: str = "Keras custom loops"
    modules: tuple[str, ...] = (compat.KERAS_MODULE,)

    def __init__(self, session: ProbeSession, steps_per_epoch: int | None = None) -> None:
        self.session = session
        self.steps_per_epoch = steps_per_epoch  # --steps-per-epoch wins over the dataset's
        self.in_fit = 0  # > 0 while Model.fit runs: its own callback times those steps
        self.stop_pending = False
        self.epoch = 0
        self.index = 0
        self.train_dataset: int | None = None  # id() of the dataset the loop trains on
        self.last_iterated: tuple[int, int] | None = None  # (id, cardinality) of the latest
        self.framework = "custom loop"  # "keras 3.x (custom loop)" once installed
        self.stopped = False  # the probe ended the current phase's loop (phases: see above)
        self.generation = 0  # probe stops so far: an iterator made before the latest one ends
        self.latest: LoopAnchor | None = None  # the loop of the latest dataset pass or apply
        self.elsewhere: LoopAnchor | None = None  # ... when outside the current phase's loop
        self.length_at_pass: Any = None  # the length read where a phase's dataset was iterated
        self._read: tuple[Any, Any] | None = None  # (where, the length read there): read once
        self.epochs_left = 0  # the stop whose loop of epochs was armed to be left
        self.optimizers = 0  # Keras optimizers the program made: with none, a gradient is a step
        self.counted = False  # this adapter timed the steps (not fit()'s callback): its at-exit
        self.lead = LeadOptimizer()  # whose steps are the steps, with several optimizers
        self.beside = False  # the length read counts loops of steps beside the step's own
        self.marker = EpochMarker()  # where no dataset's pass makes the epoch: that loop's
        self.caller: int | None = None  # the thread that traced an optimizer step
        self.backend = "tensorflow"  # Keras' backend: only TensorFlow's has tf.data epochs
        self._installed = False

    # ---- the step clock ----------------------------------------------------------------------

    def step(self, gradient: bool = False, optimizer: int | None = None) -> None:
        """One optimizer step ended (called eagerly or from the traced py_function; ``optimizer``:
        its id()); or, with ``gradient``, a tape's gradient in a program with no optimizer (its
        step). With several optimizers only the lead's steps count (lead.py): a GAN's two
        optimizers step once each a batch - one training step."""
        s = self.session
        if self.in_fit or s.ended or self.stop_pending:
            return
        if optimizer is not None and not self.lead.leads(
                optimizer, self.stopped, lambda: self.elsewhere is not None):
            return
        if not self.beside:  # (the length read counts a loop of steps beside the first)
            self.lead.warn(s.log)
        if (self.stopped or self.elsewhere is not None) and not self._next_phase():
            return
        if not s.started:
            if self.last_iterated is not None:
                self.train_dataset = self.last_iterated[0]
            n = self.steps_per_epoch or (self.last_iterated[1] if self.last_iterated else 0)
            s.anchor = self.latest if s.phases_enabled else None
            s.begin(steps_per_epoch=max(0, n), framework=self.framework)
            s.log("info", ("custom training loop with no Keras optimizer (weights updated by "
                           "hand): each gradient a GradientTape computes is a training step"
                           if gradient else
                           "custom training loop: each optimizer step is a training step")
                  + ("" if n > 0 else "; steps per epoch unknown - give it with "
                     "--steps-per-epoch (or iterate a tf.data dataset of known cardinality)"),
                  code="gradient-step" if gradient else "custom-loop")
            if self.last_iterated is None:  # arrays, tensors or nothing: no tf.data iterator
                s.log("info", "the loop iterated no tf.data dataset before its first step: no "
                      "iterator teardown to stall at its boundaries", code="no-tf-data")
            self._plan(n)
        elif self.marker.loop and self.marker.moved(program_frame(self.caller)) and self.index:
            self.epoch, self.index = self.epoch + 1, 0  # no dataset: the loop around marks it
        self.counted = True
        if s.step(self.epoch, self.index):
            if s.phases_enabled and s.anchor is not None:
                self.stopped = True  # its iterators stop, its datasets yield nothing
                self.generation += 1
                s.end_phase()
                if self.train_dataset is None:  # no pass to end: its loop is left as a break
                    self._leave_loops()  # would, or unwound at its next step as before
            else:
                self.stop_pending = True
                s.mark_done("probe-done", s.policy.reason)
                threading.Thread(target=self._watchdog, daemon=True).start()
        self.index += 1

    def traced(self, run: Any) -> None:
        """A step in a tf.function (a jax.jit on jax's backend) being traced: ``run`` is called
        back at each run, on a thread of the framework's (this one calls it: program_frame)."""
        self.caller = threading.get_ident()
        traced_steps.call_back(self.backend, run, self.session)

    def own(self, before: float, since: float) -> None:
        """The hook's own seconds in a step: ``before`` it, since ``since`` after (.own)."""
        self.session.own += before + time.perf_counter() - since

    def _at_exit(self) -> None:
        """A custom loop that trained to its end (or whose last phase did): what came after its
        last step is post-training work - the timed `done` (with the agent's own time a step)
        that makes the run one the probe saw whole (tensorflow/docs' optimizer guide, seen
        whole, had taken the agent's 0.1 ms in each of its 11 248 steps as the program's)."""
        s = self.session
        if not self.counted or s.ended or self.stop_pending:
            return
        s.trained_to_exit()

    def _next_phase(self) -> bool:
        """A step after the probe ended a loop, or after a pass outside the current loop: the
        next phase when it came from another loop (and phases are left), else a step of the
        stopped loop (it trains on without a dataset): unwound at its next Python-level point."""
        s = self.session
        anchor, self.elsewhere = self.elsewhere, None
        if anchor is None or not s.more_phases():
            if anchor is not None:
                s.log("warning", f"training went on in a phase past the probe's {s.phase}: the "
                      "program is stopped here; the estimate covers the phases seen",
                      code="phase-budget")
            if self.stopped:
                self.stop_pending = True
                threading.Thread(target=self._watchdog, daemon=True).start()
                return False
            return True
        self.stopped = False
        self.epoch = self.index = 0
        if self.last_iterated is not None:
            self.train_dataset = self.last_iterated[0]
        n = self.steps_per_epoch or (self.last_iterated[1] if self.last_iterated else 0)
        s.new_phase(steps_per_epoch=max(0, n), loop=anchor.text, anchor=anchor)
        self._plan(n)
        return True

    def _where(self, frame: Any) -> None:
        """A dataset pass or an optimizer apply at ``frame``: which loop it runs in."""
        s = self.session
        if not s.phases_enabled:
            return
        self.latest = loop_anchor(frame)
        if s.started and s.anchor is not None and self.latest is not None \
                and not inside(s.anchor, frame):
            self.elsewhere = self.latest

    def _plan(self, per_pass: int) -> None:
        """The job's length from the loops around this step (length.py): a loop over the
        training dataset makes an epoch of ``per_pass`` steps, the loops outside it epochs."""
        from ..length import read_length

        def loader_loop(obj: Any) -> int | None:
            return per_pass if per_pass > 0 and id(obj) == self.train_dataset else None

        found, self.length_at_pass = self.length_at_pass, None
        if found is None or not found.loops:  # (a traced step: the calling thread's frames)
            found = read_length(program_frame(self.caller), loader_loop)
        self.session.plan(**found.fields())
        self.beside = bool(found.loops and found.loops[0].beside)
        self.marker.start(found, program_frame(self.caller))
        if found.early:
            self.session.log("warning", f"{found.early} may end training before its planned "
                             "length: the estimate for that is an upper bound", code="early-stop")

    def leave_epochs(self, frame: Any) -> None:
        """The stopped loop's pass runs out here: the loop of epochs around it is left at the
        top of its next pass (loop_exit.leave_epochs), once a stop - its later epochs would
        run the program's per-epoch code on empty passes."""
        if self.epochs_left == self.generation or self._read is None:
            return
        self.epochs_left = self.generation
        from ..loop_exit import epochs_exit, leave_epochs

        s = self.session
        exit_ = epochs_exit(frame, self._read[1].loops)
        if exit_ is not None:
            leave_epochs(s, exit_, lambda: ProbeStop(s.policy.reason or "the probe stopped"))

    def _read_length_at(self, frame: Any, ds: Any, card: int) -> None:
        """A pass that may begin a phase: the loops around the line that iterates it say the
        phase's length (the traced step's own stack has none of the program's frames). Read
        once for a loop and cardinality: a program calling predict() in a loop (text generation,
        an RL agent's actions) iterates a dataset twice a call, and each reading took ~1 ms."""
        from ..length import read_length

        def loader_loop(obj: Any) -> int | None:
            return card if card > 0 and obj is ds else None

        where = (self.latest, card)
        if self._read is None or self._read[0] != where or self.latest is None:
            self._read = (where, read_length(frame, loader_loop))
        self.length_at_pass = self._read[1]

    def _leave_loops(self) -> None:
        """The stopped loop draws from no dataset (NumPy slices, a full batch, ``range``): it is
        left at its next line, as a ``break`` would (loop_exit.py). Not from a traced step's call
        back (a thread of TensorFlow's: nothing to arm there): its next step unwinds it."""
        from ..loop_exit import leave_loops

        s = self.session
        leave_loops(s, sys._getframe(), lambda: ProbeStop(s.policy.reason or "the probe stopped"))

    def _watchdog(self) -> None:
        """A loop with no Python-level point to stop at (graph mode over NumPy slices): after 10
        s, interrupt the main thread; at once where traced steps iterate no dataset (PPO's)."""
        time.sleep(0.5 if self.caller is not None and self.train_dataset is None else 10.0)
        if self.stop_pending:
            import _thread

            _thread.interrupt_main()

    def checkpoint(self) -> None:
        """A Python-level point of the loop: raise the pending stop here."""
        if self.stop_pending:
            self.stop_pending = False
            raise ProbeStop(self.session.policy.reason or "the probe stopped")

    # ---- patches -----------------------------------------------------------------------------

    def install(self, module: str = compat.KERAS_MODULE) -> None:
        if self._installed:
            return
        self._installed = True
        optimizer_class, apply_name = compat.owner(compat.KERAS_OPTIMIZER_APPLY)  # its apply
        original_apply = getattr(optimizer_class, apply_name)
        self.framework = compat.keras_framework("custom loop")
        atexit.register(self._at_exit)
        hook = self
        traced: Any = None  # is this apply being traced? resolved at the first step outside fit()

        def apply(optimizer: Any, grads: Any, trainable_variables: Any = None) -> Any:
            if hook.in_fit:
                return original_apply(optimizer, grads, trainable_variables)
            nonlocal traced
            t0 = time.perf_counter()
            hook._where(sys._getframe(1))
            hook.checkpoint()
            t1 = time.perf_counter()
            out = original_apply(optimizer, grads, trainable_variables)
            t2 = time.perf_counter()
            if traced is None:
                traced = traced_steps.tracing(hook.backend)
            if not traced(grads):
                hook.step(optimizer=id(optimizer))
                hook.own(t1 - t0, t2)
            else:
                hook.traced(traced_steps.graph_step(hook, optimizer=id(optimizer)))
            return out

        setattr(optimizer_class, apply_name, apply)
        self._patch_datasets()
        self.backend = traced_steps.backend()
        if self.backend == "tensorflow":
            self._patch_gradient()

    def _patch_gradient(self) -> None:
        """Count the Keras optimizers the program makes, and take a tape's gradient outside
        fit() as the step of a program that made none. Once one is made, its steps are."""
        init_class, init_name = compat.owner(compat.KERAS_OPTIMIZER_INIT)
        tape_class, gradient_name = compat.owner(compat.TF_TAPE_GRADIENT)
        original_init = getattr(init_class, init_name)
        original_gradient = getattr(tape_class, gradient_name)
        executing_eagerly = compat.resolve(compat.TF_EXECUTING_EAGERLY)
        hook = self

        @functools.wraps(original_init)
        def init(optimizer: Any, *args: Any, **kwargs: Any) -> None:
            hook.optimizers += 1
            original_init(optimizer, *args, **kwargs)

        @functools.wraps(original_gradient)
        def gradient(tape: Any, *args: Any, **kwargs: Any) -> Any:
            if hook.in_fit or hook.optimizers:
                return original_gradient(tape, *args, **kwargs)
            t0 = time.perf_counter()
            hook._where(sys._getframe(1))
            hook.checkpoint()
            t1 = time.perf_counter()
            out = original_gradient(tape, *args, **kwargs)
            if executing_eagerly():
                t2 = time.perf_counter()
                hook.step(gradient=True)
                hook.own(t1 - t0, t2)
            else:
                hook.traced(traced_steps.graph_step(hook, gradient=True))
            return out

        setattr(init_class, init_name, init)
        setattr(tape_class, gradient_name, gradient)

    def _patch_datasets(self) -> None:
        try:
            dataset_class, iter_name = compat.owner(compat.TF_DATASET_ITER)  # DatasetV2.__iter__
            iterator_class, next_name = compat.owner(compat.TF_ITERATOR_NEXT)  # its __next__
        except ImportError:  # not TensorFlow's backend: epochs from --steps-per-epoch only
            return
        hook = self
        cardinality = compat.attribute(compat.TF_DATASET_CARDINALITY)
        original_iter = getattr(dataset_class, iter_name)
        original_next = getattr(iterator_class, next_name)

        def dataset_iter(ds: Any) -> Any:
            frame = sys._getframe(1)  # (Keras's own passes - predict(), train_on_batch() - no)
            if hook.in_fit or own_code.in_packages(frame.f_code.co_filename, compat.KERAS_OWN):
                return original_iter(ds)
            anchor = hook.session.anchor
            if hook.stopped and anchor is not None and inside(anchor, frame):
                hook.session.loop_left()  # the stopped loop's next pass: it gets nothing
                if not _in_a_for_loop(frame):
                    raise ProbeStop(hook.session.policy.reason or "the probe stopped")
                return iter(())
            it = original_iter(ds)
            hook._where(frame)
            try:
                it._probecast_generation = hook.generation
            except AttributeError:
                pass
            try:
                card = int(getattr(ds, cardinality)())
            except Exception:  # noqa: BLE001 - unknown cardinality
                card = -1
            key = id(ds)
            hook.last_iterated = (key, card)
            if not hook.session.started or hook.elsewhere is not None:
                hook._read_length_at(frame, ds, card)
            if hook.train_dataset is not None and key == hook.train_dataset:
                hook.epoch += 1  # a new pass over the training data: a new epoch
                hook.index = 0
            return it

        def iterator_next(it: Any) -> Any:
            if not hook.in_fit:
                if hook.stopped and getattr(it, "_probecast_generation", hook.generation) \
                        < hook.generation:
                    hook.session.loop_left()
                    if not _in_a_for_loop(sys._getframe(1)):  # next(it): no end it expects
                        raise ProbeStop(hook.session.policy.reason or "the probe stopped")
                    hook.leave_epochs(sys._getframe(1))
                    raise StopIteration  # the loop the probe ended runs out
                hook.checkpoint()
            return original_next(it)

        setattr(dataset_class, iter_name, dataset_iter)
        setattr(iterator_class, next_name, iterator_next)


def _in_a_for_loop(frame: Any) -> bool:
    """The line that asked for a pass iterates it in a ``for`` (which an empty pass ends), not
    ``next(iter(ds))``, which it would crash."""
    import linecache

    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
    return "for " in line or "for(" in line
