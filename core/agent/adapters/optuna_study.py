"""Optuna's studies: ``study.optimize(objective, n_trials=N)`` calls the program's objective - a
whole training of its own (a model built, its epochs run, its accuracy returned) - once a
trial, N times, in Optuna's own loop. The study is one phase of the job, N times as long as the
objective's training: whatever times that training (the PyTorch loops, Keras fit) plans its
length as before, and the session multiplies it by N while the study runs.

Once the probe ended the phase (the first trial's loop stopped early), the study is ended
through its own exit: ``study.stop()`` after that trial returns, so ``optimize()`` leaves its
loop and the program goes on (to ``study.best_trial``: the trial that ran). No later trial runs
with its loops run dry.

What the estimate does not count: each trial's own start - the objective's set-up (its data, a
new model) and a new model's first step (Keras traces it again) - comes once, in the probed
trial, not once a trial. A ``timeout``: no trial starts after that many seconds of the study
(Optuna checks it before each), so where N trials would take longer the study runs as many as
start by then - the plan says the limit (``time_limit_s``) and the estimate counts them
(estimate/repeats.py); with no ``n_trials``, trials start until the timeout. And what it
does not know, and says: a pruner (Optuna's default, a MedianPruner) ends unpromising trials
early - the estimate is an upper bound; trials differ in their models (the search space's
sizes), and the probed trial's steps stand for every trial's; a study with neither
``n_trials`` nor ``timeout`` runs until a stop: one trial is counted.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

from .. import compat
from ..probe_session import ProbeSession
from ..repeats import Repeats


class OptunaAdapter:
    name: str = "Optuna"
    modules: tuple[str, ...] = (compat.module_of(compat.OPTUNA_OPTIMIZE),)

    def __init__(self, session: ProbeSession) -> None:
        self.session = session
        self.said: set[str] = set()

    def install(self, module: str) -> None:
        study_class, name = compat.owner(compat.OPTUNA_OPTIMIZE)
        original = getattr(study_class, name)
        if getattr(original, "_probecast", False):
            return
        parameters = inspect.signature(original)
        adapter = self

        @functools.wraps(original)
        def optimize(study: Any, *args: Any, **kwargs: Any) -> Any:
            return adapter.run(original, parameters, study, args, kwargs)

        optimize._probecast = True  # type: ignore[attr-defined]
        setattr(study_class, name, optimize)

    def run(self, original: Any, parameters: inspect.Signature, study: Any,
            args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """One study: its trials counted while it runs, its objective wrapped to end it."""
        session = self.session
        func_name, trials_name, timeout_name = compat.OPTUNA_PARAMETERS
        try:
            bound = parameters.bind(study, *args, **kwargs)
        except TypeError:  # the call is Optuna's to refuse
            return original(study, *args, **kwargs)
        given = bound.arguments
        func, trials, timeout = (given.get(func_name), given.get(trials_name),
                                 given.get(timeout_name))
        if session.emitter.ended or session.trained or not callable(func):
            return original(study, *args, **kwargs)
        self._tell(study, trials, timeout)
        given[func_name] = self._ending(study, func)
        outer = session.repeats
        limit = float(timeout) if isinstance(timeout, (int, float)) and timeout > 0 else None
        if isinstance(trials, int) and trials > 1:
            session.repeats = Repeats(
                trials, f"Optuna: study.optimize(n_trials={trials}"
                f"{f', timeout={timeout:g}' if limit else ''})", *_pruning(study),
                time_limit_s=limit)
        elif trials is None and limit:  # trials start until the timeout
            session.repeats = Repeats(1, f"Optuna: study.optimize(timeout={timeout:g})",
                                      time_limit_s=limit, counted=False)
        try:
            return original(*bound.args, **bound.kwargs)
        finally:
            session.repeats = outer

    def _ending(self, study: Any, func: Any) -> Any:
        """The objective, after which the study stops once the probe has what it needs."""

        @functools.wraps(func)
        def objective(*args: Any, **kwargs: Any) -> Any:
            try:
                return func(*args, **kwargs)
            finally:
                self._trial_over(study)

        return objective

    def _trial_over(self, study: Any) -> None:
        """A trial returned (or raised: pruned, failed). Once it trained, the study ends: the
        probe stopped its loop, or it ran whole - a trial's steps are the study's, N times."""
        s = self.session
        if s.emitter.ended or not s.started or s.policy.full:
            return  # (a trial that raised before training: the next one is probed)
        if not (s.trained or s.phase_stopped):
            if s.repeats is None:
                return  # one trial, seen whole: the study's end is the program's
            self._unpruned(study)
            s.policy.reason = "a trial of the study seen whole"
            s.end_phase()
        self._say("optuna-stopped", "info", "Optuna: the probe ended the study after the "
                  "trial it timed (study.stop()): optimize() returns, the program goes on with "
                  "the trials that ran")
        getattr(study, compat.attribute(compat.OPTUNA_STOP))()

    def _unpruned(self, study: Any) -> None:
        """A trial seen whole that reported nothing to the study (no ``trial.report``): its
        pruner, which ends a trial on the values reported, can end none - the study's soonest
        end is its whole length (Optuna's Keras example reports nothing; its pruner's bound put
        the low end at 24 s of a 487 s study)."""
        s = self.session
        repeats, epochs = s.repeats, s._plan_epochs
        if repeats is None or repeats.pruned_after is None or not epochs \
                or not s.earliest_epochs or s.earliest_epochs >= epochs:
            return
        try:
            reported = getattr(getattr(study, compat.OPTUNA_TRIALS)[-1],
                               compat.OPTUNA_REPORTED)
        except Exception:  # noqa: BLE001 - a storage that cannot say: the pruner's bound stays
            return
        if reported:
            return
        s.plan(earliest_epochs=epochs)
        self._say("optuna-unpruned", "info", "Optuna: the trial reported nothing to the study "
                  "(no trial.report): its pruner can end no trial - every trial is counted "
                  "whole")

    def _tell(self, study: Any, trials: Any, timeout: Any) -> None:
        """What the estimate of a study leaves out, said once."""
        limited = isinstance(timeout, (int, float)) and timeout > 0
        if not (isinstance(trials, int) and trials > 0):
            if limited:
                self._say("optuna-timeout", "info", f"Optuna: study.optimize() has no "
                          f"n_trials: trials start until its timeout ({timeout:g} s) - the "
                          "estimate counts as many as start by then at the probed trial's pace")
                return
            self._say("optuna-trials", "warning", "Optuna: study.optimize() has no n_trials "
                      "nor timeout (it runs until a stop): the estimate covers one trial")
            return
        self._say("optuna-trials", "info", f"Optuna: each of the study's {trials} trials runs "
                  "the objective's training again: the probed trial's steps stand for every "
                  "trial's (their models differ in size)")
        pruner = getattr(study, compat.OPTUNA_PRUNER, None)
        if _pruning(study)[0] is not None:
            self._say("early-stop", "warning", f"Optuna's {type(pruner).__name__} may end "
                      "trials before their planned length: the estimate for them is an upper "
                      "bound")
        if limited:
            self._say("optuna-timeout", "info", f"Optuna: no trial starts after {timeout:g} s "
                      "(timeout=): where the trials take longer, the estimate counts those "
                      "that start by then")

    def _say(self, code: str, level: str, msg: str) -> None:
        if code not in self.said:
            self.said.add(code)
            self.session.log(level, msg, code=code)


def _pruning(study: Any) -> tuple[int | None, int]:
    """After how many reports (epochs) the study's pruner may end a trial, and how many trials
    it lets run whole first (a MedianPruner's n_warmup_steps + 1 and n_startup_trials, read
    where a pruner keeps them; else after its first report, from the first trial); (None, 0)
    for none (a NopPruner)."""
    pruner = getattr(study, compat.OPTUNA_PRUNER, None)
    if pruner is None or type(pruner).__name__ == compat.attribute(compat.OPTUNA_NO_PRUNING):
        return None, 0
    warmup_name, startup_name = compat.OPTUNA_PRUNER_WAIT
    warmup, startup = getattr(pruner, warmup_name, 0), getattr(pruner, startup_name, 0)
    return (1 + (warmup if isinstance(warmup, int) and warmup > 0 else 0),
            startup if isinstance(startup, int) and startup > 0 else 0)
