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

from .emit import Emitter
from .policy import StopPolicy
from .probe_session import ProbeMeta, ProbeSession, ProbeStop
from .timer import StepTimer


def ProbeCallback(*args, **kwargs):  # type: ignore[no-untyped-def]  # noqa: N802
    """Keras callback emitting schema-v2 events (Keras imported on first use)."""
    from .adapters.keras_callback import ProbeCallback as make

    return make(*args, **kwargs)


__all__ = ["Emitter", "ProbeCallback", "ProbeMeta", "ProbeSession", "ProbeStop", "StepTimer", "StopPolicy"]
