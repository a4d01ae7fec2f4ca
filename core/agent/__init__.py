"""The probe agent: runs ON the candidate host with only the stdlib and a DL framework.

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
