"""A probe that goes on past its stop to time an epoch boundary stops where the boundary does
not come: a program that makes a new DataLoader for each pass (Lightning Fabric's k-fold
example: a loader per fold) ran 1 500 steps, its whole job, under a probe of 30 steps that
waited for a boundary at step 150. The session driven as an adapter drives it, on a fake clock."""

from __future__ import annotations

import io
import json
import time

import pytest

from probecast.core.agent.emit import Emitter
from probecast.core.agent.policy import StopPolicy
from probecast.core.agent.probe_session import ProbeSession

pytestmark = pytest.mark.unit


def session(monkeypatch: pytest.MonkeyPatch) -> tuple[ProbeSession, io.StringIO, list[float]]:
    clock = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    out = io.StringIO()
    s = ProbeSession(Emitter(out=out, t0=clock[0] - 5.0, strict=True),
                     StopPolicy(max_steps=30, boundary_budget=60.0), sample_interval=None,
                     under_agent=True)
    s.begin(steps_per_epoch=150)
    s.plan(epochs=10, source="argument --epochs = 10")
    return s, out, clock


def run(s: ProbeSession, clock: list[float], epochs: list[int]) -> int | None:
    """Steps of the given epochs, 0.05 s each: the step at which the probe said stop."""
    index: dict[int, int] = {}
    for n, epoch in enumerate(epochs):
        clock[0] += 0.05
        if s.step(epoch, index.setdefault(epoch, 0)):
            return n
        index[epoch] += 1
    return None


def test_the_boundary_waited_for_is_timed_where_it_comes(monkeypatch: pytest.MonkeyPatch) -> None:
    s, out, clock = session(monkeypatch)
    stopped = run(s, clock, [0] * 150 + [1] * 150 + [2] * 150)
    assert stopped is not None and stopped >= 150  # past the first boundary, at the second
    assert "going on 120 steps" in out.getvalue()
    assert "did not come" not in s.policy.reason


def test_a_boundary_that_does_not_come_where_the_epoch_ends_stops_the_probe(
        monkeypatch: pytest.MonkeyPatch) -> None:
    s, out, clock = session(monkeypatch)
    stopped = run(s, clock, [0] * 1500)  # every pass a new loader: one long "epoch"
    assert stopped is not None and 150 <= stopped <= 30 + 120 + 60 + 1
    assert s.policy.reason.endswith("went on for an epoch boundary that did not come")
    assert s.stop_requested
    logs = [json.loads(line)["msg"] for line in out.getvalue().splitlines()
            if json.loads(line)["ev"] == "log"]
    assert any("going on 120 steps" in m for m in logs)


def test_validation_passes_of_two_lengths_make_a_line_through_them_not_above() -> None:
    """keras-io's bidirectional LSTM: passes of 5 and 10 batches took 0.275 s and 0.685 s. The
    free line's intercept is negative; cut to 0 with its slope kept (0.082 s a batch), it lay
    above both passes and made a 63-batch pass 5.2 s (the run's took 2.8 s)."""
    from probecast.core.model.linefit import line_fit

    a, b = line_fit([(5, 0.275), (10, 0.685)])
    assert a == 0.0 and 0.055 < b < 0.0685  # through the origin, between the passes' own
    assert line_fit([(5, 0.5), (10, 0.7)]) == pytest.approx((0.3, 0.04))  # a fixed cost
    assert line_fit([(5, 0.5), (10, 0.4)]) == pytest.approx((0.45, 0.0))  # no per-batch cost
