"""KerasTuner's searches: ``tuner.search(x, y, epochs=E, ...)`` builds a new model each trial and
fits it - E epochs, ``executions_per_trial`` times - all from one line of the program, in the
library's own ``while True`` over the oracle's trials. Each search is one phase of the job
(Keras fit's phases: keras_fit.py), as long as its trials' fits: ``remaining_trials()`` x
executions x E epochs, read when the search begins.

Once the probe ended the phase (a trial's fit stopped early, its History returned), the search
is ended through its own exit: the oracle's next trial is a STOPPED one, so ``search()`` leaves
its loop, its ``on_search_end`` runs and the program goes on - to ``get_best_models()`` (the
trials that ran, whose models were built and saved) and to its next search, the next phase. No
trial's fit is skipped half-built (a fit() returned at once leaves a model with no weights,
which ``get_best_models()`` cannot load).

Trials differ in their models (the search space's sizes): the probed trial's step stands for
all of them, and the log says so. Oracles whose trials choose their own epochs (Hyperband) have
no count to read: the estimate covers the trials seen.
"""

from __future__ import annotations

import functools
from typing import Any

from .. import compat
from ..probe_session import ProbeSession


class _Search:
    """One search() call: its trials, and whether the probe ended it."""

    def __init__(self, tuner: Any) -> None:
        oracle = getattr(tuner, compat.KT_ORACLE, None)
        own = {compat.attribute(symbol) for symbol in compat.KT_OWN_EPOCHS}
        remaining = None
        if type(oracle).__name__ not in own:
            try:
                remaining = getattr(oracle, compat.KT_REMAINING)()
            except Exception:  # noqa: BLE001 - a custom oracle: the count is unknown
                remaining = None
        executions = getattr(tuner, compat.KT_EXECUTIONS, 1)
        self.oracle = oracle
        self.trials = remaining if isinstance(remaining, int) and remaining > 0 else None
        self.executions = executions if isinstance(executions, int) and executions > 0 else 1
        self.name = type(tuner).__name__
        self.ended = False  # the probe stopped one of its fits: no trial after it


class KerasTunerAdapter:
    name: str = "KerasTuner"
    modules: tuple[str, ...] = (compat.module_of(compat.KT_SEARCH),)

    def __init__(self, session: ProbeSession) -> None:
        self.session = session
        self.search: _Search | None = None  # the search running now
        self.said: set[str] = set()

    def install(self, module: str) -> None:
        tuner_class, name = compat.owner(compat.KT_SEARCH)
        original = getattr(tuner_class, name)
        if getattr(original, "_probecast", False):
            return
        adapter = self

        @functools.wraps(original)
        def search(tuner: Any, *args: Any, **kwargs: Any) -> Any:
            return adapter.run(original, tuner, args, kwargs)

        search._probecast = True  # type: ignore[attr-defined]
        setattr(tuner_class, name, search)

    def run(self, original: Any, tuner: Any, args: tuple[Any, ...],
            kwargs: dict[str, Any]) -> Any:
        """One search, its oracle asked for each trial through ``next_trial``."""
        outer, record = self.search, _Search(tuner)
        oracle = record.oracle
        create = getattr(oracle, compat.KT_CREATE_TRIAL, None)
        if create is None or self.session.emitter.ended:
            return original(tuner, *args, **kwargs)
        setattr(oracle, compat.KT_CREATE_TRIAL, functools.partial(self.next_trial, record, create))
        self.search = record
        try:
            return original(tuner, *args, **kwargs)
        finally:
            self.search = outer
            try:
                delattr(oracle, compat.KT_CREATE_TRIAL)  # the class's own again
            except AttributeError:
                pass

    def next_trial(self, record: _Search, create: Any, tuner_id: Any) -> Any:
        """The oracle's next trial - or a STOPPED one, which ends search()'s loop, once the
        probe stopped a fit of this search or has all it needs."""
        session = self.session
        if session.emitter.ended or not (record.ended or session.trained):
            return create(tuner_id)
        self._say("tuner-stopped", "info", f"KerasTuner: the probe ended {record.name}'s search "
                  "after the trial it stopped (its next trial STOPPED): search() returns, the "
                  "program goes on with the trials that ran")
        trial = compat.resolve(compat.KT_TRIAL)
        space = getattr(record.oracle, compat.KT_HYPERPARAMETERS)
        return trial(space.copy(), trial_id="probecast-stopped",
                     status=compat.resolve(compat.KT_STOPPED))

    def calls(self) -> tuple[int, str] | None:
        """The fit() calls the running search makes (trials x executions), and where that was
        read; None outside a search or where its trials are not counted."""
        record = self.search
        if record is None:
            return None
        if record.trials is None:
            self._say("tuner-trials", "warning", f"KerasTuner: {record.name}'s trials are not "
                      "counted (no max_trials, or trials that choose their own epochs): the "
                      "estimate covers the trials the probe sees")
            return None
        self._say("tuner-trials", "info", f"KerasTuner: {record.name} fits a new model each "
                  f"trial ({record.trials} trials x {record.executions} executions): the probed "
                  "trial's steps stand for every trial's (their models differ in size)")
        text = f"{record.name}: {record.trials} trials"
        return record.trials * record.executions, (
            text if record.executions == 1 else f"{text} x executions_per_trial="
                                                f"{record.executions}")

    def fit_ended(self) -> None:
        """A fit() of the running search was stopped or skipped by the probe: no trial after
        this one."""
        if self.search is not None:
            self.search.ended = True

    def _say(self, code: str, level: str, msg: str) -> None:
        if code not in self.said:
            self.said.add(code)
            self.session.log(level, msg, code=code)

