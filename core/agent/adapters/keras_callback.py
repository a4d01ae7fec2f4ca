"""ProbeCallback: the Keras callback that times one fit() - added by hand to ``callbacks=[...]``
(``from probecast.core.agent import ProbeCallback``), or by the Keras fit adapter (keras_fit.py)
to every fit() of an unchanged program. Built on first use, so importing the agent does not import
Keras (the agent runs on hosts with PyTorch only, too)."""

from __future__ import annotations

from typing import Any

from .. import compat
from ..emit import clean_metrics
from ..probe_session import ProbeSession, ProbeStop


class _ProbeCallbackMethods:
    """The callback's behaviour; `_make_callback_class` puts it on keras.callbacks.Callback.
    Its ``on_*`` methods are compat.KERAS_CALLBACK_HOOKS (the compat check holds them equal)."""

    def __init__(self, session: ProbeSession | None = None, raise_on_stop: bool = False,
                 fit_info: dict[str, Any] | None = None) -> None:
        super().__init__()
        if session is None:
            from ..probe_session import session_from_env

            session = session_from_env()
        self.session = session
        self.raise_on_stop = raise_on_stop
        self.fit_info = fit_info or {}
        self._epoch = 0
        self._test_batches = 0
        self._per_call = 1  # compile(steps_per_execution=N): a step is one call of N batches
        self._in_fit = False
        # fit() called in a loop: epochs are counted across calls
        self._base = int(self.fit_info.get("epoch_base", 0))
        self._initial = int(self.fit_info.get("initial_epoch", 0))

    def on_train_begin(self, logs: Any = None) -> None:
        self._in_fit = True
        p = self._params()
        batches = int(p.get(compat.KERAS_PARAMS_STEPS) or self.fit_info.get("steps_per_epoch") or 0)
        self._per_call = compat.keras_steps_per_execution(
            getattr(self, compat.KERAS_CALLBACK_MODEL, None))
        if self._per_call > 1 and not self.session.started:
            self.session.log("info", f"Keras runs {self._per_call} batches a call "
                             f"(steps_per_execution): a step is a call of {self._per_call} batches, "
                             f"{-(-batches // self._per_call)} an epoch")
        self.session.begin(
            steps_per_epoch=-(-batches // self._per_call),  # (the last call: what is left)
            val_steps=int(self.fit_info.get("val_steps") or 0),
            epochs=p.get(compat.KERAS_PARAMS_EPOCHS) or self.fit_info.get("epochs"),
            batch_size=self.fit_info.get("batch_size"),
            framework=compat.keras_framework(),
        )
        if self.fit_info.get("hint"):
            self.session.boundary_hint = self.fit_info.pop("hint")

    def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
        self._epoch = self._base + epoch - self._initial
        self.session.epochs_begun = max(self.session.epochs_begun, self._epoch + 1)

    def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
        if self.session.ended:
            return
        if self.session.step(self._epoch, batch // self._per_call):  # (batch: the call's last)
            # the metrics so far, for the History fit() returns (a program plots its "loss")
            self.session.last_metrics.update(clean_metrics(logs))
            if self.raise_on_stop:
                raise ProbeStop(self.session.policy.reason)
            setattr(getattr(self, compat.KERAS_CALLBACK_MODEL), compat.KERAS_MODEL_STOP, True)

    def on_test_begin(self, logs: Any = None) -> None:
        self._test_batches = 0

    def on_test_batch_end(self, batch: int, logs: Any = None) -> None:
        self._test_batches = max(self._test_batches + 1, batch + 1)  # a call's last batch's index

    def on_test_end(self, logs: Any = None) -> None:
        if self._in_fit and not self.session.ended:
            full = int(self.fit_info.get("val_steps") or 0)  # (a call's last index may pass it)
            self.session.val(self._epoch, min(self._test_batches, full or self._test_batches), logs)

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        if not self.session.ended:
            self.session.epoch_end(self._base + epoch - self._initial, logs)

    def on_train_end(self, logs: Any = None) -> None:
        self._in_fit = False
        if self.raise_on_stop or self.session.ended:
            return  # the hook decides how the run ends
        planned = self._params().get(compat.KERAS_PARAMS_EPOCHS)
        if self.session.stop_requested:
            self.session.finish("probe-done", self.session.policy.reason)
        elif planned is None or self.session.epochs_done >= int(planned):
            self.session.finish("complete")

    def _params(self) -> dict[str, Any]:
        """What fit() told its callbacks (Callback.params): its steps and epochs."""
        return getattr(self, compat.KERAS_CALLBACK_PARAMS, None) or {}


def _make_callback_class() -> type:
    base = compat.resolve(compat.KERAS_CALLBACK)
    return type("ProbeCallback", (_ProbeCallbackMethods, base), {
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
