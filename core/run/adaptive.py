"""The adaptive probe: when the ranking cannot tell the leader from other candidates (P that the
leader is ahead below the threshold, core/model/rank/decisions.py), probe those contenders again,
longer - while more probing can narrow their bounds and the budget lasts.

More probing narrows only what the probe measures: the steady step time's interval (more steps)
and the epoch boundaries still to come (more boundaries: each one seen tells whether this run's
boundaries stall on the tf.data autotuner, and what they cost besides). It cannot narrow the
drift of a whole run's step time from a probe's, start-up variance or the noise floor; a
contender whose uncertainty is mostly those is not probed again, and the report says why. Where
the boundaries dominate (their spread, or - for a mechanism with no recorded runs - the stalls
allowed for on the high side), the re-probe goes for more boundaries (three times the boundary
budget, half again the steps); else for more steps (three times the steps, twice the boundary
budget). The budget is extra probe wall time: ``adaptive_budget`` seconds when configured, else
5 % of the leader's predicted job (a long job affords a longer look; a job shorter than a probe
affords none). The first probe's log is kept under ``superseded/``.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..agent.policy import DEFAULT_MAX_STEPS
from ..model.rank.ranking import RankedRow, RankOptions
from .board import Board
from .probe_plan import PlannedProbe, RunnerFactory, run_plan
from .sinks import output_path

REDUCIBLE_SHARE = 0.5  # probe again when steps + seen boundaries are at least half of sigma
MAX_ROUNDS = 2
JOB_SHARE = 0.05


@dataclass
class AdaptiveReport:
    rounds: int = 0
    reprobed: list[str] = field(default_factory=list)
    probes_again: int = 0  # probes run again, all rounds together (each left a superseded log)
    spent_s: float = 0.0
    budget_s: float = 0.0
    settled: bool = True
    why: str = ""

    before: dict[str, float] = field(default_factory=dict)  # P(leader ahead) per contender
    after: dict[str, float] = field(default_factory=dict)

    def describe(self) -> str:
        if not self.reprobed:
            return f"adaptive probe: nothing probed again - {self.why}"
        state = "the order is settled" if self.settled else f"still undecided - {self.why}"
        bought = ", ".join(f"{name} {self.before[name]:.0%} -> {self.after[name]:.0%}"
                           for name in self.before if name in self.after)
        return (f"adaptive probe: probed {', '.join(self.reprobed)} again, longer "
                f"({self.rounds} round(s), {self.spent_s:.0f} s of a {self.budget_s:.0f} s "
                f"budget): {state}" + (f"; P(leader ahead): {bought}" if bought else ""))


def contenders(rows: list[RankedRow]) -> list[RankedRow]:
    """The leader and every row it cannot be told from."""
    if not rows or not rows[0].undecided:
        return []
    return [rows[0], *[r for r in rows[1:] if r.undecided]]


def _unseen_boundaries(row: RankedRow) -> float:
    """The high side's allowance for stalls (a mechanism with no recorded runs), as a spread:
    the allowance is about a 90 % reach."""
    return row.uncertainty.get("unseen_high", 0.0) / 1.645


def reducible(row: RankedRow) -> bool:
    """Whether a longer probe can narrow this row: the step time's interval and the boundaries
    still to come make at least half of its sigma (the drift of a whole run from its probe, the
    start-up and the floor do not shrink with a longer probe)."""
    u = row.uncertainty
    sigma = u.get("sigma", 0.0)
    narrowable = math.hypot(u.get("steps", 0.0), u.get("boundaries", 0.0))
    return sigma > 0 and narrowable >= REDUCIBLE_SHARE * sigma


def boundaries_dominate(row: RankedRow) -> bool:
    u = row.uncertainty
    return math.hypot(u.get("boundaries", 0.0), _unseen_boundaries(row)) > u.get("steps", 0.0)


def longer(planned: PlannedProbe, row: RankedRow | None = None) -> PlannedProbe:
    """The same probe, longer: more boundaries where they dominate what can be narrowed."""
    s = planned.spec
    budget = s.boundary_budget if s.boundary_budget else 30.0
    probe_steps = s.max_steps or DEFAULT_MAX_STEPS  # stopped by its CI or time: as long again
    if row is not None and boundaries_dominate(row):
        spec = replace(s, max_steps=probe_steps + probe_steps // 2, target_ci=None, max_seconds=None,
                       boundary_budget=3 * budget)
    else:
        spec = replace(s, max_steps=3 * probe_steps, target_ci=None, max_seconds=None,
                       boundary_budget=2 * budget)
    return replace(planned, spec=spec)  # the same host preparation: setup is not run again


def _p_ahead(row: RankedRow, by: str) -> float | None:
    return row.p_faster if by == "time" else row.p_cheaper if by == "cost" else None


def supersede(log: Path) -> None:
    """Keep the earlier probe's log (and output) out of the way of the new one: nothing lost."""
    folder = log.parent / "superseded"
    folder.mkdir(exist_ok=True)
    for path in (log, output_path(log)):
        if path.exists():
            target = folder / path.name
            n = 1
            while target.exists():
                n += 1
                target = folder / f"{path.stem}.{n}{path.suffix}"
            shutil.move(str(path), target)


