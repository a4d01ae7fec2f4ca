"""What the PyTorch loops adapter asks torch beyond its patches: whether the steps run on CUDA
(so the clock waits for the device), rank 0's stop decision shared under torch.distributed, and
whether the program's line that asked for a new pass is a ``for`` loop. Every torch name from
compat; each question answers safely when torch cannot (never breaking the program)."""

from __future__ import annotations

import sys
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


def agree(stop: bool) -> bool:
    """Under torch.distributed: rank 0's decision, the same on every rank at the same step."""
    try:
        r = compat.resolve
        if not (r(compat.TORCH_DIST_AVAILABLE)() and r(compat.TORCH_DIST_INITIALIZED)()) \
                or r(compat.TORCH_DIST_WORLD_SIZE)() < 2:
            return stop
        device = r(compat.TORCH_DEVICE)
        device = (device("cuda", r(compat.TORCH_CUDA_DEVICE)())
                  if r(compat.TORCH_DIST_BACKEND)() == compat.TORCH_NCCL else device("cpu"))
        flag = r(compat.TORCH_TENSOR)([1 if stop and r(compat.TORCH_DIST_RANK)() == 0 else 0],
                                      device=device)
        r(compat.TORCH_DIST_ALL_REDUCE)(flag, r(compat.TORCH_DIST_MAX))  # (tensor, op)
        return bool(getattr(flag, compat.attribute(compat.TORCH_ITEM))())
    except Exception:  # noqa: BLE001 - never break the program's own collectives
        return stop


def in_a_for_loop() -> bool:
    """Whether the program's line that asked for a new pass iterates it in a ``for`` (which an
    empty pass ends) - not ``next(iter(loader))``, which it would crash. Called by the patched
    ``DataLoader.__iter__``: its caller is two frames up."""
    import linecache

    from ..loops import user_code

    frame = sys._getframe(2)  # who asked: loader_iter's caller
    if not user_code(frame.f_code.co_filename):
        return True  # a framework's own loop (Lightning, the Trainer, tqdm): ends on empty passes
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
    return "for " in line or "for(" in line
