"""An early stop and the job's length: Keras', Lightning's and the Hugging Face Trainer's
EarlyStopping, or a patience the program's own loop breaks on (the agent's early_break.py) -
each ends training where its metric stops improving, at a point only a run can tell. What the
estimate makes of one (runtime.py): the planned length is an upper bound, said; the low bound
is the soonest run its patience allows (the plan's ``earliest_epochs``, or ``earliest_steps``
for a job of one loop of steps), or the longer one the probe saw pass without it; a run the
probe saw the stop end is measured, its bounds reaching a repeat that stops anywhere from the
soonest to the planned last.
"""

from __future__ import annotations

from .length import ended_by_itself
from ..state import ProbeState

CODE = "early-stop"  # the agent's warning: something may end training before its length
UPPER_BOUND = "an early stop may end training sooner"  # the notes' openings (ranking, judge)
ENDED = "an early stop ended this run"
NONE_CAME = "an early stop could have ended this run sooner"


def upper_bound_note(state: ProbeState, n_ep: float, n_it: int) -> str:
    """The note that the estimate for ``n_ep`` epochs of ``n_it`` steps is an upper bound; ""
    where no early stop can end it sooner (one whose patience outlasts them)."""
    plan = state.plan
    if CODE not in state.codes:
        return ""
    if not (plan is not None and (plan.earliest_epochs or plan.earliest_steps)) and any(
            p.plan is not None and (p.plan.earliest_epochs or p.plan.earliest_steps)
            for p in state.phases):
        return ""  # the early stop is a later phase's (tensorflow/docs' imbalanced data: the
        # third of six fit() calls has the first), not this one's
    if plan is None:
        return _note(f"{n_ep:g} epochs")
    longest = longest_pass(state, n_it)
    if longest:
        return (f"a break can end each epoch's loop sooner: the estimate takes {n_it} steps an "
                f"epoch, as the probe saw its epochs take; the bounds reach from "
                f"{plan.earliest_pass_steps} to the planned {longest}")
    if (plan.earliest_epochs and plan.earliest_epochs >= n_ep) or (
            plan.earliest_steps and n_it and plan.earliest_steps >= n_ep * n_it):
        return ""
    return _note(f"{plan.steps} steps" if plan.earliest_steps and plan.steps
                 else f"{n_ep:g} epochs")


def longest_pass(state: ProbeState, n_it: int | None) -> int | None:
    """The planned steps an epoch where the estimate takes fewer, as the probe saw them
    (length.passes_seen: a break ends each epoch's loop sooner); None otherwise."""
    plan = state.plan
    if plan is None or not (plan.earliest_pass_steps and plan.steps and plan.epochs and n_it):
        return None
    planned = plan.steps // plan.epochs
    return planned if n_it < planned else None


def _note(length: str) -> str:
    return (f"{UPPER_BOUND}: this is an upper bound for {length} (full runs on one host tell the "
            "epochs it stops at: --epochs-from)")


def soonest_stop(state: ProbeState, n_ep: float,
                 n_it: int | None) -> tuple[float, int | None, str] | None:
    """The shortest run an early stop lets the job train, as the equations take it (epochs, and
    steps a pass) and in words: its patience's, or what the probe saw pass without it. None: no
    early stop, or none that can end the job before ``n_ep`` epochs of ``n_it`` steps."""
    plan = state.plan
    if plan is None or CODE not in state.codes:
        return None
    if plan.earliest_pass_steps and n_it and plan.earliest_pass_steps < n_it:
        # a break that ends each epoch's loop sooner: every epoch runs, as short as it allows
        k = plan.earliest_pass_steps
        return n_ep, k, f"{k} step{'s' if k > 1 else ''} in each of its {n_ep:g} epochs"
    if plan.earliest_epochs:
        # (those it saw end: not one it stopped)
        k = max(plan.earliest_epochs, len(set(state.epochs_done)))
        return (float(k), n_it, f"{k} epochs") if k < n_ep else None
    if not plan.earliest_steps or not n_it:
        return None
    k = max(plan.earliest_steps, state.steps)
    if k >= n_ep * n_it:
        return None
    return (k / n_it, n_it, f"{k} steps") if k > n_it else (1.0, k, f"{k} steps")


def epochs_ran(state: ProbeState) -> list[int]:
    """The epochs the probe saw run, in order: those that ended (Keras' `epoch` events), else
    those whose steps it saw (a PyTorch loop or Lightning writes no `epoch` event)."""
    return sorted(set(state.epochs_done) or set(state.steps_by_epoch))


