"""The probe agent: runs ON the candidate host with only the stdlib and the framework it times.

The launcher (``agent_main``, ``process``: the user's command as a child, its output kept apart
from the events, ``channel``: the events' own socket) puts the hook (``hook``, ``imports``) in
every Python process of the command; the hook builds the process's ``probe_session`` and installs
the framework adapters (``adapters/``; every framework name they touch in ``compat``). By hand:
``timer.StepTimer``, the Keras ``ProbeCallback``. Also: when to stop (``policy``, with
``steady``'s step statistics, shared with the model), the job's length read from the program
(``length``, ``loops``, ``values``), memory and out-of-memory (``memory``, ``limits``), hardware
samples (``sampler``), the events written (``emit``) against the schema (``schema``), built-in
workloads (``workloads``, ``torch_workloads``) and the zip it ships as (``bundle``).

Keep this package free of imports from the rest of probecast (it is shipped alone, as a directory
or a zip) and import frameworks lazily.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .emit import Emitter
    from .policy import StopPolicy
    from .probe_meta import ProbeMeta
    from .probe_session import ProbeSession, ProbeStop
    from .timer import StepTimer

# Loaded on first use (PEP 562): the app imports only ``steady`` of this package, and importing
# the session, its emitter and phases with it cost the app's first frame ~30 ms.
_LAZY = {"Emitter": "emit", "StopPolicy": "policy", "ProbeMeta": "probe_meta",
         "ProbeSession": "probe_session", "ProbeStop": "probe_session", "StepTimer": "timer"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def ProbeCallback(*args, **kwargs):  # type: ignore[no-untyped-def]  # noqa: N802
    """Keras callback emitting schema-v2 events (Keras imported on first use)."""
    from .adapters.keras_callback import ProbeCallback as make

    return make(*args, **kwargs)


__all__ = ["Emitter", "ProbeCallback", "ProbeMeta", "ProbeSession", "ProbeStop", "StepTimer", "StopPolicy"]
