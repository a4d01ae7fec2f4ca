"""The agent's own time inside the program's steps is no part of the plain program's run: the
session keeps what the hook spent in each steady step and `done` says its median (hook_ms); the
estimate takes it off the step time and off a run the probe saw whole. On a tutorial of 0.3 ms
steps the hook's ~0.05 ms was a sixth of each step (tut-nn_tutorial: +17.8 %, measured whole)."""

from __future__ import annotations

import io
import json
import time

import pytest

from probecast.core.agent.emit import Emitter
from probecast.core.agent.policy import StopPolicy
from probecast.core.agent.probe_session import ProbeSession
from probecast.core.agent.steady import StepSeries
from probecast.core.model.estimate.runtime import estimate_runtime, measured_run
from probecast.core.model.events import EventReader
from probecast.core.model.state import ProbeState

pytestmark = pytest.mark.unit


def test_take_off_shortens_every_step_and_never_below_a_tenth() -> None:
    s = StepSeries()
    for v in (0.010, 0.012, 0.011, 0.0005):
        s.add(v)
    before = s.interval("trimmed")[0]
    s.take_off(0.001)
    assert list(s.values) == pytest.approx([0.009, 0.011, 0.010, 0.00005])  # 0.0005: its tenth
    assert s.mean() == pytest.approx((0.009 + 0.011 + 0.010 + 0.00005) / 4)
    assert s.interval("trimmed")[0] < before  # the cached statistic is computed again


def test_done_says_the_hooks_median_time_over_the_steady_steps(monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    out = io.StringIO()
    s = ProbeSession(Emitter(out=out, t0=now[0], strict=True), StopPolicy(max_steps=10),
                     sample_interval=None, under_agent=True)
    s.begin(steps_per_epoch=5)
    for i in range(8):  # two epochs of 5 (3 of the second): steps 0 and 5 are not steady
        # the first step's own time is its length read; step 2's a first call's warm-up
        s.own += 0.004 if i in (0, 5) else 0.003 if i == 2 else 0.0002
        now[0] += 0.01
        s.step(i // 5, i % 5)
    s.mark_done("probe-done", "max-steps")
    done = [e for e in map(json.loads, out.getvalue().splitlines()) if e["ev"] == "done"][0]
    assert done["hook_ms"] == pytest.approx(0.2)  # the median: a warm-up is no steady cost


def test_no_hook_time_no_field(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    s = ProbeSession(Emitter(out=out, strict=True), StopPolicy(max_steps=10),
                     sample_interval=None, under_agent=True)
    s.begin(steps_per_epoch=5)
    for i in range(4):
        s.step(0, i)
    s.mark_done("probe-done")
    done = [e for e in map(json.loads, out.getvalue().splitlines()) if e["ev"] == "done"][0]
    assert "hook_ms" not in done


def _state(hook_ms: float | None, exit_code: int | None = None,
           agent_s: float | None = None) -> ProbeState:
    init = {"ev": "init", "t": 2.0, "dt": 2.0, **({"agent_s": agent_s} if agent_s else {})}
    lines = [{"ev": "start", "t": 0.0, "v": 4, "probe": "p", "instance": "i", "batch_size": 8,
              "workload": "w", "steps_per_epoch": 100, "val_steps": 0}, init]
    t = 2.0
    for i in range(60):
        dt = 0.5 if i == 0 else 0.001
        t += dt
        lines.append({"ev": "step", "t": t, "dt": dt, "epoch": 0, "step": i})
    done = {"ev": "done", "t": t, "dt": 0.0, "status": "complete" if exit_code is not None
            else "probe-done"}
    if hook_ms is not None:
        done["hook_ms"] = hook_ms
    lines.append(done)
    lines.append({"ev": "end", "t": t + 0.1, "dt": 0.1,
                  "status": "complete" if exit_code is not None else "probe-done",
                  **({"exit_code": exit_code} if exit_code is not None else {})})
    state = ProbeState()
    for ev in EventReader().read(json.dumps(x) for x in lines):
        state.fold(ev)
    return state


def test_the_estimate_takes_the_hooks_time_off_each_step() -> None:
    plain, hooked = _state(None), _state(0.2)
    assert hooked.hook_s == pytest.approx(0.0002)
    assert hooked.step_time()[0] == pytest.approx(plain.step_time()[0] - 0.0002)
    a, b = estimate_runtime(plain, 10), estimate_runtime(hooked, 10)
    # 10 epochs of 100 steps: 999 steady steps, each 0.2 ms shorter
    assert a.runtime_s - b.runtime_s == pytest.approx(999 * 0.0002, rel=0.02)
    assert any(n.startswith("the agent's own 0.200 ms") for n in b.notes)
    assert not any(n.startswith("the agent's own") for n in a.notes)


def test_a_run_seen_whole_is_the_measured_run_less_the_hooks_time() -> None:
    state = _state(0.2, exit_code=0)
    est = measured_run(state, estimate_runtime(state, 1))
    assert est.runtime_s == pytest.approx(state.end.t - 60 * 0.0002)  # type: ignore[union-attr]
    assert any(n.startswith("the agent's own") for n in est.notes)


def test_init_says_the_agents_own_start_up_and_the_import_callbacks_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from probecast.core.agent import hook, imports

    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    monkeypatch.setattr(imports, "SPENT", [0.0])
    # the launcher started at 1000.0 and the command at 1000.12; the hook's set-up took 0.05 s
    monkeypatch.setenv("PROBECAST_SPAWN", "1000.12")
    now[0] = 1000.25
    own = hook._own_start_up(1000.2, t0=1000.0)
    assert own == pytest.approx(0.12 + 0.05)
    imports.SPENT[0] = 0.03  # patching torch as the program imported it
    out = io.StringIO()
    s = ProbeSession(Emitter(out=out, t0=1000.0, strict=True), StopPolicy(max_steps=10),
                     sample_interval=None, under_agent=True)
    s.agent_init_s = own
    now[0] = 1003.0
    s.begin(steps_per_epoch=5)
    init = [e for e in map(json.loads, out.getvalue().splitlines()) if e["ev"] == "init"][0]
    assert init["dt"] == pytest.approx(3.0) and init["agent_s"] == pytest.approx(0.2)
    # not under the agent's launcher (a program that times itself): no such field
    out = io.StringIO()
    ProbeSession(Emitter(out=out, strict=True), StopPolicy(max_steps=10),
                 sample_interval=None).begin(steps_per_epoch=5)
    assert all("agent_s" not in e for e in map(json.loads, out.getvalue().splitlines()))


def test_the_estimate_and_a_run_seen_whole_take_the_agents_start_up_off() -> None:
    plain, hooked = _state(None), _state(None, agent_s=0.3)
    assert hooked.agent_init_s == pytest.approx(0.3) and hooked.t_init == pytest.approx(2.0)
    a, b = estimate_runtime(plain, 10), estimate_runtime(hooked, 10)
    assert a.runtime_s - b.runtime_s == pytest.approx(0.3)
    assert b.terms.t_init == pytest.approx(1.7)
    assert any(n.startswith("the agent's own 0.30 s before the first step") for n in b.notes)
    seen = _state(None, exit_code=0, agent_s=0.3)
    est = measured_run(seen, estimate_runtime(seen, 1))
    assert est.runtime_s == pytest.approx(seen.end.t - 0.3)  # type: ignore[union-attr]
    # never more than T_init itself (a log that says more is read as all of it)
    assert _state(None, agent_s=5.0).agent_init_s == pytest.approx(2.0)
