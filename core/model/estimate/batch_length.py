"""How long a run timed in blocks is at a batch size no complete run was made with.

A run stops at its target, so its length (the progress at which it got there, and the
evaluations on the way) comes from complete runs of the same workload (blocks.run_lengths). Those
are keyed by the global batch size, and a system of more nodes often trains a larger one than any
other system did: MLPerf v4.0's ssd reaches its target in 4 epochs at batch 64 to 320 and in 9 at
2528, resnet in 35 epochs at 1536 to 3200 and 77 at 57344. Such a run used to get no estimate
at all. Here its length is read off the complete runs of the nearest batch sizes, linearly in
log batch size - between the two that bracket it, or beyond the last two - and the bounds
span the runs it was read from as well as the value itself.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

from .blocks import RunLength


def length_at(lengths: Mapping[tuple[str, int], RunLength], workload: str,
              batch: int) -> RunLength | None:
    """The run length for (workload, batch): the complete runs of that batch size, else one
    read across the workload's other batch sizes; None when the workload has no complete run."""
    exact = lengths.get((workload, batch))
    if exact is not None:
        return exact
    known = sorted((b, length) for (w, b), length in lengths.items() if w == workload and b > 0)
    if not known:
        return None
    if batch <= 0:  # the log says no batch size: the batch size most complete runs used
        b, length = max(known, key=lambda bl: bl[1].runs)
        return replace(length, source=f"{length.source} at batch {b} (the run logs no batch size)")
    return _across(known, batch)


def _across(known: list[tuple[int, RunLength]], batch: int) -> RunLength:
    below = [bl for bl in known if bl[0] < batch]
    above = [bl for bl in known if bl[0] > batch]
    if below and above:
        pair, how = [below[-1], above[0]], "interpolated"
    else:
        side = below[-2:][::-1] if below else above[:2]
        pair, how = side, "extrapolated"
    (b1, near), rest = pair[0], pair[1:]
    if not rest:
        progress, evals, how = near.progress, near.evals, "taken as is"
    else:
        b2, other = rest[0]
        w = (math.log(batch) - math.log(b1)) / (math.log(b2) - math.log(b1))
        progress = max(0.0, near.progress + w * (other.progress - near.progress))
        evals = max(0.0, near.evals + w * (other.evals - near.evals))
    spanned = pair if how == "interpolated" else pair[:1]
    batches = " and ".join(str(b) for b, _ in sorted(pair))
    return replace(
        near, progress=progress, evals=evals,
        progress_low=min([progress, *(x.progress_low for _, x in spanned)]),
        progress_high=max([progress, *(x.progress_high for _, x in spanned)]),
        evals_low=min([evals, *(x.evals_low for _, x in spanned)]),
        evals_high=max([evals, *(x.evals_high for _, x in spanned)]),
        runs=sum(x.runs for _, x in pair),
        source=f"complete runs at batch {batches} (none at {batch}: length {how} in log "
               f"batch size)")
