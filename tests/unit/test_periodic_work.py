"""Periodic work every K steps across passes (an evaluation every 120 steps of a job of 50-step
epochs: a loop's `if global_step % 120 == 0: evaluate()`, Ignite's ITERATION_COMPLETED(every=120)).
Blind (2026-12-01), such a job's evaluation passes were counted once an epoch (18 for 7: +61 to
+80 %), an occurrence's slow step and its pass were two occurrences (half the cost each), and
the one occurrence the probe saw stood for all - the first, which warms up. The probe goes on to
time two where its budget affords it; the estimate charges the first as the first."""

from __future__ import annotations

import io
import json
import time
from typing import Any

import pytest

from probecast.core.agent.emit import Emitter
from probecast.core.agent.policy import StopPolicy
from probecast.core.agent.probe_session import ProbeSession
from probecast.core.model.events import EventReader
from probecast.core.model.phase_state import Periodic
from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing, RankOptions, estimate_row
from probecast.core.model.rows import Candidate
from probecast.core.model.state import fold_all

pytestmark = pytest.mark.unit


def stopped_at(monkeypatch: pytest.MonkeyPatch, budget: float) -> tuple[int | None, str]:
    """A probe of 30 steps of 0.05 s over epochs of 50, the plan's work every 120 steps: the
    step it stopped at, and what it said."""
    clock = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    out = io.StringIO()
    s = ProbeSession(Emitter(out=out, t0=clock[0] - 5.0, strict=True),
                     StopPolicy(max_steps=30, boundary_budget=budget), sample_interval=None,
                     under_agent=True)
    s.begin(steps_per_epoch=50)
    s.plan(epochs=18, steps=900, every=120, source="for epoch in range(18)",
           every_source="if global_step % 120 == 0")
    for n in range(900):
        clock[0] += 0.05
        if s.step(n // 50, n % 50):
            logs = [json.loads(line)["msg"] for line in out.getvalue().splitlines()
                    if json.loads(line)["ev"] == "log"]
            return n, " ".join(logs)
    return None, ""


def test_the_probe_times_two_occurrences_where_its_budget_affords_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    stopped, said = stopped_at(monkeypatch, budget=24.0)  # step 241: 211 steps, ~11 s
    assert stopped == 241 and "going on to step 241" in said
    stopped, said = stopped_at(monkeypatch, budget=20.0)  # the second past half the budget
    assert stopped == 121 and "going on to step 121" in said
    stopped, said = stopped_at(monkeypatch, budget=6.0)  # step 121 only: 91 steps, ~5 s
    assert stopped == 121 and "going on to step 121" in said
    stopped, said = stopped_at(monkeypatch, budget=1.0)  # neither
    assert stopped is not None and stopped < 120 and "periodic" not in said


def log(vals: list[tuple[int, float]], every: int = 120) -> list[dict[str, Any]]:
    """A probe's events: 242 steps of 0.033 s over epochs of 50 (a job of 18), the plan's work
    every ``every`` steps, and validation passes (after so many steps, taking so long) - as the
    probe of such a PyTorch loop recorded them (2026-12-01: passes of 1.57 s at steps 120 and
    240; no `epoch` events)."""
    t = 2.0
    events: list[dict[str, Any]] = [
        {"ev": "start", "t": 0.0, "v": 3, "probe": "p", "instance": "cpu-2core",
         "batch_size": 64, "workload": "loop", "steps_per_epoch": 50, "val_steps": 0,
         "framework": "torch 2.13.0"},
        {"ev": "init", "t": 2.0, "dt": 2.0},
        {"ev": "plan", "t": 2.0, "epochs": 18, "steps": 900, "every": every,
         "source": "for epoch in range(18)", "every_source": f"if step % {every} == 0"}]
    passes = dict(vals)
    for i in range(242):
        if i in passes:
            t += passes[i]
            events.append({"ev": "val", "t": t, "dt": passes[i], "epoch": i // 50, "steps": 16})
        t += 0.033
        events.append({"ev": "step", "t": t, "dt": 0.07 if i == 0 else 0.033, "epoch": i // 50,
                       "step": i % 50})
    return events + [{"ev": "done", "t": t, "dt": 0.0, "status": "probe-done"},
                     {"ev": "end", "t": t + 0.7, "dt": 0.7, "status": "probe-done",
                      "exit_code": 0}]


def row_of(events: list[dict[str, Any]]) -> Any:
    state = fold_all(list(EventReader().read(json.dumps(e) for e in events)))
    return state, estimate_row(Candidate("k", "k", state), Pricing(Catalog.embedded()),
                               RankOptions())


def test_evaluations_every_k_steps_across_passes_are_periodic_work_not_an_epochs() -> None:
    state, row = row_of(log([(120, 1.57), (240, 1.57)]))
    assert state.vals_are_periodic
    assert (row.terms["every"], row.terms["n_per"]) == (120, 7)  # at 120, 240, ... 840
    assert row.terms["t_per"] == pytest.approx(1.57)  # each pass, not halved by its quiet step
    assert row.terms["t_val"] is None  # not counted again once an epoch
    plain = 2.0 + 0.07 + 899 * 0.033 + 7 * 1.57 + 0.7  # the job as run: 43.4 s
    assert row.runtime_s == pytest.approx(plain, rel=0.03)


def test_passes_after_each_epoch_are_validation_not_periodic_work() -> None:
    """K a multiple of the epoch (every 100 steps, epochs of 50): passes seen after steps 50 and
    100 are the epochs' validation - one came where K does not."""
    state, _ = row_of(log([(50, 1.0), (100, 1.0), (150, 1.0), (200, 1.0)], every=100))
    assert not state.vals_are_periodic


def test_the_first_occurrence_is_charged_once_the_later_ones_as_seen() -> None:
    """A loop's first evaluation warms up (a new batch shape, a test function traced)."""
    seen = Periodic(120, (1.1, 0.2, 0.3), True, "")
    assert seen.per_s(7) == pytest.approx((1.1 + 6 * 0.25) / 7)
    assert seen.per_s(1) == pytest.approx(1.1)
    assert Periodic(120, (1.1,), True, "").per_s(7) == pytest.approx(1.1)  # one seen: all so
    assert Periodic(120, (), True, "").per_s(7) == 0.0  # reached, nothing slow: nothing
