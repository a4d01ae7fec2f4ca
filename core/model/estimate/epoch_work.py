"""Work under an ``if`` on the epochs loop's index: ``if epoch % 10 == 0: evaluate()``.
The plan says after which epochs such work comes (``every_epochs`` K, ``every_epochs_at`` j0:
after the epochs j, from 0, where j % K == j0); a validation pass the probe timed after epoch 0
was counted at every epoch (40 epochs evaluated 4 times: +104 %).

The passes are taken as this work only where the probe saw it come and go: every pass after an
epoch the plan names (of the epochs that ended), and an epoch it does not name ended with none - a
pass every epoch beside a checkpoint every K stays one an epoch. Work that is no pass over a
loader (a checkpoint, a test by hand) lands in the boundary after its epoch: where the probe
timed boundaries with it and without, and no stall model forecasts them (a DataLoader's), the
boundaries to come cost the plain ones', and those after the named epochs their work on top."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from ..events import Plan
from ..state import ProbeState


@dataclass(frozen=True)
class EpochWork:
    every: int  # K
    at: int  # j0
    first: bool = False  # and after the first epoch (`or epoch == 0`)
    last: bool = False  # and after the job's last (`or epoch + 1 == args.epochs`)
    start: int = 0  # every K-th from this epoch on (`epoch >= args.min_epoch and ...`)

    def _every(self, j: int) -> bool:
        return j >= self.start and j % self.every == self.at

    @property
    def first_named(self) -> int:
        """The first epoch (from 0) the work follows."""
        return 0 if self.first else self.start + (self.at - self.start) % self.every

    def named(self, j: int, of: float | None = None) -> bool:
        """Whether the work follows epoch ``j`` (from 0) of a job of ``of`` epochs."""
        total = None if of is None else math.floor(of + 1e-9)
        return self._every(j) or (self.first and j == 0) or (
            self.last and total is not None and j == total - 1)

    def after(self, epochs: float, of: float | None = None) -> int:
        """How many of the first ``epochs`` epochs (whole) of a job of ``of`` epochs (default:
        that many) end with the work."""
        n = math.floor(epochs + 1e-9)
        total = n if of is None else math.floor(of + 1e-9)
        k, at, lo = self.every, self.at, self.start
        count = max(0, (n - 1 - at) // k - (lo - 1 - at) // k) if n > lo else 0
        ends = {j for j, said in ((0, self.first), (total - 1, self.last)) if said}
        return count + sum(0 <= j < n and not self._every(j) for j in ends)

    def describe(self, epochs: float, unit: str = "", of: float | None = None) -> str:
        """"after epochs 1, 11, 21, ... (4 of 40)": counted from 1, as a user counts them."""
        n = self.after(epochs, of)
        if not n:
            return (f"after none of the {epochs:g}{unit or ' epochs'} (the first: "
                    f"{self.first_named + 1})")
        named = (str(j + 1) for j in range(math.floor(epochs + 1e-9)) if self.named(j, of))
        listed = list(itertools.islice(named, 3)) + ["..."][:n > 3]
        last = " and the last" if self.last and n > 3 else ""
        return f"after epochs {', '.join(listed)}{last} ({n} of {epochs:g}{unit})"


def work_source(plan: Plan) -> str:
    """Where the work after every K-th epoch is written (logs of 2026-11-30 said it in
    ``every_source``), without the reading's own words."""
    return (plan.every_epochs_source or plan.every_source).split(": every")[0].split(
        ": the passes")[0]


def _planned(plan: Plan | None) -> EpochWork | None:
    """The plan's work after every K-th epoch (K >= 2), if it says one."""
    if plan is None or not plan.every_epochs or plan.every_epochs < 2:
        return None
    return EpochWork(plan.every_epochs, (plan.every_epochs_at or 0) % plan.every_epochs,
                     plan.every_epochs_first, plan.every_epochs_last, plan.every_epochs_from or 0)


def periodic_validation(state: ProbeState) -> EpochWork | None:
    """The plan's work between epochs, where the probe's validation passes are it."""
    planned = _planned(state.plan)
    if planned is None or not state.vals:
        return None
    ended = [e for e in state.steps_by_epoch if e + 1 in state.steps_by_epoch]
    # (passes in the epoch the probe stopped: Keras' timed by the agent at its stop)
    if not all(planned.named(v.epoch) for v in state.vals if v.epoch in ended):
        return None
    return planned if any(not planned.named(e) for e in ended) else None


@dataclass(frozen=True)
class BoundaryWork:
    """The boundaries to come: ``per`` each, and ``extra`` more at ``n`` of them (the work every
    ``every`` steps), said in ``note``."""

    per: float
    extra: float
    n: int
    every: int
    note: str


def boundary_work(state: ProbeState, t_it: float, n_ep: float) -> BoundaryWork | None:
    """Work after the plan's epochs that is no validation pass, where the probe timed
    boundaries with it and without (None: as the forecast says)."""
    plan, work = state.plan, _planned(state.plan)
    if plan is None or work is None or plan.every or periodic_validation(state) is not None:
        return None
    costs = state.boundary_overheads(t_it)
    named = [work.named(e - 1) for e in state.boundary_epochs[:len(costs)]]
    plain = [c for c, w in zip(costs, named) if not w]
    done = [c for c, w in zip(costs, named) if w]
    if not (plain and done):
        return None
    plain = plain[1:] if len(plain) >= 2 and not named[0] else plain  # the first's one-off work
    per = sum(plain) / len(plain)
    extra = sum(done) / len(done) - per
    if extra <= 0.0:
        return None  # nothing there the others lack: as the forecast says
    # after the named epochs - the last too: its work runs before training ends
    n_work = work.after(n_ep, of=n_ep)
    where = work_source(plan)
    note = (f"work {work.describe(n_ep, of=n_ep)}, under {where}: +{extra:.2f} s at "
            f"each boundary after them, {per:.2f} s at the others")
    n_it = state.steps_per_epoch or 1
    return BoundaryWork(per, extra, n_work, work.every * n_it, note)
