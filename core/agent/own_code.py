"""Whose code a frame runs: the program's own, a library pip installed, or ours - and which
library runs the training loop for the program where it has none of its own. Stdlib only."""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
from collections.abc import Callable
from types import FrameType

_LIBRARY_ROOTS = tuple({os.path.realpath(p) + os.sep for p in (
    sysconfig.get_paths().get("purelib", ""), sysconfig.get_paths().get("platlib", ""),
    sysconfig.get_paths().get("stdlib", "")) if p})


def user_code(filename: str) -> bool:
    """The program's own code: not the standard library, not an installed package, not ours.
    A package is installed wherever pip put it: this interpreter's site-packages, any folder
    named site-packages or dist-packages (a user's ``pip install --user``), or a folder on
    PYTHONPATH that holds what pip records beside what it installs (``pip install --target``:
    its ``*.dist-info``)."""
    if not filename or filename.startswith("<"):
        return False
    path = os.path.realpath(filename)
    if any(path.startswith(root) for root in _LIBRARY_ROOTS + _installed_on_path(tuple(sys.path))):
        return False
    if any(part in ("site-packages", "dist-packages") for part in path.split(os.sep)):
        return False
    here = os.path.dirname(os.path.realpath(__file__))
    return not path.startswith(here + os.sep) and "probecast_agent" not in path


@functools.lru_cache(maxsize=8)
def _installed_on_path(entries: tuple[str, ...]) -> tuple[str, ...]:
    """The folders on sys.path, past the program's own (its first entry), pip installed into."""
    found = []
    for entry in entries[1:]:
        try:
            if entry and any(n.endswith(".dist-info") for n in os.listdir(entry)):
                found.append(os.path.realpath(entry) + os.sep)
        except OSError:
            continue
    return tuple(found)


def in_packages(filename: str, names: tuple[str, ...]) -> bool:
    """The file is one of these top-level packages', as this process imported them (Keras's
    own ``predict()`` iterating a dataset of its own: not the program's loop)."""
    for name in names:
        init = getattr(sys.modules.get(name), "__file__", None)
        if init and filename.startswith(os.path.dirname(init) + os.sep):
            return True
    return False


# Packages whose own loops are never the job's: the frameworks the adapters read (their trainers
# say the length), and what they call on the way to a step
FRAMEWORKS = frozenset({"torch", "keras", "tensorflow", "tf_keras", "lightning", "pytorch_lightning",
                        "lightning_fabric", "transformers", "accelerate", "fastai", "fastcore",
                        "keras_tuner", "optuna", "ignite", "numpy", "tqdm", "sklearn", "joblib"})


def trainer_library(frame: FrameType | None) -> Callable[[str], bool] | None:
    """The library that runs the training loop for the program (skorch's ``NeuralNet.fit``, a
    trainer of a package the agent has no adapter for): the first package up the stack from the
    step that is neither a framework (FRAMEWORKS) nor the program - its files and the program's
    are then read for loops, as the program's own. None where the program's code comes first."""
    roots = sorted({os.path.realpath(p) for p in sys.path[1:] if p}, key=len, reverse=True)
    depth = 0
    while frame is not None and depth < 60:
        depth += 1
        name = frame.f_code.co_filename
        if user_code(name):
            return None
        path = os.path.realpath(name)
        root = next((r for r in roots if path.startswith(r + os.sep)), None)
        top = path[len(root) + 1:].split(os.sep)[0] if root else ""
        if top and top not in FRAMEWORKS and not top.endswith(".py") and "probecast" not in top:
            package = os.path.join(root or "", top) + os.sep
            return lambda f: user_code(f) or os.path.realpath(f).startswith(package)
        frame = frame.f_back
    return None
