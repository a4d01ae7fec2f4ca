"""Keras timing: ProbeCallback for explicit use, and a hook that injects it into every Model.fit.

Only imported when Keras is used; Keras itself is imported lazily (the agent runs on hosts with
PyTorch only, too).
"""

from __future__ import annotations

import math
from typing import Any

from .imports import OnError
from .probe_session import ProbeSession, ProbeStop


def _keras() -> Any:
    import keras

    return keras


def _length(x: Any) -> int | None:
    if x is None:
        return None
    if isinstance(x, dict):
        x = next(iter(x.values()), None)
    if isinstance(x, (list, tuple)) and x and hasattr(x[0], "shape"):
        x = x[0]
    shape = getattr(x, "shape", None)
    if shape is not None and len(shape) > 0 and shape[0] is not None:
        return int(shape[0])
    try:
        card = int(x.cardinality())  # tf.data.Dataset
        return card if card >= 0 else None
    except Exception:  # noqa: BLE001 - anything without a usable cardinality
        pass
    try:
        return len(x)
    except TypeError:
        return None


def _is_batched_source(x: Any) -> bool:
    """tf.data datasets, generators and PyDatasets yield batches; arrays do not."""
    return not hasattr(x, "shape") and not isinstance(x, (list, tuple, dict))


class _ProbeCallbackMethods:
    """The callback's behaviour; `_make_callback_class` puts it on keras.callbacks.Callback."""

    params: Any  # set by Keras (Callback.set_params / set_model)
    model: Any

    def __init__(self, session: ProbeSession | None = None, raise_on_stop: bool = False,
                 fit_info: dict[str, Any] | None = None) -> None:
        super().__init__()
        if session is None:
            from .probe_session import session_from_env

            session = session_from_env()
        self.session = session
        self.raise_on_stop = raise_on_stop
        self.fit_info = fit_info or {}
        self._epoch = 0
        self._test_batches = 0
        self._in_fit = False
        # fit() called in a loop: epochs are counted across calls
        self._base = int(self.fit_info.get("epoch_base", 0))
        self._initial = int(self.fit_info.get("initial_epoch", 0))

    def on_train_begin(self, logs: Any = None) -> None:
        self._in_fit = True
        p = self.params or {}
        self.session.begin(
            steps_per_epoch=int(p.get("steps") or self.fit_info.get("steps_per_epoch") or 0),
            val_steps=int(self.fit_info.get("val_steps") or 0),
            epochs=p.get("epochs") or self.fit_info.get("epochs"),
            batch_size=self.fit_info.get("batch_size"),
            framework=f"keras {_keras().__version__}",
        )
        if self.fit_info.get("hint"):
            self.session.boundary_hint = self.fit_info.pop("hint")

    def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
        self._epoch = self._base + epoch - self._initial
        self.session.epochs_begun = max(self.session.epochs_begun, self._epoch + 1)

    def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
        if self.session.ended:
            return
        if self.session.step(self._epoch, batch):
            if self.raise_on_stop:
                raise ProbeStop(self.session.policy.reason)
            self.model.stop_training = True

    def on_test_begin(self, logs: Any = None) -> None:
        self._test_batches = 0

    def on_test_batch_end(self, batch: int, logs: Any = None) -> None:
        self._test_batches += 1

    def on_test_end(self, logs: Any = None) -> None:
        if self._in_fit and not self.session.ended:
            self.session.val(self._epoch, self._test_batches, logs)

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        if not self.session.ended:
            self.session.epoch_end(self._base + epoch - self._initial, logs)

    def on_train_end(self, logs: Any = None) -> None:
        self._in_fit = False
        if self.raise_on_stop or self.session.ended:
            return  # the hook decides how the run ends
        planned = self.params.get("epochs") if self.params else None
        if self.session.stop_requested:
            self.session.finish("probe-done", self.session.policy.reason)
        elif planned is None or self.session.epochs_done >= int(planned):
            self.session.finish("complete")


def _make_callback_class() -> type:
    keras = _keras()
    return type("ProbeCallback", (_ProbeCallbackMethods, keras.callbacks.Callback), {
        "__doc__": """Add to ``callbacks=[...]`` to emit schema-v2 timing events for this fit.

        In explicit use the stop policy ends training through ``model.stop_training``; the hook
        (zero-code mode) raises ProbeStop instead, so the validation can be timed on a bounded
        number of batches rather than the whole validation set.
        """,
        "__module__": __name__,
    })


_CALLBACK_CLASS: type | None = None


def ProbeCallback(*args: Any, **kwargs: Any) -> Any:  # noqa: N802 - reads like the class it makes
    """The Keras callback (built on first use so importing the agent does not import Keras)."""
    global _CALLBACK_CLASS
    if _CALLBACK_CLASS is None:
        _CALLBACK_CLASS = _make_callback_class()
    return _CALLBACK_CLASS(*args, **kwargs)