def stopped_after(state: ProbeState) -> tuple[int, str] | None:
    """How far a run the probe saw whole trained before an early stop ended it short of its
    planned length, and in what: (epochs, "epochs"), or (steps, "steps") where the stop is
    counted in steps; None: no such run."""
    plan = state.plan
    if not (plan is not None and CODE in state.codes and ended_by_itself(state)):
        return None
    if plan.earliest_steps:
        planned = plan.steps or (plan.epochs or 0) * state.steps_per_epoch
        return (state.steps, "steps") if 0 < state.steps < planned else None
    epochs = plan.epochs or (state.start.epochs if state.start is not None else None)
    k = len(epochs_ran(state))
    return (k, "epochs") if plan.earliest_epochs and epochs and 0 < k < epochs else None


def early_stopped(state: ProbeState, n_ep: float, n_it: int) -> tuple[float, float, str]:
    """A run seen whole that an early stop could end: a repeat (an unseeded one, on another
    host) may stop anywhere from the patience's soonest to the planned last - keras.io's
    anomaly detector stopped after 7 to 50 of 50 epochs in five plain runs - so the bounds
    reach those runs: seconds less, seconds more, and the note. A run that trained its whole
    length drew no stop, which a repeat may draw: pytorch-forecasting's DeepAR example trained
    all 10 epochs under its probe and stopped after 7 in its plain run (-20 s)."""
    plan = state.plan
    if plan is None or CODE not in state.codes:
        return 0.0, 0.0, ""
    if plan.earliest_pass_steps and plan.steps:
        return _passes_cut(state, plan.earliest_pass_steps * int(n_ep), plan.steps)
    if plan.earliest_steps:
        planned = plan.steps or int(n_ep * n_it)
        return _stopped_in_steps(state, plan.earliest_steps, planned) if planned else (0.0, 0.0, "")
    soonest = plan.earliest_epochs
    ran = epochs_ran(state)
    k = len(ran)
    if not soonest or k <= 0 or (k >= n_ep and k <= soonest):
        return 0.0, 0.0, ""
    # an epoch as this run took them: its steps, validation and boundaries (each epoch's first
    # step carries the boundary before it), over the epochs it ran after the first (whose
    # first step carries the start-up: tracing, compilation)
    timed = [state.time_by_epoch[e] for e in ran[1:] or ran if e in state.time_by_epoch]
    if not timed:
        return 0.0, 0.0, ""
    per_epoch = sum(timed) / len(timed)
    least = max(0.0, k - soonest) * per_epoch
    if k >= n_ep:
        return least, 0.0, _none_came(f"epoch {soonest} of {n_ep:g}", f"{per_epoch:.1f} s an epoch")
    return least, (n_ep - k) * per_epoch, (
        f"{ENDED} after {k} of {n_ep:g} epochs; a repeat may stop at "
        f"another epoch, from {min(soonest, k)} to {n_ep:g} ({per_epoch:.1f} s an epoch): the "
        "bounds reach those runs")


def _stopped_in_steps(state: ProbeState, soonest: int, planned: int) -> tuple[float, float, str]:
    """The same in steps (a job of one loop of steps - a full-batch graph network's epochs -,
    an evaluation every K steps): a step as this run took them, its first (the start-up's
    tracing) apart."""
    k = state.steps
    if k <= 1 or (k >= planned and k <= soonest):
        return 0.0, 0.0, ""
    per_step = max(0.0, sum(state.time_by_epoch.values()) - (state.t_it1 or 0.0)) / (k - 1)
    if k >= planned:
        return (k - soonest) * per_step, 0.0, _none_came(f"step {soonest} of {planned}",
                                                         f"{1000 * per_step:.1f} ms a step")
    return max(0, k - soonest) * per_step, (planned - k) * per_step, (
        f"{ENDED} after {k} of {planned} steps; a repeat may stop at "
        f"another, from {min(soonest, k)} to {planned} ({1000 * per_step:.1f} ms a step): the "
        "bounds reach those runs")


def _passes_cut(state: ProbeState, soonest: int, planned: int) -> tuple[float, float, str]:
    """A run seen whole whose epochs' loops a break can end sooner (Spinning Up's PPO: up to 80
    policy steps an epoch, fewer once the KL is too far): a repeat trains every epoch, each
    pass anywhere from its soonest to its planned steps - only steps come or go, at the steady
    step's time (not the epoch's: its other work runs whatever the break). The steps it took
    are counted up to the planned (a second optimizer's loop beside it is counted too)."""
    t_it = state.step_time("trimmed")[0]
    k = min(state.steps, planned)
    if not (t_it == t_it and t_it > 0) or k <= 0:
        return 0.0, 0.0, ""
    return max(0, k - soonest) * t_it, (planned - k) * t_it, (
        f"a break can end each epoch's loop sooner: a repeat may take from {soonest} to "
        f"{planned} steps ({1000 * t_it:.1f} ms a step) where this run took {k}: the bounds "
        "reach those runs")


def _none_came(soonest: str, each: str) -> str:
    return (f"{NONE_CAME}, from {soonest}; none came: a repeat may stop sooner ({each}): the "
            "low bound reaches it")
