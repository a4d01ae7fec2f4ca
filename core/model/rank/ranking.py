"""From probes to a ranking: one typed row per (instance, batch size) with runtime, cost, bounds.

``build_ranking`` is the one pipeline - candidates (folded probe states) + options -> ranked
rows - used by the CLI, the app, exports and figures alike. Relative columns are normalised to
the best row (1.00 = fastest / cheapest), as the dissertation's Tables 5.6-5.13; ``pareto``
marks rows no other row beats on both time and cost.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING

from ..estimate.batch_length import length_at
from ..estimate.blocks import (block_estimate, is_block_log, measured_blocks,
                               merge_repeats, reached, run_lengths)
from ..estimate.bounds import describe_mechanism
from ..estimate.length import DEFAULT_EPOCHS, PER_STEPS, JobLength, resolve
from ..estimate.runtime import (Estimate, NoEstimate, estimate_runtime, measured_run,
                                per_steps_estimate, ran_untimed, untimed_run)
from ..memory.forecast import ProgramMemory
from ..memory.no_fit import add_memory, no_fit_groups, split_no_fit
from ..predict.predicted import predicted_rows
from ..pricing import cost_usd
from ..rows import Candidate, CrossingNote, Horizon, JsonValue, RankedRow
from ..state import ProbeState
from .one_length import one_unit_and_length
from .options import EpochPlan, Pricing, RankOptions
from .decisions import decision_lines, is_pareto, mark_undecided, undecided_pairs, verdict

if TYPE_CHECKING:  # pandas costs ~0.2 s to import: only for exports
    import pandas as pd

YEAR_S = 365 * 86400.0


@dataclass
class Ranking:
    """Ranked rows per workload (relative columns compare runs of one job only), and why some
    candidates are not in it."""

    groups: dict[str, list[RankedRow]] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    options: RankOptions = field(default_factory=RankOptions)
    # batch sizes that do not fit, per workload: rows that say so, beside the ranked ones
    no_fit: dict[str, list[RankedRow]] = field(default_factory=dict)
    memory: dict[str, ProgramMemory] = field(default_factory=dict)  # the forecast per workload

    def with_no_fit(self, workload: str | None = None) -> list[RankedRow]:
        """The ranked rows then the rows that do not fit (of one workload, or all)."""
        names = list(dict.fromkeys([*self.groups, *self.no_fit])) if workload is None else [workload]
        return [r for w in names for r in (*self.groups.get(w, ()), *self.no_fit.get(w, ()))]

    @property
    def rows(self) -> list[RankedRow]:
        return [r for g in self.groups.values() for r in g]

    def __len__(self) -> int:
        return sum(len(g) for g in self.groups.values())

    def to_frame(self) -> pd.DataFrame:
        """A pandas DataFrame of the flat columns (exports, notebooks)."""
        import pandas as pd

        return pd.DataFrame([r.as_json() for r in self.rows])


def job_length(state: ProbeState, options: RankOptions) -> JobLength:
    """The job's length for this probe under these options (length.py)."""
    planned = None
    if options.epoch_plan and state.start is not None:
        info = options.epoch_plan.get((state.start.workload, state.start.batch_size))
        if info is not None:
            planned = (info.n_ep, info.describe())
    return resolve(state, options.epochs, options.steps, planned)


def _cost(price: float | None, seconds: float, rule: str) -> float | None:
    return None if price is None else cost_usd(price, seconds, rule)


def estimate_row(candidate: Candidate, pricing: Pricing, options: RankOptions,
                 n_ep: float | None = None, per_steps: bool = False,
                 steps: int | None = None) -> RankedRow:
    """One candidate's row (not yet ranked): for ``n_ep`` epochs (a horizon) or ``steps``,
    else for the job's own length; a job of unknown length (or ``per_steps``) per 1 000 steps.
    Raises NoEstimate."""
    state = candidate.state
    if is_block_log(state):
        return _block_row(candidate, pricing, options)
    if ran_untimed(state):  # nothing to extrapolate: the run itself
        return _row(candidate, pricing, options, untimed_run(state), JobLength(1, 0, "its run"), [])
    length = (JobLength(n_ep, 0, "user") if n_ep is not None else resolve(state, steps=steps)
              if steps else job_length(state, options))
    if per_steps or length.unknown:
        return _per_steps_row(candidate, pricing, options, length)
    est: Estimate = estimate_runtime(state, length.n_ep, use_validation=options.use_validation,
                                     equation=options.equation, statistic=options.statistic,
                                     n_it=length.n_it or None)
    if n_ep is None and steps is None and options.epochs is None and options.steps is None:
        est = measured_run(state, est)  # a run that completed is its own answer
    notes = [length.note] if length.note else []
    if state.phases and (n_ep is not None or length.source == "user"):
        notes.append(f"the length given is phase 1's; the {len(state.phases)} later phase(s) "
                     "keep the lengths the program gives them")
    return _row(candidate, pricing, options, est, length, notes)


