"""The DataLoader side of the PyTorch loops adapter: passes (an epoch, or validation), their
batches, and the stop.

``DataLoader.__iter__`` and its iterator's ``__next__`` are patched. A new pass over the loader
the steps consume is a new epoch; a pass over another loader between training steps is
validation. A pass over the training loader made on another line while its training pass is
still under way is no epoch either: the program evaluates on training batches (a loss estimate
on a few, between steps) - a side pass, timed as validation, its batches no step's. Once the
probe stopped, the training loader's iterators stop (StopIteration), and every loader iterated
again inside the stopped loop yields nothing, so the program's own loops run out. A
``next(iter(loader))`` there cannot end on an empty pass: on a loader training used (a batch
drawn each epoch to print its size) the loop is unwound (ProbeStop); on one it never used - a
callback's loader made at each epoch's end to draw a sample - it runs as usual.

Each loader is known by a key it keeps for its life (``loader_key``): ``id()`` is reused once
an object is collected, so a loader made again each epoch would pass for the last one.
"""

from __future__ import annotations

import itertools
import sys
import time
from typing import TYPE_CHECKING, Any

from .. import compat
from ..probe_session import ProbeSession, ProbeStop
from .torch_devices import asked_by_a_generator, in_a_for_loop

if TYPE_CHECKING:
    from .base import Trainers

MAX_EMPTY_PASSES = 10_000  # a loop that re-iterates its finished loaders forever is stopped
_KEYS = itertools.count(1)


def loader_key(obj: Any) -> int:
    """The loader's key, given at its first pass and kept on it for its life (id() where it
    keeps no attributes)."""
    try:
        held = vars(obj)
    except TypeError:  # no __dict__
        return id(obj)
    if "_probecast_key" not in held:
        held["_probecast_key"] = next(_KEYS)
    return int(held["_probecast_key"])


def pass_site(up: int) -> tuple[str, int, int] | None:
    """The line that asked for a new pass, ``up`` frames above this function (2: the caller
    of the patched ``__iter__``): its file, its function's first line and its own line - one
    per loop of the program's."""
    try:
        frame = sys._getframe(up)
    except ValueError:
        return None
    return frame.f_code.co_filename, frame.f_code.co_firstlineno, frame.f_lineno


def key_of(obj: Any) -> int | None:
    """The key a loader was given, if it was iterated (never gives one)."""
    try:
        key = vars(obj).get("_probecast_key")
    except TypeError:
        return None
    return key if isinstance(key, int) else None


