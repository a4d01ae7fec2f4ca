"""The Keras fit adapter: every Model.fit of an unchanged program probed - ProbeCallback
(keras_callback.py) added to its callbacks, the probe's stop turned into a History so the
program's post-training code runs, a bounded validation timed after the stop.

Only imported when Keras is used; Keras itself is reached through compat's names once the program
has imported it (the agent runs on hosts with PyTorch only, too).
"""

from __future__ import annotations

import gc
import math
import sys
import time
from typing import TYPE_CHECKING, Any

from .. import compat
from ..anchors import inside, loop_anchor
from ..probe_session import ProbeSession, ProbeStop
from .keras_callback import ProbeCallback

if TYPE_CHECKING:
    from .keras_loops import KerasLoopsAdapter
    from .keras_tuner import KerasTunerAdapter

# Model.fit's parameters, by compat's names (the compat check holds them to its signature)
_X, _Y, _BATCH_SIZE, _EPOCHS = compat.KERAS_FIT_POSITIONAL
(_STEPS_PER_EPOCH, _VALIDATION_DATA, _VALIDATION_SPLIT, _VALIDATION_STEPS, _VALIDATION_BATCH_SIZE,
 _INITIAL_EPOCH, _CALLBACKS, _VALIDATION_FREQ) = compat.KERAS_FIT_NAMED
_E_BATCH_SIZE, _E_STEPS, _E_VERBOSE, _E_RETURN_DICT = compat.KERAS_EVALUATE_NAMED


def _length(x: Any) -> int | None:
    if x is None:
        return None
    if isinstance(x, dict):
        x = next(iter(x.values()), None)
    if isinstance(x, (list, tuple)) and x and hasattr(x[0], compat.ARRAY_SHAPE):
        x = x[0]
    shape = getattr(x, compat.ARRAY_SHAPE, None)
    if shape is not None and len(shape) > 0 and shape[0] is not None:
        return int(shape[0])
    try:
        card = int(getattr(x, compat.attribute(compat.TF_DATASET_CARDINALITY))())  # tf.data
        return card if card >= 0 else None
    except Exception:  # noqa: BLE001 - anything without a usable cardinality
        pass
    try:
        return len(x)
    except TypeError:
        return None


def _is_batched_source(x: Any) -> bool:
    """tf.data datasets, generators and PyDatasets yield batches; arrays do not."""
    return not hasattr(x, compat.ARRAY_SHAPE) and not isinstance(x, (list, tuple, dict))


_FIT_POSITIONAL = ("x", "y", "batch_size", "epochs")


def fit_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """What a probe needs from a Model.fit call: batch size, epochs, steps and validation."""
    named = dict(zip(compat.KERAS_FIT_POSITIONAL, args))
    named.update(kwargs)
    x = named.get(_X)
    batch_size = named.get(_BATCH_SIZE)
    batched = _is_batched_source(x)
    if batch_size is None and not batched:
        batch_size = 32  # Keras' default for arrays
    epochs = int(named.get(_EPOCHS, 1))
    steps = named.get(_STEPS_PER_EPOCH)
    val_data = named.get(_VALIDATION_DATA)
    val_split = float(named.get(_VALIDATION_SPLIT) or 0.0)
    n = _length(x)
    val_x = val_y = None
    if val_data is not None:
        if isinstance(val_data, tuple):
            val_x = val_data[0]
            val_y = val_data[1] if len(val_data) > 1 else None
        else:
            val_x = val_data
    val_steps = named.get(_VALIDATION_STEPS)
    if val_steps is None and val_data is not None:
        vn = _length(val_x)
        if vn is not None:
            vb = named.get(_VALIDATION_BATCH_SIZE) or batch_size
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
        "x": x, "y": named.get(_Y), "initial_epoch": int(named.get(_INITIAL_EPOCH) or 0),
        "callbacks": list(named.get(_CALLBACKS) or []),
        "val_freq": named.get(_VALIDATION_FREQ) if val_data is not None or val_split else None,
    }


def _validation_source(info: dict[str, Any]) -> tuple[Any, Any]:
    if info["val_x"] is not None:
        return info["val_x"], info["val_y"]
    if info["val_split"] and info["x"] is not None and hasattr(info["x"], compat.ARRAY_SHAPE):
        n = getattr(info["x"], compat.ARRAY_SHAPE)[0]
        cut = n - int(n * info["val_split"])
        y = info["y"]
        return info["x"][cut:], (y[cut:] if y is not None else None)
    return None, None


