"""What telling a traced step costs the step: the hop into Python and back, measured once.

A training step traced in a ``tf.function`` is told to the agent by a ``tf.py_function`` op the
hook adds to the graph (adapters/keras_loops.py). Each run of it, TensorFlow's executor hands
the op to Python - the GIL, the call, its empty result - and goes on when it returns. The
callback's own body is timed where it runs (the hook's time, ``hook_ms``); the hop around it
cannot be seen from inside, and the plain program never spends it: 0.04-0.08 ms a step on a
2-core EPYC (a 64-wide MLP's 0.23 ms step took 0.30 with it), +7 to +20 % of the traced PPO
shape's 0.45 ms steps.

So it is measured once, when the first step is traced, on the program's thread and in its
process - the same executor, the same GIL: a trivial ``tf.function`` with and without an empty
``py_function``, their calls interleaved, the difference of their medians. Its ~0.1 s is the
agent's own (taken off as the rest of its start-up); every traced step's own time then adds the
hop. Where it cannot be measured (a TensorFlow without these, an error), the hop is 0 s: the
step is as it was, nothing else changes.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from . import compat, imports

ROUNDS, CALLS = 5, 40  # interleaved rounds of calls to each function: ~0.1 s on a 2-core host
WARM = 10  # calls to each before timing (the first ones trace and warm the executor)

_hop: list[float | None] = [None]  # seconds, once measured


def hop_s() -> float:
    """The hop's seconds, 0.0 until measured (or where it could not be)."""
    return _hop[0] or 0.0


def measure_once(session: Any) -> None:
    """Measure the hop if it was not (from inside a function being traced too: the calls run
    eagerly, lifted out of its graph). The seconds that takes are the agent's own: in its
    start-up (init's ``agent_s``) before the first step, else in the step's (ProbeSession.own)."""
    if _hop[0] is not None:
        return
    _hop[0] = 0.0
    began = time.perf_counter()
    try:
        with compat.resolve(compat.TF_INIT_SCOPE)():
            _hop[0] = _measure(compat.resolve(compat.TF_FUNCTION),
                               compat.resolve(compat.TF_PY_FUNCTION),
                               compat.resolve(compat.TF_CONSTANT)(1.0))
    except Exception:  # noqa: BLE001 - no correction is better than a broken step
        _hop[0] = 0.0
    if session.started:
        session.own += time.perf_counter() - began
    else:
        imports.SPENT[0] += time.perf_counter() - began
    if _hop[0]:
        session.log("info", f"a traced step's call back into the agent costs {1000 * _hop[0]:.3f} "
                    "ms (measured here): the agent's own time, taken off each step")


def _measure(function: Any, py_function: Any, x: Any) -> float:
    def nothing() -> list[Any]:
        return []

    def one(v: Any) -> Any:
        return v + 1.0

    def told(v: Any) -> Any:
        py_function(nothing, [], [])
        return v + 1.0

    plain, hopped = function(one), function(told)

    times: dict[Any, list[float]] = {plain: [], hopped: []}
    for f in times:
        for _ in range(WARM):
            f(x)
    for _ in range(ROUNDS):
        for f, out in times.items():
            for _ in range(CALLS):
                t0 = time.perf_counter()
                f(x)
                out.append(time.perf_counter() - t0)
    return max(0.0, statistics.median(times[hopped]) - statistics.median(times[plain]))