_FIT_POSITIONAL = ("x", "y", "batch_size", "epochs")


def fit_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """What a probe needs from a Model.fit call: batch size, epochs, steps and validation."""
    named = dict(zip(_FIT_POSITIONAL, args))
    named.update(kwargs)
    x = named.get("x")
    batch_size = named.get("batch_size")
    batched = _is_batched_source(x)
    if batch_size is None and not batched:
        batch_size = 32  # Keras' default for arrays
    epochs = int(named.get("epochs", 1))
    steps = named.get("steps_per_epoch")
    val_data = named.get("validation_data")
    val_split = float(named.get("validation_split") or 0.0)
    n = _length(x)
    val_x = val_y = None
    if val_data is not None:
        if isinstance(val_data, tuple):
            val_x = val_data[0]
            val_y = val_data[1] if len(val_data) > 1 else None
        else:
            val_x = val_data
    val_steps = named.get("validation_steps")
    if val_steps is None and val_data is not None:
        vn = _length(val_x)
        if vn is not None:
            vb = named.get("validation_batch_size") or batch_size
            val_steps = vn if _is_batched_source(val_x) else math.ceil(vn / (vb or 32))
    if val_split and n and not batched:
        n_val = int(n * val_split)
        val_steps = val_steps or math.ceil(n_val / (batch_size or 32))
        n = n - n_val
    if steps is None and n is not None and not batched and batch_size:
        steps = math.ceil(n / batch_size)
    elif steps is None and batched:
        steps = n
    return {
        "batch_size": batch_size, "epochs": epochs, "steps_per_epoch": steps,
        "val_steps": val_steps, "val_x": val_x, "val_y": val_y, "val_split": val_split,
        "x": x, "y": named.get("y"), "initial_epoch": int(named.get("initial_epoch") or 0),
        "callbacks": list(named.get("callbacks") or []),
    }


def _validation_source(info: dict[str, Any]) -> tuple[Any, Any]:
    if info["val_x"] is not None:
        return info["val_x"], info["val_y"]
    if info["val_split"] and info["x"] is not None and hasattr(info["x"], "shape"):
        n = info["x"].shape[0]
        cut = n - int(n * info["val_split"])
        y = info["y"]
        return info["x"][cut:], (y[cut:] if y is not None else None)
    return None, None


