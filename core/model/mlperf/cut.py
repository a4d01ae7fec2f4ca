"""A run's start as a probe would have seen it: the log of a complete run cut at a moment, ending
as a probe that stopped there (``probe-done``). What the estimate of an imported run is judged
on (benchmarks/mlperf.py) and what ``probecast import mlperf --cut`` writes."""

from __future__ import annotations

from dataclasses import dataclass

from ..events import Done, End, Event, Start, Val

TIMED = ("init", "block", "val", "step")


@dataclass(frozen=True)
class Cut:
    """Where to cut: after the first evaluation, at a fraction of the run, or at seconds."""

    first_eval: bool = False
    fraction: float | None = None
    seconds: float | None = None

    def describe(self) -> str:
        if self.first_eval:
            return "first eval"
        if self.fraction is not None:
            return f"{self.fraction:.0%}"
        return f"{self.seconds:g} s"


def parse_cut(text: str) -> Cut:
    text = text.strip().lower()
    if text in ("first-eval", "first_eval", "eval"):
        return Cut(first_eval=True)
    try:
        if text.endswith("s"):
            return Cut(seconds=float(text[:-1]))
        if text.endswith("%"):
            return Cut(fraction=float(text[:-1]) / 100)
        value = float(text)
    except ValueError:
        raise ValueError(f"--cut {text!r}: first-eval, a fraction (0.1), a percentage (10%) or "
                         "seconds (600s)") from None
    if not 0 < value < 1:
        raise ValueError(f"--cut {text!r}: a fraction is between 0 and 1 (or give 600s)")
    return Cut(fraction=value)


def cut_at(events: list[Event], cut: Cut) -> float | None:
    """The moment of the cut in the log's time (None: the run ends before it)."""
    end = next((e for e in events if isinstance(e, End)), None)
    total = end.t if end is not None else max((e.t for e in events), default=0.0)
    if cut.first_eval:
        first = next((e for e in events if isinstance(e, Val)), None)
        return first.t if first is not None else None
    at = cut.fraction * total if cut.fraction is not None else (cut.seconds or 0.0)
    return at if at < total else None


def cut_run(events: list[Event], cut: Cut) -> list[Event]:
    """The events up to the cut, then a probe's stop; the whole log when the run ends first."""
    at = cut_at(events, cut)
    if at is None:
        return events
    kept: list[Event] = []
    last = 0.0
    for ev in events:
        if isinstance(ev, (Done, End)) or ev.t > at + 1e-9:
            continue
        kept.append(ev)
        if ev.__struct_config__.tag in TIMED:
            last = max(last, ev.t)
    start = next((e for e in kept if isinstance(e, Start)), None)
    reason = f"cut at {cut.describe()} of the run ({at:.0f} s) to estimate the rest"
    if start is not None:
        start.note = f"{start.note}; {reason}" if start.note else reason
    kept.append(Done(at, max(0.0, at - last), status="probe-done", reason=reason))
    kept.append(End(at, 0.0, status="probe-done", reason=reason))
    return kept
