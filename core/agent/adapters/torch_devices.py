"""What the PyTorch loops adapter asks torch beyond its patches: whether the steps run on CUDA
(then they are timed by the device's own events: CudaStepClock), rank 0's stop decision shared
under torch.distributed, and whether the program's line that asked for a new pass is a ``for``
loop. Every torch name from compat; each question answers safely when torch cannot (never
breaking the program)."""

from __future__ import annotations

import sys
import time
from typing import Any

from .. import compat


def cuda_in_use() -> bool:
    try:
        return bool(compat.resolve(compat.TORCH_CUDA_INITIALIZED)())
    except Exception:  # noqa: BLE001
        return False


def on_cuda(optimizer: Any) -> bool:
    """Whether an optimizer's parameters live on a CUDA device."""
    is_cuda = compat.attribute(compat.TORCH_IS_CUDA)
    try:
        return any(getattr(p, is_cuda)
                   for group in getattr(optimizer, compat.TORCH_OPTIMIZER_GROUPS)
                   for p in group[compat.TORCH_GROUP_PARAMS])
    except Exception:  # noqa: BLE001
        return False


_RESOLVED: dict[str, Any] = {}


def _resolve(name: str) -> Any:
    """compat.resolve, once per name: agree runs at every step, and resolving is most of it."""
    if name not in _RESOLVED:
        _RESOLVED[name] = compat.resolve(name)
    return _RESOLVED[name]


_INITIALIZED: list[Any] = []  # torch.distributed.is_initialized where it is available


def _distributed() -> bool:
    """torch.distributed is initialized (asked at every step: its function resolved once)."""
    if not _INITIALIZED:
        r = _resolve
        _INITIALIZED.append(r(compat.TORCH_DIST_INITIALIZED) if r(compat.TORCH_DIST_AVAILABLE)()
                            else (lambda: False))
    return bool(_INITIALIZED[0]())


# Rank 0's decision reaches the other ranks at agreed steps, not at every step: a collective a
# step (and on NCCL the host's wait for the device it implies) made a torchrun job of 1 ms
# steps 1.6x slower under the agent. Each agreement also says, from rank 0's pace, how many
# steps the next one comes after: about AGREE_EVERY_S of steps (the stop comes that much late).
AGREE_EVERY_S = 0.05
AGREE_MAX_GAP = 1000


class _Agreement:
    """Every rank counts its steps (DDP's ranks take the same number) and meets at the same
    counts: ``due`` is the step of the next agreement, ``gap`` the steps since the last."""

    def __init__(self) -> None:
        self.count, self.due, self.gap, self.since = 0, 1, 1, 0.0


_AGREEMENT = _Agreement()


def agree(stop: bool) -> bool:
    """Under torch.distributed: rank 0's decision, the same on every rank at the same step (at
    the next agreed step: a rank 0 that decided to stop says so there, its session asking on)."""
    try:
        r = _resolve
        if not _distributed() or r(compat.TORCH_DIST_WORLD_SIZE)() < 2:
            return stop
        a = _AGREEMENT
        a.count += 1
        if a.count < a.due:
            return False
        lead = r(compat.TORCH_DIST_RANK)() == 0
        gap = 1
        if lead and a.since:  # rank 0's pace over the steps since the last agreement
            per_step = max(time.perf_counter() - a.since, 1e-9) / a.gap
            gap = max(1, min(AGREE_MAX_GAP, int(AGREE_EVERY_S / per_step)))
        device = r(compat.TORCH_DEVICE)
        device = (device("cuda", r(compat.TORCH_CUDA_DEVICE)())
                  if r(compat.TORCH_DIST_BACKEND)() == compat.TORCH_NCCL else device("cpu"))
        flag = r(compat.TORCH_TENSOR)([1 if stop and lead else 0, gap if lead else 0],
                                      device=device)
        r(compat.TORCH_DIST_ALL_REDUCE)(flag, r(compat.TORCH_DIST_MAX))  # (tensor, op)
        agreed, a.gap = getattr(flag, compat.attribute(compat.TORCH_TOLIST))()
        a.due, a.since = a.count + a.gap, time.perf_counter()
        return bool(agreed)
    except Exception:  # noqa: BLE001 - never break the program's own collectives
        return stop


def in_a_for_loop(up: int = 2) -> bool:
    """Whether the program's line that asked for a new pass iterates it in a ``for`` (which an
    empty pass ends) - not ``next(iter(loader))``, which it would crash. Called by the patched
    ``DataLoader.__iter__``: its caller is ``up`` frames up."""
    import linecache

    from ..own_code import user_code

    frame = sys._getframe(up)  # who asked: loader_iter's caller
    if not user_code(frame.f_code.co_filename):
        return True  # a framework's own loop (Lightning, the Trainer, tqdm): ends on empty passes
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
    return "for " in line or "for(" in line or _stored_then_iterated(frame)


def asked_by_a_generator(up: int = 2) -> bool:
    """Whether the code that asked for a new pass is a generator's (a wrapper yielding the
    loader's batches: timm's PrefetchLoader, one batch behind) - one that may not survive a pass
    with no batches at all (its last ``yield input, target`` after the loop). ``up`` as for
    in_a_for_loop."""
    import inspect

    return bool(sys._getframe(up).f_code.co_flags & inspect.CO_GENERATOR)


