"""Probe only the contenders: given the candidates and the probes so far, which to probe next and
which to predict (model.py).

The plan probes a few diverse candidates first - the most total compute (GPU TFLOP/s x count),
the least, the median - so the model sees the spread of the hardware, then
predicts every unprobed candidate and probes one only while its predicted bounds overlap the
leader's (the most promising first, predictions refitted after each probe). A candidate whose
bounds lie wholly behind the leader's is answered by its prediction: a probe saved.
Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .model import PRIORS, Hardware, Observed, Prediction, Priors, predict

FIRST_PROBES = 3
# a probe's own bounds where the caller has none (blocks.py's blind estimates from the first
# evaluation were within ~6 % at the median on MLPerf v3.1/v4.0; RESULTS.md §8)
PROBE_MARGIN = 0.10


@dataclass(frozen=True, slots=True)
class Candidate:
    """An (instance, batch size) the user may train on: its name and hardware."""

    name: str
    hardware: Hardware


@dataclass(frozen=True, slots=True)
class Probed:
    """What a probe (or a complete run) said: the runtime and its bounds."""

    runtime_s: float
    low_s: float
    high_s: float

    @classmethod
    def exact(cls, runtime_s: float, margin: float = PROBE_MARGIN) -> Probed:
        return cls(runtime_s, runtime_s * (1 - margin), runtime_s * (1 + margin))


@dataclass(frozen=True, slots=True)
class PlanStep:
    """The plan now: what to probe next (empty: decided), what is predicted, the leader."""

    probe_next: tuple[str, ...]
    predicted: dict[str, Prediction] = field(default_factory=dict)
    leader: str | None = None
    contenders: tuple[str, ...] = ()

    @property
    def done(self) -> bool:
        return not self.probe_next


def _compute(c: Candidate) -> float:
    return c.hardware.gpu.bf16_tflops * c.hardware.count


def _year(c: Candidate) -> int:
    return int(getattr(c.hardware.gpu, "year", 0) or 0)


def first_probes(cands: Sequence[Candidate], k: int = FIRST_PROBES) -> list[str]:
    """A few diverse candidates: the most total compute (the likeliest leader), the least and
    the median; the newest GPU first among equals."""
    if not cands:
        return []
    by_compute = sorted(cands, key=lambda c: (_compute(c), _year(c), c.name))
    order = [by_compute[-1].name, by_compute[0].name, by_compute[len(by_compute) // 2].name]
    order += [c.name for c in by_compute[::-1]]
    return list(dict.fromkeys(order))[:min(k, len(cands))]


def next_step(cands: Sequence[Candidate], probed: Mapping[str, Probed],
              priors: Priors = PRIORS) -> PlanStep:
    """Which candidate to probe next, given those probed so far."""
    first = [n for n in first_probes(cands) if n not in probed]
    if first:
        return PlanStep(tuple(first))
    by_name = {c.name: c for c in cands}
    obs = [Observed(n, by_name[n].hardware, p.runtime_s) for n, p in probed.items()
           if n in by_name]
    predicted = {c.name: pred for c in cands if c.name not in probed
                 for pred in [predict(c.hardware, obs, priors)] if pred is not None}
    if not probed:
        return PlanStep((), predicted)
    leader = min(probed, key=lambda n: probed[n].runtime_s)
    found = contenders({n: p.low_s for n, p in predicted.items()}, probed[leader].high_s)
    return PlanStep(found[:1], predicted, leader, found)


def contenders(predicted_low_s: Mapping[str, float], leader_high_s: float) -> tuple[str, ...]:
    """The unprobed candidates whose predicted bounds overlap the leader's, most promising
    first: only these are worth a probe."""
    return tuple(sorted((n for n, low in predicted_low_s.items() if low < leader_high_s),
                        key=lambda n: predicted_low_s[n]))


@dataclass(frozen=True, slots=True)
class Simulated:
    """A plan played against known runtimes: what it probed and the fastest it chose."""

    probed: tuple[str, ...]
    fastest: str
    predicted: dict[str, Prediction]

    def saved(self, candidates: int) -> int:
        return candidates - len(self.probed)


def simulate(cands: Sequence[Candidate], truth: Mapping[str, float],
             margin: float = PROBE_MARGIN, priors: Priors = PRIORS) -> Simulated:
    """Play the plan where each probe returns the candidate's true runtime within ``margin``."""
    probed: dict[str, Probed] = {}
    step = next_step(cands, probed, priors)
    for _ in range(len(cands)):
        if step.done:
            break
        for name in step.probe_next:
            probed[name] = Probed.exact(truth[name], margin)
        step = next_step(cands, probed, priors)
    best = min(probed, key=lambda n: probed[n].runtime_s) if probed else ""
    predicted = {n: p for n, p in step.predicted.items()
                 if not math.isnan(p.runtime_s)}
    return Simulated(tuple(probed), best, predicted)
