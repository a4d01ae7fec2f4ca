"""Runs timed only in blocks (MLPerf Training results: no per-step events) - the whole run from
its start, at the granularity it has.

Eq. 5.1's epoch form is the method's own answer where only whole epochs are timed; MLPerf
blocks differ in size (llama2_70b_lora's first block trains 1536 samples, the later ones 384),
so the form here scales the blocks by how far each took training:

    T = T_init + T_seen + (S - S_k) * r + (N_val - n_val) * T_val

``T_seen`` is the time of the k blocks and n_val evaluations the log saw, ``S_k`` the progress
they reached (samples, epochs - the log's unit), ``r`` the steady seconds per unit of the blocks
after the first (the first carries the warm-up; with one block, its own rate), ``S`` and
``N_val`` the run's length - the progress at which it reached its target and the evaluations on
the way, from complete runs of the same workload and batch size (methodology 1) - and ``T_val``
the evaluations' mean time. A run that reached its target is its own answer.

The bounds carry the rate's spread over the blocks seen widened by RATE_MARGIN (FIRST_MARGIN
with one block), the evaluations' spread, and the run length's spread over the complete runs:
how many evaluations a run needs to reach its target varies from run to run (it is reported
apart from the speed, benchmarks/mlperf.py).
"""

from __future__ import annotations

import copy
import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from ..rows import RankedRow
from ..state import ProbeState
from .training import MEASURED, Estimate, NoEstimate, Terms

BLOCKS_EQUATION = "blocks"
# The rate's margins, fitted on the v3.1 results (benchmarks/mlperf.py --fit: the 5th and 95th
# percentiles of the later blocks' rate against the rate the cut start saw), checked on v4.0.
RATE_MARGIN = (0.03, 0.05)  # (below, above) the blocks' own spread, with two blocks or more
FIRST_MARGIN = (0.50, 0.10)  # one block: its rate carries the warm-up (later blocks are faster)
# v3.1's 5th-95th percentiles of the rest's rate over the start's: 0.98-1.05 with two blocks or
# more, 0.39-1.10 with one (0.53-1.05 at the first evaluation)


@dataclass(frozen=True)
class RunLength:
    """How long a run measured in blocks is: the progress at which it reached its target and
    the evaluations on the way, with their spread over the runs it comes from."""

    progress: float
    evals: float
    source: str
    progress_low: float
    progress_high: float
    evals_low: float
    evals_high: float
    eval_share: float = 0.0  # evaluation time per training time in those runs
    runs: int = 1
    # a later evaluation's time over the first's (Eq. 5.3's T_val / T_val1) in those runs: the
    # first evaluation warms up (unet3d's is ~2x a later one), so one seen overstates the rest
    eval_ratio: float = 1.0
    eval_ratio_low: float = 1.0
    eval_ratio_high: float = 1.0
    # the first block's rate over a later one's in those runs (0: not known): the first carries
    # the warm-up, and in some benchmarks data loading after run_start (gnn: 3x a later block)
    warm_ratio: float = 0.0
    warm_ratio_low: float = 0.0
    warm_ratio_high: float = 0.0

    @classmethod
    def exact(cls, progress: float, evals: float, source: str) -> RunLength:
        return cls(progress, evals, source, progress, progress, evals, evals)


def is_block_log(state: ProbeState) -> bool:
    return bool(state.blocks) and state.steps == 0


def reached(state: ProbeState) -> bool:
    """The run reached its end by itself (a complete MLPerf run: its target)."""
    return state.end is not None and state.end.status == "complete" and state.done is not None


def own_length(state: ProbeState) -> RunLength:
    last = state.blocks[-1].progress or 0.0
    return RunLength.exact(last, float(len(state.vals)), "the run itself")