def _row(candidate: Candidate, pricing: Pricing, options: RankOptions, est: Estimate,
         length: JobLength, notes: list[str], per_steps: int | None = None) -> RankedRow:
    state = candidate.state
    price, price_source, rule = pricing.price_for(state)
    start = state.start
    assert start is not None
    notes = [*notes, *est.notes]
    if options.with_setup and candidate.setup_s:
        notes.append(f"includes the host's setup, {candidate.setup_s:.0f} s (measured once)")
    probe_s = state.end.t if state.end is not None else state.last_t
    setup = candidate.setup_s if options.with_setup and candidate.setup_s and not per_steps \
        else 0.0
    if setup:
        est = replace(est, runtime_s=est.runtime_s + setup, low_s=est.low_s + setup,
                      high_s=est.high_s + setup)
    if probe_s and est.runtime_s < 1.5 * probe_s and state.end is not None \
            and state.end.status == "probe-done" and not per_steps:
        notes.insert(0, "shorter than a probe - just run it")
    if est.runtime_s > YEAR_S:
        notes.insert(0, f"over a year: {est.formula()} - check the job's length "
                        f"({length.source or 'unknown'}; --steps / --epochs set it)")
    info = options.epoch_plan.get((start.workload, start.batch_size)) if options.epoch_plan else None
    return RankedRow(
        key=candidate.key, label=candidate.label, probe=start.probe, instance=start.instance,
        batch_size=start.batch_size, workload=start.workload, epochs=length.n_ep,
        epochs_source=length.source, steps=length.steps, per_steps=per_steps,
        length_unknown=length.unknown,
        runtime_s=est.runtime_s, runtime_low_s=est.low_s, runtime_high_s=est.high_s,
        cost_usd=_cost(price, est.runtime_s, rule), cost_low_usd=_cost(price, est.low_s, rule),
        cost_high_usd=_cost(price, est.high_s, rule), price_per_hour=price,
        price_source=price_source, billing=rule, equation=est.equation,
        terms=est.terms.as_dict(), uncertainty=dict(est.uncertainty), formula=est.formula(),
        notes=notes, probe_s=probe_s, setup_s=candidate.setup_s, with_setup=bool(setup),
        mechanism=describe_mechanism(state),
        status=candidate.status or state.status, steps_observed=state.steps,
        path=candidate.path, truncated=candidate.truncated,
        malformed_lines=candidate.malformed_lines,
        expected_accuracy=info.accuracy if info is not None else None,
    )


def _block_row(candidate: Candidate, pricing: Pricing, options: RankOptions) -> RankedRow:
    """A run timed in blocks (an imported MLPerf result): measured when it reached its target,
    else extrapolated to the length of complete runs of the same workload and batch size."""
    state = candidate.state
    assert state.start is not None
    if reached(state):
        est = measured_blocks(state)
        length = JobLength(est.terms.n_ep, 0, "the run itself")
        return replace(_row(candidate, pricing, options, est, length, []), mechanism="")
    run_length = length_at(options.run_lengths or {}, state.start.workload,
                           state.start.batch_size)
    if run_length is None:
        raise NoEstimate("a run timed in blocks stops at its target: its length comes from "
                         "complete runs of the same workload (rank them with it, or "
                         "--epochs-from FULL_RUNS)")
    est = block_estimate(state, run_length)
    return replace(_row(candidate, pricing, options, est,
                        JobLength(run_length.evals, 0, run_length.source), []), mechanism="")


