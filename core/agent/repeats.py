"""A library's loop that runs the program's whole training again and again - an Optuna
study's trials: what the session multiplies one run's plan by while it runs (``plan()``), and
what may end a run early or the loop itself (a pruner, a time limit)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Repeats:
    """A library's loop that runs the program's training ``n`` times (an Optuna study's
    trials), where that was read, and what may end a run early: after ``pruned_after`` epochs
    (reports) a run may end, once ``unpruned`` runs ran whole (Optuna's pruner). No run starts
    after ``time_limit_s`` seconds of the loop (Optuna's timeout); ``counted`` False: no count
    either, runs start until that limit (``n`` is 1: the plan is one run's)."""

    n: int
    source: str
    pruned_after: int | None = None
    unpruned: int = 0
    time_limit_s: float | None = None
    counted: bool = True

    def of(self, fields: dict[str, Any]) -> dict[str, Any]:
        """One run's plan fields as all ``n`` runs'."""
        out = dict(fields)
        if self.counted:
            out["repeats"] = self.n
        if self.time_limit_s:
            out["time_limit_s"] = float(self.time_limit_s)
        for name in ("epochs", "steps", "earliest_epochs", "earliest_steps"):
            if isinstance(out.get(name), int):
                out[name] *= self.n
        epochs = fields.get("epochs")
        if self.pruned_after and isinstance(epochs, int) and epochs > self.pruned_after:
            own = fields.get("earliest_epochs") or epochs  # a run's own early stop, else whole
            whole = min(self.unpruned, self.n)
            soonest = whole * own + (self.n - whole) * min(own, self.pruned_after)
            if soonest < min(out.get("earliest_epochs") or out["epochs"], out["epochs"]):
                out["earliest_epochs"] = soonest
        out["source"] = f"{self.source} x {fields.get('source') or 'its training'}"[:300]
        return out