def time_validation(model: Any, session: ProbeSession, info: dict[str, Any],
                    max_batches: int) -> None:
    """Three bounded validation passes of k, k and 2k batches, emitted as partial `val` events.

    The first carries the one-off tracing; the two later lengths let the estimator separate a
    pass's fixed cost from its per-batch cost (core/model/state.py: ProbeState.validation_times).
    """
    vx, vy = _validation_source(info)
    if vx is None or max_batches <= 0:
        return
    total = int(info["val_steps"] or 2 * max_batches)
    k = max(1, min(max_batches, total // 2))
    epoch = session.epoch or 0
    evaluate = getattr(model, compat.attribute(compat.KERAS_EVALUATE))
    for steps in (k, k, min(2 * k, total)):
        kwargs: dict[str, Any] = {_E_VERBOSE: 0, _E_STEPS: steps, _E_RETURN_DICT: True}
        px, py = vx, vy
        if not _is_batched_source(vx):
            kwargs[_E_BATCH_SIZE] = info["batch_size"]
            px = vx[: steps * info["batch_size"]]
            py = vy[: steps * info["batch_size"]] if vy is not None else None
        metrics = evaluate(px, py, **kwargs) if py is not None else evaluate(px, **kwargs)
        session.val(epoch, steps, metrics if isinstance(metrics, dict) else {})


STALL_HINT = (
    "this epoch boundary cost {cost:.1f}s ({steps:.0f} steady steps' worth). Keras 3 re-creates "
    "its tf.data iterator every epoch, and tearing down the old one waits for the tf.data "
    "autotuner's next wake-up (10 ms after the iterator's first batch, then 20, 40 ms ... "
    "doubling up to every 60 s): up to an epoch's time, idle. To avoid it, feed fit() a "
    "tf.data.Dataset with tf.data.Options().autotune.enabled = False (boundary 0.07 s instead "
    "of 7.9 s in a test here); passing steps_per_epoch does not help."
)


class KerasFitAdapter:
    """Wraps keras.Model.fit so an unchanged training script is probed.

    Probe mode: when the stop policy fires, ProbeStop leaves fit cleanly; the adapter marks the
    end of training (`done`: its dt is the fit's teardown), times a bounded validation, and
    returns a History - so the program's post-training code runs and is timed (the agent's
    `end`). Later fit() calls return at once. Epochs are counted across fit() calls. While a fit
    runs, ``loops`` (the custom-loop adapter) leaves its optimizer steps to the callback.

    Under the agent a later fit() called from elsewhere in the program (fit() then fit() again
    with other settings: a warm-up, a fine-tune) is the next phase, probed as the first was;
    the same call in a loop the probe stopped returns at once (phases: probe_session.py).
    """

    name: str = "Keras fit"
    modules: tuple[str, ...] = (compat.KERAS_MODULE,)

    def __init__(self, session: ProbeSession, val_batches: int = 5,
                 loops: KerasLoopsAdapter | None = None) -> None:
        self.session = session
        self.val_batches = val_batches
        self.installed = False
        self.calls = 0
        self.said: set[str] = set()
        self.loops = loops
        # when this phase's last fit() returned (its teardown done): the program's own work from
        # there to its next fit() call is that call's first step's `outside`
        self._returned_at: float | None = None
        self._completed_at: float | None = None  # the last fit() that ran to its own end
        self.searches: KerasTunerAdapter | None = None  # KerasTuner's: a search's fit() calls

    def _say(self, code: str, level: str, msg: str) -> None:
        if code not in self.said:
            self.said.add(code)
            self.session.log(level, msg, code=code)

    def install(self, module: str = compat.KERAS_MODULE) -> None:
        if self.installed:
            return
        model_class, fit_name = compat.owner(compat.KERAS_FIT)  # keras.Model.fit
        original = getattr(model_class, fit_name)
        hook = self

        def fit(model: Any, *args: Any, **kwargs: Any) -> Any:
            return hook.fit(original, model, args, kwargs)

        fit.__wrapped__ = original  # type: ignore[attr-defined]
        setattr(model_class, fit_name, fit)
        self.installed = True

    def fit(self, original: Any, model: Any, args: tuple[Any, ...],
            kwargs: dict[str, Any]) -> Any:
        """One Model.fit call, probed: the callback added, the stop turned into a History."""
        session = self.session
        if session.trained:  # the probe has what it needs: training is skipped from here
            self._say("skipped-fit", "info", "fit() called after the probe stopped: it "
                      "returned at once (no training); the program's other work runs")
            return _history(model, session.last_metrics)
        if session.emitter.ended:
            return original(model, *args, **kwargs)
        if not self._phase(sys._getframe(), args, kwargs):
            return self._skipped(model)
        if self._returned_at is not None:
            session.outside += time.monotonic() - self._returned_at
            self._returned_at = None
        info = self._fit_info(args, kwargs)
        callback = ProbeCallback(session, raise_on_stop=not session.policy.full, fit_info=info)
        kwargs[_CALLBACKS] = [*list(kwargs.pop(_CALLBACKS, None) or []), callback]
        if self.loops is not None:
            self.loops.in_fit += 1
        stopped: str | None = None
        try:
            history = original(model, *args, **kwargs)
        except ProbeStop as stop:
            stopped = str(stop)
        finally:
            if self.loops is not None:
                self.loops.in_fit -= 1
        if stopped is not None:
            if self.searches is not None:
                self.searches.fit_ended()  # a tuner's search ends after this trial
            # The stopped epoch's tf.data iterator sits in the frames ProbeStop left through (a
            # cycle): torn down now, as a plain fit tears down its last epoch's at its end - not
            # at some later collection, where destroying it waits for its autotuner's next
            # wake-up, up to 60 s away (keras.io's VAE sat 34 s idle in its post-training).
            gc.collect()
            if not session.under_agent:  # in-process use: time validation, then leave
                try:
                    time_validation(model, session, info, self.val_batches)
                finally:
                    session.finish("probe-done", stopped)
                raise SystemExit(0) from None
            if session.phases_enabled:  # the program goes on: maybe to another fit (a phase)
                session.end_phase()
                session.phase_done(stopped)  # its dt: the fit's teardown
            else:
                session.mark_done("probe-done", stopped)  # its dt: the fit's teardown
            time_validation(model, session, info, self.val_batches)
            return _history(model, session.last_metrics)
        if session.policy.full and not session.emitter.ended:
            session.mark_done("complete")
        elif self._completed_at is None and session.phases_enabled:  # a fit() may follow
            import atexit

            atexit.register(self._at_exit)
        self._returned_at = self._completed_at = time.monotonic()
        return history

    def _skipped(self, model: Any) -> Any:
        """A fit() in the loop the probe stopped: it returns at once, and a tuner's search ends
        after this trial."""
        self._say("skipped-fit", "info", "fit() called again in the loop the probe stopped: "
                  "it returned at once (no training); the program's other work runs")
        if self.searches is not None:
            self.searches.fit_ended()
        return _history(model, self.session.last_metrics)

    def _at_exit(self) -> None:
        """Every fit() ran to its own end, none stopped (each shorter than a probe: keras.io's
        wide-deep-cross fits three models for one epoch each): training ended with the last
        one - the timed `done` that makes the run one the probe saw whole, its own answer."""
        s = self.session
        if self._completed_at is not None and not s.emitter.ended and not s.any_stopped \
                and not s.trained:
            s.mark_done("complete", "training ran to its end", at=self._completed_at)

    def _phase(self, frame: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        """Which phase this fit() call trains in: the first (its loop remembered), the current
        one (fit in a loop), or a new one (called from elsewhere). False: a call in the loop the
        probe stopped, or past the probe's phases - it returns at once."""
        session = self.session
        if not session.phases_enabled:
            return True
        if not session.started:
            session.anchor = loop_anchor(frame)
            return True
        anchor = session.anchor
        if anchor is not None and inside(anchor, frame):
            return not session.phase_stopped
        if not session.more_phases():
            self._say("phase-budget", "warning", f"fit() called in a phase past the probe's "
                      f"{session.phase}: it returned at once; the estimate covers the phases seen")
            return False
        new = loop_anchor(frame)
        info = fit_arguments(args, kwargs)
        self._returned_at = None  # a new phase's first step is its start-up, all of it
        session.new_phase(steps_per_epoch=int(info["steps_per_epoch"] or 0),
                          loop=new.text if new is not None else "fit()", anchor=new)
        session.epochs_begun = session.epochs_done = 0
        session.val_steps = int(info["val_steps"] or 0)
        epochs = int(info["epochs"] or 1) - int(info["initial_epoch"] or 0)
        session.plan(epochs=epochs, source=f"fit(epochs={epochs}) at "
                     + (new.text if new is not None else "a fit() call"))
        self.calls = 0  # this phase's fit() calls: the first plans the loops around it
        return True

    def _fit_info(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """This call's arguments, counted across calls, with what the user should be told."""
        self.calls += 1
        info = fit_arguments(args, kwargs)
        info["epoch_base"] = self.session.epochs_begun
        if self.calls == 2 and self.session.repeats is None and (
                self.searches is None or not self.searches.counted()):
            self._say("fit-loop", "warning", "fit() called again: epochs are counted "
                      "across calls; the job's epochs are the loops' around the call when they "
                      "can be read (the plan says so), else give them (probe --epochs / "
                      "[probe] epochs)")
        ending = {compat.attribute(symbol) for symbol in compat.KERAS_EARLY_ENDING}
        early = [type(c).__name__ for c in info["callbacks"] if type(c).__name__ in ending]
        soonest = earliest_stop(info["callbacks"])
        if soonest and soonest >= info["epochs"]:  # a patience that outlasts this call's epochs
            # cannot end them sooner (fit() in a loop starts its callbacks again each call)
            stopping = compat.attribute(compat.KERAS_EARLY_ENDING[0])
            early, soonest = [name for name in early if name != stopping], None
        if early:
            self._say("early-stop", "warning", f"{', '.join(early)} may end training before "
                      "the planned epochs: the estimate for them is an upper bound")
            if self.calls == 1 and soonest:
                self.session.plan(earliest_epochs=soonest)
        if self.calls == 1:
            info["hint"] = STALL_HINT
            self._plan_calls(info)
            freq = info["val_freq"]
            if isinstance(freq, int) and not isinstance(freq, bool) and 1 < freq <= info["epochs"]:
                # validation after the epochs j (from 0) where (j + 1) % freq == 0 (epoch_work)
                self.session.plan(every_epochs=freq, every_epochs_at=freq - 1,
                                  every_epochs_source=f"fit(validation_freq={freq})")
        return info

    def _plan_calls(self, info: dict[str, Any]) -> None:
        """fit() in a loop: the loops around the call say how many calls the program makes, so
        the job's epochs are that many times this call's (length.py)."""
        import sys

        from ..length import calls_around

        found = calls_around(sys._getframe())  # the loops around the program's fit() call
        epochs = int(info.get("epochs") or 1)
        search = self.searches.epochs(epochs) if self.searches is not None else None
        if search is not None:  # a tuner's trials, each a fit() (in the program's loops, if any)
            total, source = search
            if found is not None:
                total, source = found[0] * total, f"{found[1]} x {source}"
            self.session.plan(epochs=total, source=source)
            return
        repeated = self.session.repeats is not None  # a library runs it again (Optuna's trials)
        if found is None and repeated:
            found = (1, "")
        if found is None:
            return
        calls, source = found
        if calls > 1 or repeated:
            self.session.plan(epochs=calls * epochs,
                              source=f"{source} x fit(epochs={epochs})" if source
                              else f"fit(epochs={epochs})")


def _history(model: Any, metrics: dict[str, Any]) -> Any:
    """What fit() returns when the probe ended training: a History with the last metrics seen,
    so code reading history.history[...][-1] after training goes on."""
    history = compat.resolve(compat.KERAS_HISTORY)()
    getattr(history, compat.attribute(compat.KERAS_HISTORY_SET_MODEL))(model)
    records, epochs = compat.KERAS_HISTORY_RECORDS
    setattr(history, records, {k: [v] for k, v in metrics.items()})
    setattr(history, epochs, [0] if metrics else [])
    return history


def earliest_stop(callbacks: list[Any]) -> int | None:
    """The fewest epochs an EarlyStopping among ``callbacks`` lets fit() run: its first epoch
    watched (``start_from_epoch``) improves on nothing and resets its wait - unless a
    ``baseline`` is not beaten - then ``patience`` epochs without improvement (at least one)
    stop it. None: no EarlyStopping whose settings read as numbers."""
    name = compat.attribute(compat.KERAS_EARLY_ENDING[0])
    patience_name, start_name, baseline_name = compat.KERAS_EARLY_STOPPING_WAIT
    soonest = []
    for c in callbacks:
        if type(c).__name__ != name:
            continue
        patience, start = getattr(c, patience_name, None), getattr(c, start_name, 0)
        if isinstance(patience, int) and isinstance(start, int):
            first = 0 if getattr(c, baseline_name, None) is not None else 1
            soonest.append(start + max(patience, 1) + first)
    return min(soonest) if soonest else None
