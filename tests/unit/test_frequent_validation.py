"""Validation a few steps apart within each epoch (Lightning's ``val_check_interval=0.5`` with
``accumulate_grad_batches=4``: 16 steps an epoch, a validation pass after steps 8 and 16) is
counted as often as it runs. Before: a plan's ``every`` under MIN_EVERY was dropped - right for
work that lands inside a step's time, wrong for validation passes, which are events of their
own: one pass an epoch was counted, the mid-epoch one lost (-11.7 % on a real Lightning run,
80 epochs: 11.9 s against 13.4 s plain; -0.5 % now)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from probecast.core.model.events import EventReader
from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing, RankOptions, estimate_row
from probecast.core.model.rows import Candidate
from probecast.core.model.state import MIN_EVERY, fold_all

pytestmark = pytest.mark.unit


def probe_log(every: int | None) -> list[dict[str, Any]]:
    """Six epochs of 16 steps of 4 ms, a 16 ms validation pass after steps 8 and 16 of each
    (no `epoch` events: Lightning's probes have none, the steps' epochs say it)."""
    t = 3.0
    events: list[dict[str, Any]] = [
        {"ev": "start", "t": 0.0, "v": 4, "probe": "p", "instance": "cpu", "batch_size": 32,
         "workload": "lit", "steps_per_epoch": 16, "val_steps": 16, "framework": "torch"},
        {"ev": "init", "t": t, "dt": t},
        {"ev": "plan", "t": t, "epochs": 80, "source": "Trainer(max_epochs=80)",
         **({"every": every, "every_source": "Trainer(val_check_interval=0.5)"} if every else {})}]
    for epoch in range(6):
        for step in range(16):
            t += 0.004
            events.append({"ev": "step", "t": t, "dt": 0.004, "epoch": epoch, "step": step})
            if step in (7, 15):
                t += 0.016
                events.append({"ev": "val", "t": t, "dt": 0.016, "epoch": epoch, "steps": 16})
    return events + [{"ev": "end", "t": t + 1, "dt": 1.0, "status": "probe-done"}]


def row(events: list[dict[str, Any]]) -> Any:
    state = fold_all(list(EventReader().read(json.dumps(e) for e in events)))
    return estimate_row(Candidate("p", "p", state), Pricing(Catalog.embedded()), RankOptions())


def test_validation_every_few_steps_is_counted_each_time() -> None:
    assert 8 < MIN_EVERY  # the case: work this often is otherwise part of a steady step
    r = row(probe_log(every=8))
    assert r.terms["every"] == 8 and r.terms["n_per"] == (80 * 16 - 1) // 8
    assert r.terms["t_per"] == pytest.approx(0.016) and r.terms["t_val"] is None
    assert "159 x 0.016" in r.formula and not any("no validation" in n for n in r.notes)
    assert r.terms["t_it"] == pytest.approx(0.004)  # steady steps, none taken for the work


def test_without_the_plan_one_pass_an_epoch_is_what_is_known() -> None:
    r = row(probe_log(every=None))
    assert r.terms["every"] is None and r.terms["t_val"] == pytest.approx(0.016)
    # 79 passes fewer than the 159 the job runs: what the plan's interval adds
    assert row(probe_log(every=8)).runtime_s - r.runtime_s == pytest.approx(79 * 0.016)
