"""Validation under an ``if`` on the epochs loop's index: ``if epoch % 10 == 0: evaluate()``.
The plan says after which epochs such work comes (``every_epochs`` K, ``every_epochs_at`` j0:
after the epochs j, from 0, where j % K == j0); a validation pass the probe timed after epoch 0
was counted at every epoch (40 epochs evaluated 4 times: +104 %).

The passes are taken as this work only where the probe saw it come and go: every pass after an
epoch the plan names, and an epoch it does not name ended (the next one began) with none - a
pass every epoch beside a checkpoint every K stays one an epoch. The boundaries are the
forecast's (stalls.py): a DataLoader's are what its later ones cost, the first's one-off work
apart."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..state import ProbeState


@dataclass(frozen=True)
class EpochWork:
    every: int  # K
    at: int  # j0

    def after(self, epochs: float) -> int:
        """How many of the first ``epochs`` epochs (whole) end with the work."""
        n = math.floor(epochs + 1e-9)
        return 0 if n <= self.at else (n - 1 - self.at) // self.every + 1

    def describe(self, epochs: float) -> str:
        """"after epochs 1, 11, 21, ... (4 of 40)": counted from 1, as a user counts them."""
        first = [self.at + 1 + i * self.every for i in range(3)]
        return (f"after epochs {', '.join(map(str, first))}, ... ({self.after(epochs)} of "
                f"{epochs:g})")


def periodic_validation(state: ProbeState) -> EpochWork | None:
    """The plan's work between epochs, where the probe's validation passes are it."""
    plan = state.plan
    if plan is None or not plan.every_epochs or plan.every_epochs < 2 or not state.vals:
        return None
    k, at = plan.every_epochs, (plan.every_epochs_at or 0) % plan.every_epochs
    if not all(v.epoch % k == at for v in state.vals):
        return None
    ended = [e for e in state.steps_by_epoch if e + 1 in state.steps_by_epoch]
    return EpochWork(k, at) if any(e % k != at for e in ended) else None
