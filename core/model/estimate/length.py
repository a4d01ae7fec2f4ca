"""How long the job is: epochs or total training steps, and where that came from - the user,
full runs (methodology 1), the program itself (the agent's `plan`: the loops around the step,
a trainer's settings, its arguments), the log's planned epochs, or the default. A job measured
in steps is turned into what the equations take: N_it steps a pass and N_ep passes (a job that
ends inside its first pass is one pass of N steps). With neither, the length is unknown and the
ranking is per 1 000 steps (ranking.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..state import ProbeState

DEFAULT_EPOCHS = 10
PER_STEPS = 1000  # a job of unknown length is ranked by time and cost per this many steps
NOT_AN_EPOCH = 1e4  # a "pass" longer than this many probes is not an epoch (an endless sampler)


@dataclass(frozen=True)
class JobLength:
    """The equations' N_ep and N_it for this job, or why they are unknown."""

    n_ep: float
    n_it: int
    source: str
    steps: int | None = None  # total training steps, when the job is measured in steps
    unknown: str = ""  # set: the length is unknown (this says what is missing and how to give it)
    note: str = ""  # said beside the estimate (a pass that is not an epoch, ...)


def steps_per_epoch(state: ProbeState) -> tuple[int, str]:
    """N_it: the log's, else the program's plan (steps / epochs); 0 when a pass is no epoch.
    Returns it and a note when the log's was set aside."""
    n_it = state.steps_per_epoch
    plan = state.plan
    if not n_it and plan is not None and plan.steps and plan.epochs:
        n_it = max(1, plan.steps // plan.epochs)
    if n_it and state.steady.n:
        t_it = state.steady.mean()
        probe_s = state.last_t or state.elapsed
        if t_it and probe_s and n_it * t_it > NOT_AN_EPOCH * probe_s:
            return 0, (f"{n_it} steps a pass (~{n_it * t_it:,.0f} s, over {NOT_AN_EPOCH:,.0f} "
                       "times the probe) is not an epoch - a sampler drawing far past its data?")
    return n_it, ""


def passes_seen(state: ProbeState) -> tuple[float, int] | None:
    """Where a break can end each epoch's loop of steps sooner (the plan's
    ``earliest_pass_steps``: Spinning Up's PPO stops its policy steps once the KL is too far),
    the steps the epochs the probe saw whole took - on average - and how many it saw (every one
    but the last it stepped in); None: none seen whole, or no such break."""
    plan = state.plan
    if plan is None or not plan.earliest_pass_steps or state.phases:
        return None
    epochs = sorted(state.steps_by_epoch)
    whole = [state.steps_by_epoch[e] for e in epochs[:-1]]
    return (sum(whole) / len(whole), len(whole)) if whole else None


def ended_by_itself(state: ProbeState) -> bool:
    """The probe saw the whole run: training ended and the program exited 0, unstopped."""
    end = state.end
    return end is not None and end.status == "complete" and end.exit_code == 0 \
        and state.done is not None


def steps_seen_whole(state: ProbeState) -> int:
    """The training steps of a run the probe saw whole (its training ran to its own end), else
    0: a length no program text needs to say (a loop that trains until its loss is small)."""
    done = state.done
    return state.steps if ended_by_itself(state) and done is not None \
        and done.status == "complete" else 0


def resolve(state: ProbeState, epochs: float | None = None, steps: int | None = None,
            planned: tuple[float, str] | None = None) -> JobLength:
    """The job's length for this probe: ``epochs`` / ``steps`` from the user win, then
    ``planned`` (full runs of it: methodology 1), the program's plan, the log's planned epochs,
    then the default epochs (when N_it is known); failing all, the steps of a run the probe saw
    whole."""
    n_it, note = steps_per_epoch(state)
    plan = state.plan
    source = ""
    total: int | None = None
    n_ep: float | None = None
    if steps:
        total, source = int(steps), "user"
    elif epochs is not None:
        n_ep, source = float(epochs), "user"
    elif planned is not None:
        n_ep, source = planned
    elif plan is not None and plan.steps:
        total, source = plan.steps, f"the program: {plan.source}" if plan.source else "the program"
        passes = passes_seen(state)
        if passes is not None and plan.epochs and passes[0] < plan.steps / plan.epochs:
            # a break ends each epoch's loop sooner: its epochs as long as those the probe saw
            n_it = max(1, round(passes[0]))
            total = n_it * plan.epochs
            source += (f"; {n_it} steps an epoch, as the {passes[1]} it saw whole took (a "
                       "break ends each one's loop sooner)")
    elif plan is not None and plan.epochs:
        n_ep, source = float(plan.epochs), f"the program: {plan.source}" if plan.source else "the program"
    elif "fit-loop" in state.codes:  # each fit() call plans its own epochs: the total is unknown
        n_ep, source = float(DEFAULT_EPOCHS), "default: unknown (fit() in a loop; give --epochs)"
    elif state.start is not None and state.start.epochs:
        n_ep, source = float(state.start.epochs), "planned"
    elif state.phases and not state.first_phase_stopped and state.steps:
        # the first phase ran to its end before the next began (a demonstration step before
        # the training loop): its steps, as seen
        total, source = state.steps, "the first phase, seen to its end"
    elif n_it:
        n_ep, source = float(DEFAULT_EPOCHS), "default"
    if total is not None:
        if n_it and total > n_it:
            return JobLength(total / n_it, n_it, source, steps=total, note=note)
        return JobLength(1.0, total, source, steps=total, note=note)
    if n_ep is not None and n_it:
        return JobLength(n_ep, n_it, source, note=note)
    seen = steps_seen_whole(state)
    if seen:  # nothing says the length, but the probe saw the program train to its own end
        return JobLength(1.0, seen, "the whole run, seen by the probe", steps=seen, note=note)
    if n_ep is not None:
        missing = (f"{n_ep:g} epochs ({source}), but not the steps in one: "
                   + ("its passes are not epochs" if note else "no DataLoader or loop of known "
                      "length around the step"))
    elif plan is not None and plan.until:
        missing = f"the program trains until {plan.until}: a condition, no count to read"
    else:
        missing = "neither epochs nor steps were found in the program"
    return JobLength(0.0, 0, source, unknown=f"{missing}; give the job's length with --steps N or "
                     "--epochs N ([probe] steps / epochs)", note=note)
