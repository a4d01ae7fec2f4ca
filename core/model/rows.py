"""The typed rows that cross every layer: a candidate to rank and its ranked row (what the CLI,
the app, the exports and the figures all read, by attribute). Built by ranking.py."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Union

from .state import ProbeState

# the share of a device's memory a batch size must leave free to be said to fit
HEADROOM = 0.10

JsonValue = Union[str, int, float, bool, None, list["JsonValue"], dict[str, "JsonValue"]]


@dataclass(slots=True)
class Candidate:
    """One probe to rank: its folded state and where it came from."""

    key: str
    label: str
    state: ProbeState
    status: str = ""  # the runner's status (live) or the log's end status (files)
    path: str | None = None
    truncated: bool = False
    malformed_lines: int = 0
    version: int | None = None  # bumps on every change (a live board); None: never cached
    setup_s: float | None = None  # the host's `[probe] setup`, once (logstore.setup_seconds)


@dataclass(frozen=True, slots=True)
class Horizon:
    epochs: float
    runtime_s: float
    runtime_low_s: float
    runtime_high_s: float
    cost_usd: float | None
    equation: str


@dataclass(frozen=True, slots=True)
class CrossingNote:
    """Where a row trades places with another as N_ep grows ("faster from 5 epochs on")."""

    metric: str  # runtime | cost
    epochs: float
    other: str
    ahead_after: bool
    sentence: str


@dataclass(slots=True)
class RankedRow:
    """One candidate at one horizon: estimate, cost, bounds and, once ranked, its standing."""

    key: str
    label: str
    probe: str
    instance: str
    batch_size: int
    workload: str
    epochs: float
    epochs_source: str  # where the job's length came from (epochs or steps)
    runtime_s: float  # the whole job (per_steps: per that many steps, start-up apart)
    runtime_low_s: float
    runtime_high_s: float
    cost_usd: float | None
    cost_low_usd: float | None
    cost_high_usd: float | None
    price_per_hour: float | None
    price_source: str
    billing: str
    equation: str
    terms: dict[str, float | int | str | None]
    uncertainty: dict[str, float]  # seconds of uncertainty on the total, by source
    formula: str
    notes: list[str]
    status: str
    steps_observed: int
    path: str | None = None
    truncated: bool = False
    malformed_lines: int = 0
    expected_accuracy: float | None = None
    crossovers: list[CrossingNote] = field(default_factory=list)
    horizons: list[Horizon] = field(default_factory=list)
    # set by rank()
    rel_time: float = math.nan
    rel_cost: float | None = None
    score: float | None = None
    relative: float | None = None
    pareto: bool = False
    undecided: bool = False  # P(leader ahead) below the threshold in this view (decisions.py)
    p_faster: float | None = None  # P(the leader of this ranking is faster than this row)
    p_cheaper: float | None = None  # P(the leader of this ranking is cheaper than this row)
    decision_basis: str = ""  # what P(leader ahead) in this view rests on, in words
    mechanism: str = ""  # what drives the epochs and whose bound constants apply (bounds.py)
    probe_s: float = 0.0  # what the probe itself ran (wall seconds)
    setup_s: float | None = None  # the host's setup (seconds), measured once per host
    with_setup: bool = False  # runtime, bounds and cost include setup_s (RankOptions.with_setup)
    steps: int | None = None  # the job's total training steps, when it is measured in steps
    per_steps: int | None = None  # set: the job's length is unknown; runtime/cost per this many steps
    length_unknown: str = ""  # ... what is missing and how to give it
    memory: RowMemory | None = None  # peak memory, and its program's forecast (memory.py)
    predicted: bool = False  # nobody probed it: predicted from other hardware (predict/)
    predicted_from: str = ""  # ... what the prediction rests on, in words

    @property
    def mark(self) -> str:
        """How far to trust the row's probe: '' whole, '…' still running, '!' failed or
        stopped (estimated from what it measured), '?' its log ends without an `end`, '✗' the
        batch size does not fit (no estimate: a row that says so), '~' predicted, not probed."""
        if self.predicted:
            return "~"
        if self.status == "does-not-fit":
            return "✗"
        if self.status in ("failed", "stopped"):
            return "!"
        if self.status in ("running", "pending", "connecting", "uploading"):
            return "…"
        if self.truncated:
            return "?"
        return ""

    @property
    def does_not_fit(self) -> bool:
        return self.status == "does-not-fit"

    @property
    def length(self) -> str:
        """The job's length as the views say it: "8 epochs (planned)", "5,000 steps (the
        program: ...)", or "per 1,000 steps" when it is unknown."""
        if self.per_steps:
            return f"per {self.per_steps:,} steps (start-up apart)"
        phases = self.terms.get("phases")
        later = int(phases) - 1 if isinstance(phases, (int, float)) and phases > 1 else 0
        more = f" in phase 1, + {later} later phase{'s' if later > 1 else ''}" if later else ""
        if self.steps:
            return f"{self.steps:,} steps ({self.epochs_source}){more}"
        return f"{self.epochs:g} epochs ({self.epochs_source}){more}"

    @property
    def batch_label(self) -> str:
        """The batch size, or "?" where the log does not say it (a Keras dataset batched by
        the program, with nothing configured)."""
        return str(self.batch_size) if self.batch_size else "?"

    @property
    def name(self) -> str:
        """"g5.xlarge b64"; the instance alone where the log says no batch size."""
        where = self.instance or self.probe
        return f"{where} b{self.batch_size}" if self.batch_size else where

    def as_json(self) -> dict[str, JsonValue]:
        """JSON-ready: NaN becomes null; nested records become objects."""
        out: dict[str, JsonValue] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name in ("horizons", "crossovers"):
                out[f.name] = [_clean(dataclasses.asdict(h)) for h in value]
            elif f.name == "memory":
                out[f.name] = _clean(value.as_json()) if value is not None else None
            elif isinstance(value, float) and math.isnan(value):
                out[f.name] = None
            elif isinstance(value, dict):
                out[f.name] = _clean(value)
            elif isinstance(value, list):
                out[f.name] = list(value)
            else:
                out[f.name] = value
        return out


def _clean(d: Mapping[str, object]) -> dict[str, JsonValue]:
    return {k: (None if isinstance(v, float) and math.isnan(v) else v)  # type: ignore[misc]
            for k, v in d.items()}


@dataclass(frozen=True, slots=True)
class RowMemory:
    """A ranked row's memory: what its probe reached, and its program's forecast for its batch
    size on every instance (``fits_on``) with the largest that fits there (``largest_on``)."""

    batch_size: int
    ran_out: bool  # its probe ran out of memory (``fits_on``: the forecast, with the headroom)
    device: str
    basis: str
    peak_mb: float | None  # the probe's peak of ``basis``
    limit_mb: float | None  # what it ran under (a GPU's memory, a host limit)
    host_peak_mb: float | None
    reason: str = ""  # why it does not fit
    forecast: str = ""  # what the forecast rests on ("" without one)
    reach: str = ""  # how far this batch size is from the probed ones
    intercept_mb: float | None = None
    per_sample_mb: float | None = None
    headroom: float = HEADROOM
    fits_on: dict[str, bool] = field(default_factory=dict)
    largest_on: dict[str, int | None] = field(default_factory=dict)
    proxy: bool = False

    def as_json(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self.__slots__}