def _budget(rows: list[RankedRow], configured: float | None) -> float:
    if configured is not None:
        return configured
    return JOB_SHARE * rows[0].runtime_s if rows else 0.0


async def settle(board: Board, plan: list[PlannedProbe], options: RankOptions, *,
                 budget_s: float | None = None, concurrency: int = 8, timeout: float = 900.0,
                 factory: RunnerFactory | None = None) -> AdaptiveReport:
    """Probe undecided contenders again until the order is settled, nothing more can narrow
    it, or the budget is spent."""
    by_key = {p.spec.key: p for p in plan}
    report = AdaptiveReport()
    for round_no in range(1, MAX_ROUNDS + 1):
        ranking = board.ranking(options)
        groups = [rows for rows in ranking.groups.values() if contenders(rows)]
        if not groups:
            _record_after(report, ranking.groups.values(), options.by)
            report.settled = True
            report.why = report.why or "no undecided order"
            return report
        report.settled = False
        if round_no == 1:
            report.budget_s = sum(_budget(rows, budget_s) for rows in groups)
        chosen = _choose(board, groups, by_key, report)
        if not chosen:
            return report
        again = []
        for row, planned in chosen:
            supersede(planned.log_path)
            board.restart(row.key, planned.log_path)
            again.append(longer(planned, row))
            report.probes_again += 1
            if row.name not in report.reprobed:
                report.reprobed.append(row.name)
        _record_before(report, groups, options.by)
        await run_plan(board, again, concurrency=concurrency, timeout=timeout, factory=factory,
                       finish=False)  # the caller releases the hosts' project copies
        report.rounds = round_no
        for p in again:
            st = board.entries[p.spec.key].state
            report.spent_s += st.end.t if st.end is not None else st.last_t
    ranking = board.ranking(options)
    _record_after(report, ranking.groups.values(), options.by)
    report.settled = not any(contenders(rows) for rows in ranking.groups.values())
    if not report.settled:
        report.why = f"after {MAX_ROUNDS} rounds"
    return report


def _choose(board: Board, groups: list[list[RankedRow]], by_key: dict[str, PlannedProbe],
            report: AdaptiveReport) -> list[tuple[RankedRow, PlannedProbe]]:
    """The contenders worth probing again this round, cheapest first within what is left of
    the budget; none (and the reason in the report) when nothing qualifies."""
    wanted: list[tuple[RankedRow, PlannedProbe]] = []
    skipped_noise: list[str] = []
    for rows in groups:
        for row in contenders(rows):
            planned = by_key.get(row.key)
            if planned is None or board.entries[row.key].status != "done":
                continue
            if reducible(row):
                wanted.append((row, planned))
            else:
                skipped_noise.append(row.name)
    if not wanted:
        report.why = ("more probing would not narrow the bounds of "
                      f"{', '.join(skipped_noise) or 'the contenders'}: they come from how far "
                      "a whole run's step time drifts from a probe's, start-up variance and the "
                      "noise floor")
        return []
    # cost of probing again: about three times what each probe took
    cost = {row.key: 3 * (row.probe_s or 0.0) for row, _ in wanted}
    left = report.budget_s - report.spent_s
    chosen = []
    for row, planned in sorted(wanted, key=lambda rp: cost[rp[0].key]):
        if cost[row.key] <= left:
            chosen.append((row, planned))
            left -= cost[row.key]
    if not chosen:
        need = min(cost.values())
        report.why = (f"probing a contender again would take ~{need:.0f} s, over the budget "
                      f"({report.budget_s - report.spent_s:.0f} s left of {report.budget_s:.0f} s;"
                      " set probe.adaptive_budget for more)")
    return chosen


def _record_before(report: AdaptiveReport, groups: list[list[RankedRow]], by: str) -> None:
    for rows in groups:
        for row in rows[1:]:
            prob = _p_ahead(row, by)
            if row.undecided and prob is not None and row.name not in report.before:
                report.before[row.name] = prob


def _record_after(report: AdaptiveReport, groups: Iterable[list[RankedRow]], by: str) -> None:
    for rows in groups:
        for row in rows[1:]:
            prob = _p_ahead(row, by)
            if prob is not None and row.name in report.before:
                report.after[row.name] = prob