def time_validation(model: Any, session: ProbeSession, info: dict[str, Any],
                    max_batches: int) -> None:
    """Three bounded validation passes of k, k and 2k batches, emitted as partial `val` events.

    The first carries the one-off tracing; the two later lengths let the estimator separate a
    pass's fixed cost from its per-batch cost (core.stats.ProbeState.validation_times).
    """
    vx, vy = _validation_source(info)
    if vx is None or max_batches <= 0:
        return
    total = int(info["val_steps"] or 2 * max_batches)
    k = max(1, min(max_batches, total // 2))
    epoch = session.epoch or 0
    for steps in (k, k, min(2 * k, total)):
        kwargs: dict[str, Any] = {"verbose": 0, "steps": steps, "return_dict": True}
        px, py = vx, vy
        if not _is_batched_source(vx):
            kwargs["batch_size"] = info["batch_size"]
            px = vx[: steps * info["batch_size"]]
            py = vy[: steps * info["batch_size"]] if vy is not None else None
        metrics = model.evaluate(px, py, **kwargs) if py is not None else model.evaluate(px, **kwargs)
        session.val(epoch, steps, metrics if isinstance(metrics, dict) else {})


STALL_HINT = (
    "this epoch boundary cost {cost:.1f}s ({steps:.0f} steady steps' worth). Keras 3 re-creates "
    "its tf.data iterator every epoch, and tearing down the old one waits for the tf.data "
    "autotuner's next wake-up (10 ms after the iterator's first batch, then 20, 40 ms ... "
    "doubling up to every 60 s): up to an epoch's time, idle. To avoid it, feed fit() a "
    "tf.data.Dataset with tf.data.Options().autotune.enabled = False (boundary 0.07 s instead "
    "of 7.9 s in a test here); passing steps_per_epoch does not help."
)


class KerasHook:
    """Wraps keras.Model.fit so an unchanged training script is probed.

    Probe mode: when the stop policy fires, ProbeStop leaves fit cleanly; the hook marks the end
    of training (`done`: its dt is the fit's teardown), times a bounded validation, and returns
    a History - so the program's post-training code runs and is timed (the agent's `end`).
    Later fit() calls return at once. Epochs are counted across fit() calls.
    """

    def __init__(self, session: ProbeSession, val_batches: int = 5,
                 steps_per_epoch: int | None = None) -> None:
        self.session = session
        self.val_batches = val_batches
        self.steps_per_epoch = steps_per_epoch
        self.installed = False
        self.calls = 0
        self.said: set[str] = set()
        self.loops: Any = None  # keras_loops.LoopHook: custom loops (optimizer steps)

    def _say(self, code: str, level: str, msg: str) -> None:
        if code not in self.said:
            self.said.add(code)
            self.session.log(level, msg, code=code)

    def install(self) -> None:
        if self.installed:
            return
        from .compat import KERAS_FIT, owner

        keras = _keras()
        model_class, fit_name = owner(KERAS_FIT)  # keras.Model.fit
        original = getattr(model_class, fit_name)
        if self.session.under_agent:
            self._install_loops()
        hook = self

        def fit(model: Any, *args: Any, **kwargs: Any) -> Any:
            return hook.fit(keras, original, model, args, kwargs)

        fit.__wrapped__ = original  # type: ignore[attr-defined]
        setattr(model_class, fit_name, fit)
        self.installed = True

    def _install_loops(self) -> None:
        try:
            from .keras_loops import LoopHook

            self.loops = LoopHook(self.session, self.steps_per_epoch)
            self.loops.install()
        except Exception as exc:  # noqa: BLE001 - fit() is still timed without it
            self.session.log("warning", f"custom-loop timing unavailable: {exc!r}")
            self.loops = None

    def fit(self, keras: Any, original: Any, model: Any, args: tuple[Any, ...],
            kwargs: dict[str, Any]) -> Any:
        """One Model.fit call, probed: the callback added, the stop turned into a History."""
        session = self.session
        if session.trained:  # the probe has what it needs: training is skipped from here
            self._say("skipped-fit", "info", "fit() called after the probe stopped: it "
                      "returned at once (no training); the program's other work runs")
            return _history(keras, model, {})
        if session.emitter.ended:
            return original(model, *args, **kwargs)
        info = self._fit_info(args, kwargs)
        callback = ProbeCallback(session, raise_on_stop=not session.policy.full, fit_info=info)
        kwargs["callbacks"] = [*list(kwargs.pop("callbacks", None) or []), callback]
        if self.loops is not None:
            self.loops.in_fit += 1
        try:
            history = original(model, *args, **kwargs)
        except ProbeStop as stop:
            if not session.under_agent:  # in-process use: time validation, then leave
                try:
                    time_validation(model, session, info, self.val_batches)
                finally:
                    session.finish("probe-done", str(stop))
                raise SystemExit(0) from None
            session.mark_done("probe-done", str(stop))  # its dt: the fit's teardown
            time_validation(model, session, info, self.val_batches)
            return _history(keras, model, session.last_metrics)
        finally:
            if self.loops is not None:
                self.loops.in_fit -= 1
        if session.policy.full and not session.emitter.ended:
            session.mark_done("complete")
        return history

    def _fit_info(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """This call's arguments, counted across calls, with what the user should be told."""
        self.calls += 1
        info = fit_arguments(args, kwargs)
        info["epoch_base"] = self.session.epochs_begun
        if self.calls == 2:
            self._say("fit-loop", "warning", "fit() called again: epochs are counted "
                      "across calls; the job's epochs are the loops' around the call when they "
                      "can be read (the plan says so), else give them (probe --epochs / "
                      "[probe] epochs)")
        early = [type(c).__name__ for c in info["callbacks"]
                 if type(c).__name__ in ("EarlyStopping", "TerminateOnNaN")]
        if early:
            self._say("early-stop", "warning", f"{', '.join(early)} may end training before "
                      "the planned epochs: the estimate for them is an upper bound")
        if self.calls == 1:
            info["hint"] = STALL_HINT
            self._plan_calls(info)
        return info

    def _plan_calls(self, info: dict[str, Any]) -> None:
        """fit() in a loop: the loops around the call say how many calls the program makes, so
        the job's epochs are that many times this call's (length.py)."""
        import sys

        from .length import calls_around

        found = calls_around(sys._getframe())  # the loops around the program's fit() call
        if found is None:
            return
        calls, source = found
        epochs = int(info.get("epochs") or 1)
        if calls > 1:
            self.session.plan(epochs=calls * epochs,
                              source=f"{source} x fit(epochs={epochs})")


def _history(keras: Any, model: Any, metrics: dict[str, Any]) -> Any:
    """What fit() returns when the probe ended training: a History with the last metrics seen,
    so code reading history.history[...][-1] after training goes on."""
    history = keras.callbacks.History()
    history.set_model(model)
    history.history = {k: [v] for k, v in metrics.items()}
    history.epoch = [0] if metrics else []
    return history


def install_import_hook(hook: KerasHook, on_error: OnError | None = None) -> None:
    """Patch Model.fit as soon as the user's script imports keras (or tensorflow); a patch that
    fails goes to ``on_error`` (imports.when_imported), never to the program's import."""
    from .imports import when_imported

    when_imported("keras", hook.install, on_error)
