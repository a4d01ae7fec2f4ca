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
all of them, and the log says so. Hyperband's trials train for epochs its schedule sets (its
brackets' rounds, each trial going on from the one it continues): the phase is as long as
that schedule's epochs, counted from the oracle itself (``hyperband_plan``); a custom oracle
that sets its own epochs has no count to read: the estimate covers the trials seen.
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
        kind = type(oracle).__name__
        left = new_combinations(oracle)  # a search ends when its space has no new values left
        remaining, self.epochs = None, None  # epochs: all its trials', where its oracle sets them
        if kind in {compat.attribute(symbol) for symbol in compat.KT_OWN_EPOCHS}:
            remaining, self.epochs = hyperband_plan(oracle, left) or (None, None)
        else:
            try:
                remaining = getattr(oracle, compat.KT_REMAINING)()
            except Exception:  # noqa: BLE001 - a custom oracle: the count is unknown
                remaining = None
            if remaining is None and kind == compat.attribute(compat.KT_GRID):
                remaining = left  # a grid with no max_trials runs every combination
            elif isinstance(remaining, int) and left is not None:
                remaining = min(remaining, left)
        executions = getattr(tuner, compat.KT_EXECUTIONS, 1)
        self.oracle = oracle
        self.trials = remaining if isinstance(remaining, int) and remaining > 0 else None
        self.executions = executions if isinstance(executions, int) and executions > 0 else 1
        self.name = type(tuner).__name__
        self.ended = False  # the probe stopped one of its fits: no trial after it
        self.invalid = False  # ... and that trial was made INVALID


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
        trial_class, run_name = compat.owner(compat.KT_RUN_TRIAL)
        run_original = getattr(trial_class, run_name)

        @functools.wraps(run_original)
        def run_trial(tuner: Any, trial: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return run_original(tuner, trial, *args, **kwargs)
            finally:
                adapter.trial_over(trial)

        setattr(trial_class, run_name, run_trial)

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

    def counted(self) -> bool:
        """A search runs now whose fit() calls are counted."""
        return self.search is not None and self.search.trials is not None

    def epochs(self, fit_epochs: int) -> tuple[int, str] | None:
        """The epochs the running search's fit()s train in all - trials x executions x the
        fit's ``fit_epochs``, or what the oracle's schedule sets - and where that was read; None
        outside a search or where its trials are not counted."""
        record = self.search
        if record is None:
            return None
        if record.trials is None:
            self._say("tuner-trials", "warning", f"KerasTuner: {record.name}'s trials are not "
                      "counted (no max_trials, or trials that choose their own epochs): the "
                      "estimate covers the trials the probe sees")
            return None
        text = f"{record.name}: {record.trials} trials"
        if record.executions > 1:
            text += f" x executions_per_trial={record.executions}"
        if record.epochs is not None:
            text += f", {record.epochs} epochs in its brackets' rounds"
        self._say("tuner-trials", "info", f"KerasTuner: {text} - each trial fits a new model: "
                  "the probed trial's steps stand for every trial's (their models differ in size)")
        if record.epochs is not None:
            return record.epochs * record.executions, text
        return record.trials * record.executions * fit_epochs, f"{text} x fit(epochs={fit_epochs})"

    def trial_over(self, trial: Any) -> None:
        """A trial ran: the one whose fit the probe stopped (or skipped) is INVALID - its score
        partial, its checkpoint maybe never saved (its first epoch unfinished: Hyperband's
        1-epoch trials) - so the program's get_best_models() loads a trial that ran whole."""
        record = self.search
        if record is None or not record.ended or record.invalid:
            return
        record.invalid = True
        trial.status = compat.resolve(compat.KT_INVALID)
        trial.message = "probecast stopped this trial's fit: its score is partial"

    def fit_ended(self) -> None:
        """A fit() of the running search was stopped or skipped by the probe: no trial after
        this one."""
        if self.search is not None:
            self.search.ended = True

    def _say(self, code: str, level: str, msg: str) -> None:
        if code not in self.said:
            self.said.add(code)
            self.session.log(level, msg, code=code)


def new_combinations(oracle: Any) -> int | None:
    """The sets of values the oracle's search space holds that no trial has tried yet - the
    product of each hyperparameter's values (a conditional one's counted as always there: an
    upper bound); None for a continuous space (a Float without a step). Every oracle that draws
    values skips those already tried, and ends the search when it finds none new."""
    try:
        n = 1
        for hp in getattr(getattr(oracle, compat.KT_HYPERPARAMETERS), compat.KT_SPACE):
            if type(hp).__name__ == compat.KT_CONTINUOUS and getattr(hp, compat.KT_STEP, None) is None:
                return None
            n *= len(tuple(getattr(hp, compat.KT_VALUES)))
        return max(0, n - len(getattr(oracle, compat.KT_TRIED, ())))
    except Exception:  # noqa: BLE001 - a space of another shape: not counted
        return None


def hyperband_plan(oracle: Any, left: int | None = None) -> tuple[int, int] | None:
    """The trials a Hyperband search still makes and the epochs they train, from its oracle's
    own schedule: the brackets it began (their rounds' trials not made yet), the brackets after
    them in this iteration, then the iterations left - each round's trials trained from the
    epoch the round before ended on; a bracket's first round draws new values, and the search
    ends where ``left`` (new_combinations) runs out. None where the schedule cannot be read (no
    iteration count: Hyperband runs until stopped)."""
    iterations_name, brackets_name, size_name, epochs_name = compat.KT_HYPERBAND_SCHEDULE
    began_name, current_name, iteration_name = compat.KT_HYPERBAND_STATE
    try:
        iterations = getattr(oracle, iterations_name)
        size, epochs = getattr(oracle, size_name), getattr(oracle, epochs_name)
        n_brackets = int(getattr(oracle, brackets_name)())
        began = list(getattr(oracle, began_name))
        current, iteration = int(getattr(oracle, current_name)), int(getattr(oracle, iteration_name))
        if not isinstance(iterations, int):  # None given: float("inf"), no end but a stop
            return None

        def bracket(num: int, made: list[list[Any]] | None = None) -> list[tuple[int, int, int]]:
            """Its rounds still to make, in order: (whether its trials draw new values, how
            many, the epochs each trains)."""
            return [(r == 0, max(0, int(size(num, r)) - (len(made[r]) if made else 0)),
                     int(epochs(num, r)) - (int(epochs(num, r - 1)) if r else 0))
                    for r in range(num + 1)]

        rounds = [r for b in began for r in bracket(int(b["bracket_num"]), b["rounds"])]
        rounds += [r for num in range(current - 1, -1, -1) for r in bracket(num)]
        rounds += [r for num in range(n_brackets) for r in bracket(num)] * max(
            0, iterations - iteration - 1)
    except Exception:  # noqa: BLE001 - a schedule of another shape: not counted
        return None
    trials = trained = 0
    for new, n, each in rounds:
        if new and left is not None:
            if n > left:  # the next trial finds no new values: the search ends there
                return trials + left, trained + left * each
            left -= n
        trials, trained = trials + n, trained + n * each
    return trials, trained
