"""Work a program does besides its training steps, as one probe's log shows it: its validation
passes (whole, or partial ones scaled to a whole pass) and its periodic work every K steps (an
evaluation, a sample, a checkpoint) - derived from a folded ``ProbeState`` on demand."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .linefit import line_fit
from .phase_state import Periodic


class Pass(Protocol):
    """A validation pass the probe timed (state.ValTiming): its batches, its time, the step
    it came after."""

    @property
    def steps(self) -> int: ...

    @property
    def dt(self) -> float: ...

    @property
    def at_step(self) -> int: ...


def validation_times(vals: Sequence[Pass], full: int,
                     ) -> tuple[float | None, float | None, bool]:
    """(T_val1, T_val, partial) for a full validation pass of ``full`` batches (0: unknown),
    from the passes the probe timed.

    Whole passes are used as they are when the log has them. Partial passes (fewer batches)
    are scaled up, but not naively: each pass has a per-call cost that does not grow with
    the batches, and the first one also traces the test function. With later partial passes
    of two different lengths, a line dt = a + b*steps through them separates the two, so
    T_val = a + b*val_steps and T_val1 adds the first pass's excess over that line. With
    passes of one length only, each is scaled by val_steps/steps (an upper bound).
    """
    if not vals:
        return None, None, False
    whole = [v for v in vals if not full or v.steps >= full]
    if whole:
        t_val1 = whole[0].dt
        later = [v.dt for v in whole[1:]]
        if later:
            return t_val1, sum(later) / len(later), False
        partial_est = _partial_validation(vals, full)
        if partial_est is not None:
            return t_val1, min(t_val1, partial_est[1]), True
        return t_val1, t_val1, False
    est = _partial_validation(vals, full)
    assert est is not None
    return est[0], est[1], True


def _partial_validation(vals: Sequence[Pass], full: int) -> tuple[float, float] | None:
    parts = [v for v in vals if full and 0 < v.steps < full]
    if not parts:
        return None
    first, later = parts[0], parts[1:]
    sizes = {v.steps for v in later}
    if len(sizes) >= 2:
        a, b = line_fit([(v.steps, v.dt) for v in later])
        t_val = a + b * full
        return t_val + max(0.0, first.dt - (a + b * first.steps)), t_val
    scale = full / first.steps
    if not later:
        return first.dt * scale, first.dt * scale
    t_val = sum(v.dt * full / v.steps for v in later) / len(later)
    same = [v.dt for v in later if v.steps == first.steps]
    if same:
        return t_val + max(0.0, first.dt - sum(same) / len(same)), t_val
    return first.dt * scale, t_val


def vals_are_periodic(k: int, per: int, vals: Sequence[Pass]) -> bool:
    """Validation runs every ``k`` steps (the plan's K, 0: none) of passes of ``per``: within a pass (a step-budgeted job, Lightning's
    val_check_interval), or across passes where each one seen came after a multiple of K
    steps, not at a pass's end (Ignite's ITERATION_COMPLETED(every=120) over passes of 50:
    counted per epoch, 18 for 7, +61 %)."""
    seen = [v.at_step for v in vals]
    return bool(k) and (not per or k < per or bool(seen) and all(
        s >= k and s % k == 0 for s in seen))


def periodic(k: int, slow: Sequence[tuple[int, float]], vals: Sequence[Pass], steps: int,
             source: str, t_it: float) -> Periodic | None:
    """The program's periodic work every ``k`` steps (0: none; written at ``source``): each
    occurrence the probe saw, in order - the slowest of its steps at K·j and just after
    (``slow``: index, dt) and the validation passes there (``vals``: those every K steps) -
    over ``steps`` steps the probe timed, against a steady step ``t_it``. One
    with no slow step cost nothing; step 0's is left out where a later one was seen (the
    start is there too: DCGAN's 2nd step, 1.36 s of cuDNN autotuning; its step 101, 0.016 s)."""
    if not k:  # (K under MIN_EVERY: its validation passes only, no slow steps judged)
        return None
    worst: dict[int, float] = {}  # by block of K steps: its slowest step
    for index, dt in slow:
        worst[index // k] = max(worst.get(index // k, 0.0), dt)
    if len(worst) > 1:
        worst.pop(0, None)
    cost = {j: w - t_it if w - t_it > max(0.5 * t_it, 0.002) else 0.0 for j, w in worst.items()}
    for v in vals:  # a pass in a block: its cost too
        if v.at_step > 1:
            cost[v.at_step // k] = cost.get(v.at_step // k, 0.0) + v.dt
    extra = [cost[j] for j in sorted(cost)]
    return Periodic(k, tuple(extra), steps > k + 1, source)
