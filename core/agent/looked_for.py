"""What the hook looks for in a program, said where a probe found no training step to time: at
the first-step timeout, or when the program ran to its exit without one (its run is then the
answer: core/model/estimate/seen_whole.py, ``untimed_run``)."""

from __future__ import annotations

# What the hook looks for, by the framework the program imported (the hook says which).
LOOKED_FOR = {
    "torch": "PyTorch: optimizer steps (torch.optim, step(closure) too), backward passes (a "
             "program with no optimizer), Lightning and Hugging Face trainers, DataLoader passes",
    "keras": "Keras: Model.fit, optimizer steps (apply / apply_gradients: custom loops)",
}
NO_STEP = "no-step"  # the log code of a run with no training step found (the run is the answer)
NO_STEP_HELP = ("in every Python process the command started; StepTimer times any other loop "
                "(docs/agent.md: 'Any loop')")


def no_step_help(frameworks: set[str]) -> str:
    """What was looked for, in the frameworks the program imported."""
    names = [LOOKED_FOR["torch"]] if "torch" in frameworks else []
    if frameworks & {"keras", "tensorflow"}:
        names.append(LOOKED_FOR["keras"])
    if not names:
        return ("no framework probecast times was imported (looked for "
                + "; ".join(LOOKED_FOR.values()) + ") " + NO_STEP_HELP)
    return "looked for " + "; ".join(names) + " " + NO_STEP_HELP
