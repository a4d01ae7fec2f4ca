"""One probe's runtime estimate: the job's length, the equations and their bounds.

``length`` (epochs or steps: from the user, full runs, the program's plan, the log), ``training``
(Eq. 5.1/5.3/5.4 and the step-budgeted form, as ``Terms``), ``stalls`` (the epoch boundaries'
forecast), ``drift`` (the step time's trend when the probe ends), ``phases`` (a program that
trains in loops one after another: each later phase), ``bounds`` (what the estimate
cannot know and the calibrated constants it ships with), ``blocks`` (runs timed in blocks, such
as imported MLPerf runs; ``batch_length``: such a run's length at a batch size no complete run
had) and ``runtime`` (``estimate_runtime``: the whole process, launch to exit).

May import: the model's top modules (events, state, pricing) and the agent's step statistics.
"""
