"""A probe of a job whose length nothing says goes on a while for the program's own end: as long
again as it took so far (at least 5 s), within the boundary budget - never when the length is
known or the budget is off. The session driven as an adapter drives it, on a fake clock."""

from __future__ import annotations

import io
import json
import time
from typing import Any

import pytest

from probecast.core.agent.emit import Emitter
from probecast.core.agent.policy import StopPolicy
from probecast.core.agent.probe_session import ProbeSession

pytestmark = pytest.mark.unit


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def session(monkeypatch: pytest.MonkeyPatch, budget: float, launched_ago: float
            ) -> tuple[ProbeSession, io.StringIO, Clock]:
    clock = Clock()
    monkeypatch.setattr(time, "monotonic", clock)
    out = io.StringIO()
    s = ProbeSession(Emitter(out=out, t0=clock.now - launched_ago, strict=True),
                     StopPolicy(max_steps=30, boundary_budget=budget), sample_interval=None,
                     under_agent=True)
    s.begin(steps_per_epoch=0)
    return s, out, clock


def steps(s: ProbeSession, clock: Clock, n: int, dt: float = 0.01) -> list[bool]:
    stops = []
    for i in range(n):
        clock.now += dt
        stops.append(s.step(0, s.total_steps))
    return stops


def logs(out: io.StringIO) -> list[dict[str, Any]]:
    return [e for e in map(json.loads, out.getvalue().splitlines()) if e["ev"] == "log"]


def test_a_job_of_unknown_length_is_probed_on_for_its_own_end(
        monkeypatch: pytest.MonkeyPatch) -> None:
    s, out, clock = session(monkeypatch, budget=30.0, launched_ago=2.0)
    assert not any(steps(s, clock, 30))  # max-steps reached, but it goes on
    said = logs(out)[-1]["msg"]
    assert "length is not in the program" in said and "up to 5 s" in said  # 2 s so far: 5 s
    clock.now += 4.0
    assert not any(steps(s, clock, 10))
    clock.now += 1.0
    assert steps(s, clock, 1) == [True]
    assert "which did not come" in s.policy.reason and s.policy.reason.startswith("max-steps 30")


def test_as_long_again_as_the_probe_so_far_within_the_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    s, out, clock = session(monkeypatch, budget=12.0, launched_ago=20.0)
    steps(s, clock, 30)
    assert "up to 12 s" in logs(out)[-1]["msg"]  # 20 s so far, the budget caps it
    clock.now += 11.0
    assert steps(s, clock, 1) == [False]
    clock.now += 1.5
    assert steps(s, clock, 1) == [True]


def test_a_job_whose_length_is_known_stops_at_its_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    s, out, clock = session(monkeypatch, budget=30.0, launched_ago=2.0)
    s.plan(steps=5000, source="the program")
    assert steps(s, clock, 30)[-1] is True
    assert not any("length is not in the program" in e["msg"] for e in logs(out))


def test_epochs_known_but_not_an_epochs_length_go_on_to_the_first_epochs_end(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A dataset of unknown cardinality (keras.io's make_csv_dataset example): fit() knows its
    epochs, not an epoch's steps - Keras learns them at the first epoch's end. Stopped at 30
    steps the probe could only be ranked per 1 000 steps: it goes on to that end, counts the
    epoch and says so in a plan (the estimate's N_it)."""
    s, out, clock = session(monkeypatch, budget=30.0, launched_ago=2.0)
    s.plan(epochs=3, source="fit(epochs=3)")
    assert not any(steps(s, clock, 45))  # past max-steps 30, the first epoch still going
    assert "an epoch's length is not known" in logs(out)[-1]["msg"]
    assert not any("length is not in the program" in e["msg"] for e in logs(out))
    clock.now += 0.01
    s.step(1, 0)  # the first epoch ended after 45 steps
    plans = [e for e in map(json.loads, out.getvalue().splitlines()) if e["ev"] == "plan"]
    assert plans[-1]["steps_per_epoch"] == 45 and s.steps_per_epoch == 45


def test_a_first_epoch_longer_than_the_budget_is_not_waited_for(
        monkeypatch: pytest.MonkeyPatch) -> None:
    s, out, clock = session(monkeypatch, budget=5.0, launched_ago=2.0)
    s.plan(epochs=3, source="fit(epochs=3)")
    assert not any(steps(s, clock, 30))
    assert "up to 5 s to the first epoch's end" in logs(out)[-1]["msg"]
    clock.now += 5.1
    assert steps(s, clock, 1) == [True]
    assert "which did not come" in s.policy.reason


def test_no_budget_no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    s, _, clock = session(monkeypatch, budget=0.0, launched_ago=2.0)
    assert steps(s, clock, 30)[-1] is True


def test_a_loop_until_a_condition_goes_on_for_a_few_budgets(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytorch/examples' REINFORCE trains until its running reward passes the threshold: no
    count to read, so only the run can tell its length - a short one (81.6 s plain here) is
    seen whole within four boundary budgets instead of being ranked per 1 000 steps."""
    s, out, clock = session(monkeypatch, budget=30.0, launched_ago=2.0)
    s.plan(until="running_reward > env.spec.reward_threshold (reinforce.py:101)")
    assert not any(steps(s, clock, 30))
    said = logs(out)[-1]["msg"]
    assert "trains until running_reward > env.spec.reward_threshold" in said and "up to 120 s" in said
    clock.now += 119.0
    assert steps(s, clock, 1) == [False]
    clock.now += 1.5
    assert steps(s, clock, 1) == [True]
    assert "it trains until a condition), which did not come" in s.policy.reason
    off, out, clock = session(monkeypatch, budget=0.0, launched_ago=2.0)  # the budget off: none
    off.plan(until="loss < 1e-3 (main.py:60)")
    assert steps(off, clock, 30)[-1] is True