def _per_steps_row(candidate: Candidate, pricing: Pricing, options: RankOptions,
                   length: JobLength) -> RankedRow:
    """A job whose length is unknown still ranks: time and cost per 1 000 steps (start-up
    apart: it is paid once, whatever the length)."""
    state = candidate.state
    est = per_steps_estimate(state, PER_STEPS, statistic=options.statistic)
    notes = [f"length unknown: ranked per {PER_STEPS:,} steps - {length.unknown}"] \
        if length.unknown else [f"ranked per {PER_STEPS:,} steps, as the other rows of this job"]
    if length.note:
        notes.append(length.note)
    shown = JobLength(0.0, PER_STEPS, length.source or "unknown", unknown=length.unknown)
    return _row(candidate, pricing, options, est, shown, notes, per_steps=PER_STEPS)


def horizons_for(candidate: Candidate, pricing: Pricing, options: RankOptions,
                 horizons: Iterable[float]) -> list[Horizon]:
    out: list[Horizon] = []
    for n in horizons if not ran_untimed(candidate.state) else ():  # no length: no horizon
        try:
            r = estimate_row(candidate, pricing, options, n_ep=float(n))
        except NoEstimate:
            continue
        out.append(Horizon(r.epochs, r.runtime_s, r.runtime_low_s, r.runtime_high_s, r.cost_usd,
                           r.equation))
    return out


EstimateCache = dict[str, tuple[tuple[object, ...], list[str], "RankedRow | None"]]


def _estimate_one(c: Candidate, pricing: Pricing, options: RankOptions,
                  cache: EstimateCache | None) -> tuple[list[str], RankedRow | None]:
    """Warnings and the row (None: no estimate, the reason among the warnings), from the cache
    when neither the candidate nor anything its estimate depends on changed."""
    stamp = (c.version, c.status, id(pricing), options.epochs, options.steps, options.use_validation,
             options.equation, options.statistic, id(options.epoch_plan), id(options.run_lengths),
             options.with_setup, c.setup_s)
    if cache is not None and c.version is not None:
        hit = cache.get(c.key)
        if hit is not None and hit[0] == stamp:
            # a copy: ranking sets its relative columns on the rows it is given
            return hit[1], copy.copy(hit[2])
    where = c.path or c.label
    notes = [f"{where}: {warning}" for warning in c.state.warnings()]
    row: RankedRow | None
    try:
        row = estimate_row(c, pricing, options)
    except NoEstimate as exc:
        notes.append(f"{where}: {why_no_estimate(c, exc)}")
        row = None
    if cache is not None and c.version is not None:
        cache[c.key] = (stamp, notes, row)
    return notes, row


def estimate_rows(candidates: Iterable[Candidate], pricing: Pricing, options: RankOptions,
                  cache: EstimateCache | None = None) -> tuple[list[RankedRow], list[str]]:
    """Rows for every candidate that supports an estimate, and one line for each that does not
    (or that the options leave out). With ``cache`` (a live board's), only candidates whose
    version changed are estimated again."""
    rows: list[RankedRow] = []
    skipped: list[str] = []
    for c in candidates:
        start = c.state.start
        if options.workload is not None and start is not None and start.workload != options.workload:
            continue
        notes, row = _estimate_one(c, pricing, options, cache)
        skipped.extend(notes)
        if row is None:
            continue
        if options.min_accuracy is not None:
            where = c.path or c.label
            if row.expected_accuracy is None:
                skipped.append(f"{where}: no accuracy known for batch {row.batch_size} "
                               "(--min-accuracy needs --epochs-from full runs of it); kept")
            elif row.expected_accuracy < options.min_accuracy:
                skipped.append(f"{where}: batch {row.batch_size} reaches "
                               f"{row.expected_accuracy:.3f} < --min-accuracy "
                               f"{options.min_accuracy:g}; left out")
                continue
        rows.append(row)
    return rows, skipped


def why_no_estimate(c: Candidate, exc: NoEstimate) -> str:
    if c.state.start is None and c.state.steps == 0 and c.state.end is None:
        return "empty log (no events) - was the probe started? Re-run it"
    if c.state.steps == 0 and not c.state.blocks:  # a run timed in blocks has no steps
        end = c.state.end
        status = end.status if end else "truncated"
        reason = f": {end.reason}" if end and end.reason else ""
        return f"no training steps ({status}{reason}) - check the probe's command and re-run it"
    return f"cannot estimate - {exc}"