def run_lengths(states: Iterable[ProbeState]) -> dict[tuple[str, int], RunLength]:
    """(workload, batch size) -> the run length of its complete runs (median, range)."""
    groups: dict[tuple[str, int], list[ProbeState]] = {}
    for s in states:
        if s.start is not None and is_block_log(s) and reached(s):
            groups.setdefault((s.start.workload, s.start.batch_size), []).append(s)
    return {key: length_of(runs) for key, runs in groups.items()}


def length_of(runs: list[ProbeState]) -> RunLength:
    progress = [s.blocks[-1].progress or 0.0 for s in runs]
    evals = [float(len(s.vals)) for s in runs]
    shares = [sum(v.dt for v in s.vals) / max(1e-9, sum(b.dt for b in s.blocks)) for s in runs]
    ratios = [r for s in runs if (r := _eval_ratio(s)) is not None] or [1.0]
    warm = [w for s in runs if len(rates := _rates(s)) >= 3
            and (w := rates[0] / statistics.median(rates[1:])) > 0] or [0.0]
    return RunLength(statistics.median(progress), statistics.median(evals),
                     f"complete runs of it ({len(runs)})", min(progress), max(progress),
                     min(evals), max(evals), statistics.median(shares), len(runs),
                     statistics.median(ratios), min(ratios), max(ratios),
                     statistics.median(warm), min(warm), max(warm))


def _eval_ratio(state: ProbeState) -> float | None:
    timed = [v.dt for v in state.vals if v.dt > 0]
    if len(timed) < 2 or timed[0] <= 0:
        return None
    return statistics.mean(timed[1:]) / timed[0]


def _rates(state: ProbeState) -> list[float]:
    out, before = [], 0.0
    for b in state.blocks:
        if b.progress is None:
            continue
        if b.progress > before:
            out.append(b.dt / (b.progress - before))
        before = b.progress
    return out


def block_estimate(state: ProbeState, length: RunLength) -> Estimate:
    """The whole run from the blocks seen, for a run of ``length``."""
    rates = _rates(state)
    if not rates:
        raise NoEstimate("no block of training with its progress: nothing to extrapolate")
    t_init = state.t_init or 0.0
    seen = sum(b.dt for b in state.blocks) + sum(v.dt for v in state.vals)
    s_k = max((b.progress or 0.0) for b in state.blocks)
    later = rates[1:]
    notes: list[str] = []
    if later:
        r = statistics.median(later)
        r_lo, r_hi = min(later) * (1 - RATE_MARGIN[0]), max(later) * (1 + RATE_MARGIN[1])
    elif length.warm_ratio > 0:
        first = rates[0]
        r = first / length.warm_ratio
        r_lo = first / length.warm_ratio_high * (1 - RATE_MARGIN[0])
        r_hi = first / length.warm_ratio_low * (1 + RATE_MARGIN[1])
        notes.append(f"one block seen: later ones taken as {1 / length.warm_ratio:.2f}x its rate "
                     "(its warm-up, as in the complete runs)")
    else:
        r = rates[0]
        r_lo, r_hi = r * (1 - FIRST_MARGIN[0]), r * (1 + FIRST_MARGIN[1])
        notes.append("one block seen: its rate carries the warm-up (the low bound allows later "
                     "blocks to be faster)")
    timed = [v.dt for v in state.vals if v.dt > 0]
    t_val, v_lo, v_hi = _later_evaluation(timed, length, notes)
    n_seen = len(state.vals)
    rest = max(0.0, length.progress - s_k)
    total = t_init + seen + rest * r + max(0.0, length.evals - n_seen) * t_val
    low = (t_init + seen + max(0.0, length.progress_low - s_k) * r_lo
           + max(0.0, length.evals_low - n_seen) * v_lo)
    high = (t_init + seen + max(0.0, length.progress_high - s_k) * r_hi
            + max(0.0, length.evals_high - n_seen) * v_hi)
    if not timed and length.eval_share > 0 and length.evals > n_seen:
        # the evaluations to come are part of the run: expected at the share the complete runs
        # spent on them (left out, the estimate from a start before the first evaluation was
        # 9-12 % low on MLPerf v3.1/v4.0 - benchmarks/attribution.py), the low bound
        # leaves them out as before, the high allows them at the longest
        total += length.eval_share * rest * r
        high += length.eval_share * max(0.0, length.progress_high - s_k) * r_hi
        notes.append(f"no evaluation seen yet: {length.eval_share:.0%} of the training to come "
                     "added for them (as in the complete runs)")
    unit = state.blocks[-1].unit or "units"
    if length.runs > 1:
        notes.append(f"length from {length.source}: {length.progress_low:g}-"
                     f"{length.progress_high:g} {unit}, {length.evals_low:g}-"
                     f"{length.evals_high:g} evaluations to reach the target")
    terms = Terms(n_it=0, n_ep=length.evals, t_init=t_init, t_val1=t_val if timed else None,
                  t_val=t_val if timed else None, t_ep1=state.blocks[0].dt, t_ep2=r,
                  t_ep2_low=r_lo, t_ep2_high=r_hi, fit_s=total - t_init, unit=unit,
                  progress_seen=s_k, progress_total=length.progress, blocks_seen=len(state.blocks))
    return Estimate(total, min(low, total), max(high, total), BLOCKS_EQUATION, terms,
                    tuple(notes), {"rate": (r_hi - r_lo) * rest / 2,
                                   "length": (length.progress_high - length.progress_low) * r / 2})