def _stored_then_iterated(frame: Any) -> bool:
    """``batches = iter(loader)`` and, in the same code, ``for b in batches:`` - a wrapper's
    generator (pytorch/tutorials' nn_tutorial: WrappedDataLoader.__iter__). Its empty pass
    ends that for; raised through it, the stop ended the program before its later loops."""
    import dis

    try:
        code = list(dis.get_instructions(frame.f_code))
    except Exception:  # noqa: BLE001 - unreadable code: not known to be a for
        return False
    # the call's own instructions first (f_lasti may be 3.11's PRECALL before its CALL)
    after = [i for i in code if i.offset > frame.f_lasti
             and not i.opname.startswith(("PRECALL", "CALL", "CACHE", "KW_NAMES"))]
    if not after or after[0].opname not in ("STORE_FAST", "STORE_NAME", "STORE_GLOBAL"):
        return False
    name = after[0].argval
    return any(a.opname.startswith(("LOAD_FAST", "LOAD_NAME", "LOAD_GLOBAL")) and a.argval == name
               and b.opname == "GET_ITER" for a, b in zip(code, code[1:]))


# Steps the host may run ahead of the device before the clock waits for the oldest one: far
# more than a loop that prefetches keeps in flight, so the wait never empties the device's queue.
MAX_IN_FLIGHT = 64


class CudaStepClock:
    """When each step ended on the device, read without stopping the program.

    A ``torch.cuda.synchronize()`` after every step would time it exactly, but it empties the
    device's queue each time: the host cannot prepare the next batch while the device works, so
    every probed step runs slower than the program's own (measured on an H100: +2.8 % a step on
    nanoGPT). Instead each step records a CUDA event; a step is told (with ``ready``) once the
    device has reached its event, at the monotonic time ``anchor + elapsed_time(anchor, event)``.
    The anchor is one synchronize at the first step (where T_init and T_it1 meet) and again at
    each ``drain`` (the probe's stop, the program's exit). Times are clamped to the host's clock,
    so the emitter's dt partition of the run holds whatever the device's clock says.
    """

    def __init__(self, event: Any, synchronize: Any, now: Any = None) -> None:
        import time

        self._event = event  # torch.cuda.Event
        self._synchronize = synchronize
        self._now = now or time.monotonic
        self._anchor: Any = None
        self._anchor_at = 0.0
        # (its CUDA event - or the host's time, where none could be recorded - and what it ends)
        self.pending: list[tuple[Any, Any]] = []  # oldest first
        self._told = 0.0  # the latest time told
        self.syncs = 0  # full device synchronisations: one per anchor

    def anchor(self) -> None:
        self._synchronize()
        self.syncs += 1
        self._anchor = self._event(enable_timing=True)
        self._anchor.record()
        self._anchor_at = self._now()

    def mark(self, what: Any) -> None:
        """Something (a step, a validation pass) ends here in the device's stream."""
        try:
            if self._anchor is None:
                self.anchor()
            event: Any = self._event(enable_timing=True)
            event.record()
        except Exception:  # noqa: BLE001 - a stream being captured (CUDA graphs), a CUDA error:
            event = float(self._now())  # this one ends on the host's clock; the program runs on
        self.pending.append((event, what))
        oldest = self.pending[0][0]
        if len(self.pending) > MAX_IN_FLIGHT and not isinstance(oldest, float):
            oldest.synchronize()  # the host is far ahead: wait for the oldest step only

    def ready(self) -> list[tuple[float, Any]]:
        """What the device has finished, oldest first, each with the monotonic time it ended."""
        out: list[tuple[float, Any]] = []
        while self.pending and self._done(self.pending[0][0]):
            event, what = self.pending.pop(0)
            out.append((self._time_of(event), what))
        return out

    def _done(self, event: Any) -> bool:
        try:
            return isinstance(event, float) or bool(event.query())
        except Exception:  # noqa: BLE001 - the device failed: the program's own call says so
            return False

    def drain(self) -> list[tuple[float, Any]]:
        """Everything still in flight (one synchronize), and a fresh anchor for what follows."""
        if not self.pending:
            return []
        pending, self.pending = self.pending, []
        try:
            self._synchronize()
            self.syncs += 1
            out = [(self._time_of(event), what) for event, what in pending]
            self._anchor = self._event(enable_timing=True)
            self._anchor.record()
            self._anchor_at = self._now()
        except Exception:  # noqa: BLE001 - a failed device at the exit: its steps go untold
            return []
        return out

    def _time_of(self, event: Any) -> float:
        """When it ended: never past the host's clock, never before what was told before it."""
        now = float(self._now())
        if isinstance(event, float):  # no device event: the host's time when it was marked
            at = event
        elif self._anchor is None:
            at = now
        else:
            seconds = float(self._anchor.elapsed_time(event)) / 1000.0  # elapsed_time: ms
            at = self._anchor_at + max(0.0, seconds)
        self._told = max(self._told, min(at, now))
        return self._told


def cuda_step_clock() -> CudaStepClock | None:
    """The device clock for steps on CUDA; None where torch cannot give one."""
    try:
        return CudaStepClock(compat.resolve(compat.TORCH_CUDA_EVENT),
                             compat.resolve(compat.TORCH_CUDA_SYNCHRONIZE))
    except Exception:  # noqa: BLE001 - a torch without CUDA events: steps timed on the host
        return None