def rank(rows: list[RankedRow], by: str = "time", weight: float = 0.5) -> list[RankedRow]:
    """Sorted rows with relative columns and the Pareto flag. Ties keep a stable order.

    ``by="weighted"`` orders by score = weight*rel_time + (1-weight)*rel_cost (the dissertation's
    future work): weight 1 is the fastest view, 0 the cheapest."""
    RankOptions(by=by, weight=weight)  # validates
    if not rows:
        return []
    best_time = min(r.runtime_s for r in rows)
    costs = [r.cost_usd for r in rows if r.cost_usd is not None and not math.isnan(r.cost_usd)]
    best_cost = min(costs) if costs else None
    flags = is_pareto([r.runtime_s for r in rows], [r.cost_usd for r in rows])
    for r, flag in zip(rows, flags):
        r.rel_time = r.runtime_s / best_time if best_time else math.nan
        r.rel_cost = (r.cost_usd / best_cost if best_cost and r.cost_usd is not None
                      else None)
        r.score = (weight * r.rel_time + (1 - weight) * r.rel_cost
                   if r.rel_cost is not None else None)
        r.pareto = flag

    def key(r: RankedRow) -> tuple[float, float, str, int, str]:
        primary = {"time": r.runtime_s, "cost": r.cost_usd, "weighted": r.score}[by]
        return (primary if primary is not None and not math.isnan(primary) else math.inf,
                r.runtime_s, r.instance, r.batch_size, r.probe)

    ordered = sorted(rows, key=key)
    mark_undecided(ordered, by)
    if by == "weighted":
        scores = [r.score for r in ordered if r.score is not None]
        best = min(scores) if scores else None
        for r in ordered:
            r.relative = r.score / best if best and r.score is not None else None
    else:
        for r in ordered:
            r.relative = r.rel_time if by == "time" else r.rel_cost
    return ordered


def add_predicted(groups: dict[str, list[RankedRow]], by_key: Mapping[str, Candidate],
                  pricing: Pricing, names: tuple[str, ...]) -> list[str]:
    """Each workload's rows with the named instances nobody probed, predicted (predict/)."""
    states = {k: c.state for k, c in by_key.items()}
    problems: list[str] = []
    for group in groups.values():
        rows, said = predicted_rows(group, names, states, pricing.catalog, pricing.price_of)
        group.extend(rows)
        problems += [p for p in said if p not in problems]
    return problems


def build_ranking(candidates: Iterable[Candidate], pricing: Pricing,
                  options: RankOptions, cache: EstimateCache | None = None) -> Ranking:
    """The pipeline: candidates + options -> estimates -> a ranking per workload."""
    candidates = list(candidates)
    fit, no_fit = split_no_fit(candidates)  # out of memory: a row that says so, no estimate
    if options.run_lengths is None and any(is_block_log(c.state) for c in fit):
        options = replace(options, run_lengths=run_lengths(c.state for c in fit))
    rows, skipped = estimate_rows(fit, pricing, options, cache)
    rows = merge_repeats(rows)
    groups: dict[str, list[RankedRow]] = {}
    for r in rows:
        groups.setdefault(r.workload, []).append(r)
    by_key = {c.key: c for c in candidates}
    for workload, group in groups.items():  # one job, one unit and one length
        groups[workload] = one_unit_and_length(group, by_key, partial(
            estimate_row, pricing=pricing, options=options), options.epochs or options.steps)
    if options.predict:
        skipped += add_predicted(groups, by_key, pricing, options.predict)
    ranking = Ranking({w: rank(g, options.by, options.weight) for w, g in groups.items()},
                      skipped, options, no_fit_groups(no_fit, options.workload))
    ranking.memory = add_memory(ranking.groups, ranking.no_fit, candidates, pricing.catalog)
    return ranking


__all__ = ["DEFAULT_EPOCHS", "Candidate", "CrossingNote", "JsonValue", "Estimate", "EstimateCache",
           "EpochPlan", "Horizon", "NoEstimate", "Pricing", "RankOptions", "RankedRow", "Ranking",
           "build_ranking",
           "job_length", "estimate_row", "estimate_rows", "horizons_for", "is_pareto", "rank",
           "undecided_pairs", "decision_lines", "verdict"]