def _later_evaluation(timed: list[float], length: RunLength,
                      notes: list[str]) -> tuple[float, float, float]:
    """T_val for the evaluations to come (and its low, high): the later ones seen (Eq. 5.3's
    T_val, without the first's warm-up); with only the first, it scaled by how later ones
    compared in the complete runs."""
    if len(timed) >= 2:
        later = timed[1:]
        return statistics.mean(later), min(later), max(later)
    if timed:
        first = timed[0]
        if length.eval_ratio != 1.0:
            notes.append(f"one evaluation seen: later ones taken as {length.eval_ratio:.2f}x it "
                         "(as in the complete runs)")
        return (first * length.eval_ratio, first * min(1.0, length.eval_ratio_low),
                first * max(1.0, length.eval_ratio_high))
    return 0.0, 0.0, 0.0


def measured_blocks(state: ProbeState) -> Estimate:
    """A run that reached its target: its own runtime (init_start to run_stop)."""
    assert state.end is not None
    length = own_length(state)
    est = block_estimate(state, length)
    total = state.end.t
    return Estimate(total, total, total, MEASURED, est.terms,
                    ("the whole run (it reached its target): the measured runtime",))


def merge_repeats(rows: list[RankedRow]) -> list[RankedRow]:
    """Complete runs of one (instance, batch size) timed in blocks are one row: the median run,
    bounds the fastest and slowest of them (how long a repeat takes varies with how soon it
    reaches its target)."""
    groups: dict[tuple[str, str, int], list[RankedRow]] = {}
    out: list[RankedRow] = []
    for r in rows:
        if r.equation == "measured" and r.terms.get("unit"):
            groups.setdefault((r.workload, r.instance, r.batch_size), []).append(r)
        else:
            out.append(r)
    for group in groups.values():
        group.sort(key=lambda r: r.runtime_s)
        mid = copy.copy(group[(len(group) - 1) // 2])
        if len(group) > 1:
            lo, hi = group[0], group[-1]
            mid.runtime_low_s, mid.runtime_high_s = lo.runtime_s, hi.runtime_s
            mid.cost_low_usd, mid.cost_high_usd = lo.cost_usd, hi.cost_usd
            mid.notes = [f"the median of {len(group)} complete runs ({lo.runtime_s / 60:.1f}-"
                         f"{hi.runtime_s / 60:.1f} min)"]
        out.append(mid)
    return out
