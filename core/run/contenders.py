"""Probe only the contenders (``[probe] contenders``, ``probe --contenders``): a live plan's
candidates - each (host, batch size) - probed a few at a time as the prediction plan
(core/model/predict/plan.py) says, the rest answered by predictions.

Per batch size (each its own job), the first round probes a few diverse candidates (the most,
the least and the median GPU compute); each later round predicts the unprobed candidates from
the probes so far and probes the most promising one whose predicted bounds overlap the
leader's, until none overlaps or all are probed. A candidate's GPU facts come from its host's
instance (the catalog, a ``[[catalog]]`` row); one without them cannot be predicted, so it is
probed, and the report says why. A probe that failed is no evidence: the plan goes on without
it. The board is told which instances are left unprobed, so every ranking of it (the app's, the
CLI's) shows them as predicted rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model.predict.model import Hardware
from ..model.predict.plan import Candidate, Probed, next_step
from ..model.predict.predicted import hardware_of_instance
from ..model.rank.ranking import RankedRow, RankOptions
from .board import Board
from .probe_plan import PlannedProbe
from .status import RunnerStatus


@dataclass
class ContenderReport:
    """What the contender plan probed, why, and what it left to prediction."""

    candidates: int = 0
    rounds: int = 0
    probed: list[str] = field(default_factory=list)  # probe keys, in the order started
    unpredictable: list[str] = field(default_factory=list)  # "key (instance): why" - probed
    predicted: list[str] = field(default_factory=list)  # probe keys never probed

    @property
    def saved(self) -> int:
        return len(self.predicted)

    def describe(self) -> list[str]:
        """The summary's lines: how many probes the plan saved, and each probe it could not
        avoid for want of GPU facts."""
        lines = [f"contenders: probed {len(self.probed)} of {self.candidates} candidate(s) in "
                 f"{self.rounds} round(s), {self.saved} probe(s) saved - predicted, not probed: "
                 f"{', '.join(self.predicted) or 'none'}"]
        lines += [f"contenders: probed {why}" for why in self.unpredictable]
        return lines


class ContenderPlan:
    """The plan's probes handed out round by round (``next_round``) as the probes so far and
    the predictions say."""

    def __init__(self, plan: list[PlannedProbe], board: Board, options: RankOptions) -> None:
        self.plan = plan
        self.board = board
        self.options = options
        catalog = board.pricing.catalog
        self.hardware: dict[str, Hardware | None] = {
            p.spec.key: hardware_of_instance(catalog, p.host.instance) for p in plan}
        self.started: set[str] = set()
        self.report = ContenderReport(candidates=len(plan))

    def _groups(self) -> dict[int, list[PlannedProbe]]:
        """The plan's probes per batch size: each batch size is its own job to predict."""
        groups: dict[int, list[PlannedProbe]] = {}
        for p in self.plan:
            groups.setdefault(p.spec.batch_size, []).append(p)
        return groups

    def next_round(self) -> list[PlannedProbe]:
        """The probes to run now; empty when the plan is decided. Tells the board which
        instances are left to prediction."""
        rows = {r.key: r for r in self.board.ranking(self.options).rows if not r.predicted}
        chosen: list[PlannedProbe] = []
        for probes in self._groups().values():
            chosen += self._unpredictable(probes) or self._contenders(probes, rows)
        for p in chosen:
            self.started.add(p.spec.key)
            self.report.probed.append(p.spec.key)
        if chosen:
            self.report.rounds += 1
        unprobed = [p for p in self.plan if p.spec.key not in self.started]
        self.report.predicted = [p.spec.key for p in unprobed]
        self.board.predict = tuple(dict.fromkeys(p.host.instance for p in unprobed))
        if not chosen:
            self._settle_unprobed(unprobed)
        return chosen

    def _settle_unprobed(self, unprobed: list[PlannedProbe]) -> None:
        """A launch puts every planned probe on the board up front: the ones never handed out
        end there as predicted, not left pending."""
        for p in unprobed:
            entry = self.board.entries.get(p.spec.key)
            if entry is not None and entry.active:
                self.board.feed(p.spec.key, RunnerStatus(
                    "stopped", "not probed: predicted (probe only the contenders)"))

    def _unpredictable(self, probes: list[PlannedProbe]) -> list[PlannedProbe]:
        """Candidates with no GPU facts, not probed yet: nothing can predict them."""
        out = [p for p in probes
               if self.hardware[p.spec.key] is None and p.spec.key not in self.started]
        for p in out:
            self.report.unpredictable.append(
                f"{p.spec.key} ({p.host.instance or 'no instance'}): no GPU facts for its "
                "instance in the catalog or a [[catalog]] row, so it cannot be predicted")
        return out

    def _contenders(self, probes: list[PlannedProbe], rows: dict[str, RankedRow]
                    ) -> list[PlannedProbe]:
        """The prediction plan's next probes among candidates with GPU facts; a started probe
        with no ranked row (it failed) drops out of the plan."""
        by_key = {p.spec.key: p for p in probes}
        probed = {k: Probed(r.runtime_s, r.runtime_low_s, r.runtime_high_s)
                  for k, r in rows.items() if k in by_key and k in self.started}
        candidates = [Candidate(k, hw) for k, p in by_key.items()
                      if (hw := self.hardware[k]) is not None
                      and (k in probed or k not in self.started)]
        step = next_step(candidates, probed)
        if step.done:  # decided; a candidate nothing could predict is probed, not lost
            return [by_key[c.name] for c in candidates
                    if c.name not in self.started and c.name not in step.predicted]
        return [by_key[k] for k in step.probe_next if k not in self.started]
