"""One job, one unit and one length across its candidates. One unit: if any row's length is
unknown, every row goes per 1 000 steps. One length: where an early stop ended some candidates'
runs at different epochs (an unseeded stop epoch is a draw), or ended some and not others, a
ranking by each run's own length would rank the draws, not the hosts - every candidate of that
batch size is estimated at one length instead, the median of the stop epochs (or steps, where
the stop counts steps) the probes saw."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping

from ..estimate.early_stop import UPPER_BOUND, stopped_after
from ..rows import Candidate, RankedRow

# estimate_row with its pricing and options: the candidate's row for n_ep epochs
Estimator = Callable[..., RankedRow]


def one_unit_and_length(group: list[RankedRow], by_key: Mapping[str, Candidate],
                        estimate: Estimator, given: float | None) -> list[RankedRow]:
    """The group's rows in one unit, then (no length ``given`` by the user) at one length."""
    if any(r.per_steps for r in group) and not all(r.per_steps for r in group):
        group = [r if r.per_steps else estimate(by_key[r.key], per_steps=True) for r in group]
    return group if given is not None else at_one_length(group, by_key, estimate)


def at_one_length(group: list[RankedRow], by_key: Mapping[str, Candidate],
                  estimate: Estimator) -> list[RankedRow]:
    """The group's rows, those of a batch size whose early stops disagree estimated again at
    the median stop epoch (said in each row's notes); the others as they were."""
    by_batch: dict[int | None, list[RankedRow]] = {}
    for r in group:
        by_batch.setdefault(r.batch_size, []).append(r)
    out: list[RankedRow] = []
    for batch, rows in by_batch.items():
        ended = [s for r in rows if (s := stopped_after(by_key[r.key].state)) is not None]
        stops, units = [k for k, _ in ended], {unit for _, unit in ended}
        if len(rows) < 2 or not stops or len(units) > 1 or any(
                r.per_steps or r.predicted for r in rows) \
                or (len(stops) == len(rows) and len(set(stops)) == 1):
            out += rows
            continue
        k, unit = statistics.median_low(stops), units.pop()
        note = (f"early stops ended {len(stops)} of the {len(rows)} batch-{batch} runs after "
                f"{', '.join(map(str, sorted(stops)))} {unit}: each is ranked at {k} {unit} "
                "(their median), one length for all - a run's own stop point is a draw")
        for r in rows:
            row = estimate(by_key[r.key], **({"steps": k} if unit == "steps" else
                                              {"n_ep": float(k)}))
            # (the planned epochs' upper-bound note is not this length's)
            row.notes[:] = [note, *(n for n in row.notes if not n.startswith(UPPER_BOUND))]
            out.append(row)
    return out