class TorchData:
    """Mixed into TorchLoopsAdapter (whose attributes these are)."""

    session: ProbeSession
    loaders: dict[int, int | None]  # every loader iterated so far: len or None
    batch_sizes: dict[int, int]  # ... and its batch_size (0: none)
    train_loader: int | None  # the key of the loader the steps consume
    last_loader: int | None  # the loader whose iterator yielded last
    val: list[int] | None  # [loader, batches] of a validation pass under way
    epoch: int
    index: int
    batches_since_step: int
    first_batch_at: float | None
    stopped: bool
    empty_passes: int
    generation: int  # probe stops so far: an iterator made before the latest one ends
    unwind: bool
    wrapping: tuple[int, int] | None  # (loader, generation) of a library's pass drawing a batch
    trainers: Trainers
    trainers_at_stop: int
    sites: dict[int, Any]  # the line that made each loader's latest pass (pass_site)
    ran_out: set[int]  # loaders whose latest pass ran to its end
    side: Any  # the iterator of a side pass under way (its key negated in val)

    if TYPE_CHECKING:  # theirs: torch_phases', the adapter's
        def _in_stopped_loop(self, key: int) -> bool: ...

        def _timed(self, kind: str, epoch: int, count: int) -> bool: ...

        def own(self, since: float) -> None: ...

    def _patch_loaders(self) -> None:
        loader_class, iter_name = compat.owner(compat.TORCH_LOADER_ITER)  # DataLoader.__iter__
        iterator_class, next_name = compat.owner(compat.TORCH_LOADER_NEXT)  # its iterator's next
        hook = self
        original_iter = getattr(loader_class, iter_name)
        original_next = getattr(iterator_class, next_name)

        def loader_iter(loader: Any) -> Any:
            key = loader_key(loader)
            if hook._runs_dry(key, up=3):
                return iter(())
            it = original_iter(loader)
            try:
                n: int | None = len(loader)
            except TypeError:  # an iterable dataset without a length
                n = None
            key = hook._new_pass(key, n, getattr(loader, compat.TORCH_LOADER_BATCH_SIZE, None),
                                 pass_site(2))
            hook._tag(it, key, hook.generation)
            if key < 0:
                hook.side = it
            return it

        def iter_next(it: Any) -> Any:
            t0 = time.perf_counter()
            key = getattr(it, "_probecast_loader", None)
            if key is None and hook.wrapping is not None:  # made inside a library's pass
                key = hook._tag(it, *hook.wrapping)
            if hook.stopped and key is not None and key == hook.train_loader \
                    and getattr(it, "_probecast_generation", 0) < hook.generation:
                hook.session.loop_left()
                if hook.unwind:  # next(it) in a loop of the program's own: not its end
                    raise ProbeStop(hook.session.policy.reason or "the probe stopped")
                raise StopIteration  # training ends here: the epoch loop runs out
            if hook.first_batch_at is None:
                hook.first_batch_at = time.monotonic()  # the program asks for data: T_init ends
            t1 = time.perf_counter()
            try:
                batch = original_next(it)
            except StopIteration:
                if hook.val is not None and hook.val[0] == key:
                    hook._end_val()
                if key is not None:
                    hook.ran_out.add(key)
                raise
            t2 = time.perf_counter()
            hook._batch(key)
            hook.own(t2 - (t1 - t0))  # the hook's own: before the loader's next and after it
            return batch

        setattr(loader_class, iter_name, loader_iter)
        setattr(iterator_class, next_name, iter_next)

    def wrap_passes(self, loader_class: type, iter_name: str, batch_size: str) -> None:
        """A library's loader whose passes drive torch's iterators without DataLoader.__iter__
        (fastai's: a _SingleProcessDataLoaderIter over a stand-in of its own): each pass over
        it is a pass as a DataLoader's - its length, its batch size (``batch_size`` names it),
        the stop - and the torch iterator it makes inside the pass is that pass's."""
        original = getattr(loader_class, iter_name)
        if getattr(original, "_probecast", False):
            return
        hook = self

        def passes(loader: Any) -> Any:
            key = loader_key(loader)
            if hook._runs_dry(key, up=3):
                return
            try:
                n: int | None = len(loader)
            except TypeError:
                n = None
            hook._new_pass(key, n, getattr(loader, batch_size, None))
            inner, outer = original(loader), (key, hook.generation)
            try:
                while True:
                    saved, hook.wrapping = hook.wrapping, outer
                    try:
                        batch = next(inner)
                    except StopIteration:
                        return
                    finally:
                        hook.wrapping = saved
                    yield batch
            finally:
                inner.close()

        passes._probecast = True  # type: ignore[attr-defined]
        setattr(loader_class, iter_name, passes)

    def _runs_dry(self, key: int, up: int) -> bool:
        """A new pass over a loader inside the stopped loop yields nothing, so the program's
        own loops run out - unless a trainer was made since the stop (the next phase's fit()
        from the same line: fastai's fine_tune). ``up``: frames up to the line that asked."""
        if not (self.stopped and len(self.trainers.made) <= self.trainers_at_stop
                and self._in_stopped_loop(key)) or self.trainers.leaving():
            return False  # (a trainer leaving its loop by itself: its handlers' passes run whole)
        in_for = in_a_for_loop(up)
        if not (in_for or key in self.loaders) or (
                key != self.train_loader and asked_by_a_generator(up)):
            return False  # (a wrapper's generator over validation data: its pass runs whole)
        self.empty_passes += 1
        self.session.loop_left()
        # next(iter(loader)) is not a for loop that an empty pass ends: it would crash
        if self.empty_passes > MAX_EMPTY_PASSES or not in_for:
            raise ProbeStop(self.session.policy.reason or "the probe stopped")
        return True

    def _tag(self, it: Any, key: int, generation: int) -> int:
        """The iterator is a pass over the loader ``key``, made at ``generation``."""
        try:
            it._probecast_loader = key
            it._probecast_generation = generation
        except AttributeError:  # a custom iterator with __slots__: timed by steps only
            pass
        return key

    def _new_pass(self, key: int, n: int | None, batch_size: Any = None,
                  site: Any = None) -> int:
        """A new pass over the loader ``key``, made at ``site``; returns the key its iterator
        is tagged with (negated: a side pass over the training data, see _side_pass)."""
        if self._side_pass(key, site):
            self._end_val()
            self.val = [-key, 0]
            return -key
        if key == self.train_loader:
            self._end_val()
            if self.index > 0:  # a new pass over the training data: a new epoch
                self.epoch += 1
                self.index = 0
            self.batches_since_step = 0
        elif self.session.started and not self.stopped:
            self._end_val()
            self.val = [key, 0]
        if not self.session.started:  # batches a step consumes come from one pass: this one
            self.batches_since_step = 0  # (next(iter(loader)) to size a batch is no step's)
        self.loaders[key] = n
        self.batch_sizes[key] = batch_size if isinstance(batch_size, int) else 0
        self.sites[key] = site
        self.ran_out.discard(key)
        return key

    def _side_pass(self, key: int, site: Any) -> bool:
        """A pass over the training loader from another line than its training pass, which is
        still under way: the program evaluates on training batches (LLMs-from-scratch's
        ``calc_loss_loader(train_loader, ..., num_batches=1)`` every 5 steps) - no epoch, and
        its batches are no step's. A pass from the training pass's own line is the next epoch
        (the last one left by a break)."""
        return (key == self.train_loader and self.session.started and not self.stopped
                and site is not None and self.sites.get(key) is not None
                and site != self.sites[key] and key not in self.ran_out)

    def _adopt_side(self) -> bool:
        """The steps draw from the side pass (no step drew from the training pass since it
        began): it was the training's next pass after all - a second loop over the same data
        (a phase, a loop that breaks and goes on elsewhere). It becomes the training pass."""
        if not (self.val is not None and self.val[0] < 0 and self.val[1] > 0
                and self.last_loader == self.val[0] and self.batches_since_step == 0):
            return False
        key, batches = -self.val[0], self.val[1]
        self.val = None
        self._tag(self.side, key, getattr(self.side, "_probecast_generation", self.generation))
        self.last_loader, self.batches_since_step = key, batches
        if self.index > 0:
            self.epoch += 1
            self.index = 0
        return True

    def _own_side(self) -> int | None:
        """The loader the last batch came from, a side pass's made the training's own (a new
        phase's first step drew from it)."""
        key = self.last_loader
        if key is not None and key < 0:
            key = self.last_loader = -key
            self._tag(self.side, key, getattr(self.side, "_probecast_generation", self.generation))
        return key

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
                self._timed("val", self.epoch, batches)
