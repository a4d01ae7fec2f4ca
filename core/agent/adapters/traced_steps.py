"""A Keras optimizer step that runs inside a trace, not eagerly: a ``tf.function``'s graph on
TensorFlow's backend, a ``jax.jit`` on jax's. The hook cannot time it where it is traced (that
runs once); it adds a call back into Python that runs at every run of the traced step - a
``tf.py_function`` op (after the variable updates: tf.function orders stateful ops as written;
its hop measured once, graph_hop.py), or a ``jax.debug.callback``. On the torch backend the step
runs eagerly. Nothing here imports a framework the program did not: each is resolved through
compat on the backend Keras runs."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from .. import compat, graph_hop
from ..probe_session import ProbeSession


def backend() -> str:
    """Keras' backend: "tensorflow", "torch", "jax"."""
    return str(compat.resolve(compat.KERAS_BACKEND)())


def tracing(keras_backend: str) -> Callable[[Any], bool]:
    """A test of an optimizer's gradients: are they being traced (a tf.function's graph, a
    jax.jit's tracers) rather than run eagerly? On the torch backend never."""
    if keras_backend == "tensorflow":
        executing_eagerly = compat.resolve(compat.TF_EXECUTING_EAGERLY)
        return lambda grads: not executing_eagerly()
    if keras_backend == "jax":
        tracer = compat.resolve(compat.JAX_TRACER)
        return lambda grads: any(isinstance(g, tracer) for g in grads)
    return lambda grads: False


def call_back(keras_backend: str, run: Callable[[], Any], session: ProbeSession) -> None:
    """Put ``run`` in the step being traced, to be called at each of its runs."""
    if keras_backend == "jax":  # (no hop measured: its ~0.05 ms a step stays in the step)
        def each_run() -> None:  # jax's callbacks return nothing
            run()

        compat.resolve(compat.JAX_DEBUG_CALLBACK)(each_run)
        return
    graph_hop.measure_once(session)
    compat.resolve(compat.TF_PY_FUNCTION)(run, [], [])  # (func, inp, Tout)


def graph_step(hook: Any, gradient: bool = False, optimizer: int | None = None,
               ) -> Callable[[], list[Any]]:
    """What the traced step calls back: the hook's step (KerasLoopsAdapter.step), its own time
    with the hop around the call."""
    def run() -> list[Any]:  # the graph waits for it: its time is the hook's (hook_ms)
        t0 = time.perf_counter()
        if not (gradient and hook.optimizers):  # (one made since the function was traced)
            hook.step(gradient=gradient, optimizer=optimizer)
        hook.own(graph_hop.hop_s(), t0)  # (the hop around this call too)
        return []

    return run

