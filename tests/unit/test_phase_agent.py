"""The agent's side of phases without a framework: the loop a phase runs in, read from real
frames of a small program (anchors.py), and the session's phases (phases.py) driven as an
adapter drives them, its events checked against the schema."""

from __future__ import annotations

import io
import json
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from probecast.core.agent.anchors import inside, loop_anchor, trains_after
from probecast.core.agent.emit import Emitter
from probecast.core.agent.phases import MAX_PHASES
from probecast.core.agent.policy import StopPolicy
from probecast.core.agent.probe_session import ProbeSession

pytestmark = pytest.mark.unit

PROGRAM = """
def train(n, seen):
    for epoch in range(n):
        for batch in range(3):
            seen.append((where(), epoch))
        validate(seen)


def validate(seen):
    for batch in range(2):
        seen.append((where(), "val"))


seen = []
for epoch in range(2):  # the first phase
    for batch in range(2):
        seen.append((where(), "first"))
train(1, seen)  # the second
train(1, seen)  # the third: the same function, called from another line
finish = seen
"""


def run_program(tmp_path: Path) -> list[tuple[Any, Any]]:
    """The program above, from a file of its own (user code), recording the frame at each of
    its 'steps'; returns (anchor, label) for each."""
    path = tmp_path / "phased.py"
    path.write_text(textwrap.dedent(PROGRAM))
    code = compile(path.read_text(), str(path), "exec")
    # anchors are read while the program runs: record them as it goes
    anchors: list[Any] = []

    def where_anchor() -> int:
        frame = sys._getframe(1)
        anchors.append((loop_anchor(frame), [inside(a, frame) for a, _ in anchors if a]))
        return len(anchors) - 1

    scope: dict[str, Any] = {"where": where_anchor, "__name__": "phased"}
    exec(code, scope)
    return [(anchors[i][0], label) for i, label in scope["finish"]]


def test_each_loop_and_each_call_of_a_loop_is_its_own_anchor(tmp_path: Path) -> None:
    seen = run_program(tmp_path)
    first = {a.text for a, label in seen if label == "first"}
    assert first == {"for epoch in range(2) (phased.py:15)"}  # the outermost loop around it
    trains = [a for a, label in seen if label in (0,)]
    assert len({(a.first, a.callers) for a in trains}) == 2  # train() called from two lines
    assert all(a.text.startswith("for epoch in range(n)") for a in trains)
    # a validation pass called from inside the loop is inside it: its anchor is the loop's
    vals = [a for a, label in seen if label == "val"]
    assert {a.text for a in vals} <= {a.text for a in trains}


def test_training_written_after_a_loop_is_found_in_the_source(tmp_path: Path) -> None:
    seen = run_program(tmp_path)
    first = next(a for a, label in seen if label == "first")
    assert trains_after(first) == "phased.py:18"  # train(1, seen), the line after the loop
    last = [a for a, label in seen if label == 0][-1]
    # the program's own callers only (this test's frames, which ran it, are user code too)
    last = replace(last, callers=tuple(c for c in last.callers if c[0].endswith("phased.py")))
    assert trains_after(last) is None  # nothing trains after the third


def session() -> tuple[ProbeSession, io.StringIO]:
    out = io.StringIO()
    s = ProbeSession(Emitter(out=out, t0=0.0, strict=True), StopPolicy(max_steps=3),
                     sample_interval=None, under_agent=True)
    return s, out


def test_a_new_phase_gets_its_own_policy_steps_and_log_fields() -> None:
    s, out = session()
    s.begin(steps_per_epoch=10)
    stops = [s.step(0, i) for i in range(3)]
    assert stops == [False, False, True]
    s.end_phase(at_exit=False)
    assert s.phase_stopped and s.left_at is not None
    s.new_phase(steps_per_epoch=5, loop="for x in loader (f.py:9)", anchor=None)
    assert s.phase == 2 and not s.phase_stopped and s.policy.steps == 0
    assert [s.step(0, i) for i in range(3)] == [False, False, True]  # a fresh count
    s.end_phase(at_exit=False)
    s.at_exit()
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    phase = next(e for e in events if e["ev"] == "phase")
    assert phase == {**phase, "index": 2, "steps_per_epoch": 5, "previous": "probe-done"}
    steps = [e for e in events if e["ev"] == "step"]
    assert [e.get("phase") for e in steps] == [None] * 3 + [2] * 3
    done = [e for e in events if e["ev"] == "done"]
    assert len(done) == 1 and done[0]["status"] == "probe-done" and s.trained
    assert sum(1 for e in events if e.get("code") == "phase") == 2


def test_phases_past_the_budget_are_refused() -> None:
    s, _ = session()
    s.begin(steps_per_epoch=10)
    while s.more_phases():
        s.new_phase(steps_per_epoch=1, loop="", anchor=None)
    assert s.phase == MAX_PHASES


def test_in_process_use_has_no_phases() -> None:
    """ProbeCallback / StepTimer in the program itself: the stop ends the program, as before."""
    s = ProbeSession(Emitter(out=io.StringIO(), t0=0.0), StopPolicy(max_steps=3),
                     sample_interval=None, under_agent=False)
    assert not s.phases_enabled and not s.more_phases()


CALLED_BACK = """
import json


def training_step(batch):  # a LightningModule's, stepping its own two optimizers
    seen.append((where(), "g"))  # optimizer_g.step()
    seen.append((where(), "d"))  # optimizer_d.step()
    return batch


def fit(n):  # the framework's loop calls the program back: json's decoder stands in
    json.loads("[" + ",".join(["{}"] * n) + "]", object_hook=training_step)


seen = []
fit(2)  # the first trainer
fit(1)  # the second, from another line
finish = seen
"""


def test_a_step_in_a_callback_the_framework_loops_over_is_anchored_at_the_call_to_it(
        tmp_path: Path) -> None:
    """Lightning's manual optimization: `opt_g.step()` and `opt_d.step()` are lines of the
    program's `training_step`, which the Trainer's loop calls back - each line was taken for a
    loop of its own, a phase a step (pytorch-lightning tutorials' basic GAN: 16 phases in 0.6 s,
    then stopped). The anchor is the line that calls into the framework, as with no callback."""
    path = tmp_path / "gan.py"
    path.write_text(textwrap.dedent(CALLED_BACK))
    anchors: list[Any] = []

    def where_anchor() -> int:
        anchors.append(loop_anchor(sys._getframe(1)))
        return len(anchors) - 1

    scope: dict[str, Any] = {"where": where_anchor, "__name__": "gan"}
    exec(compile(path.read_text(), str(path), "exec"), scope)  # noqa: S102
    first, second = ([anchors[i] for i, _ in scope["finish"][a:b]] for a, b in ((0, 4), (4, 6)))
    assert all(a is not None and a.text.startswith("json.loads(") for a in first + second)
    assert len({(a.first, a.callers) for a in first}) == 1  # one phase: both optimizers' steps
    assert (second[0].first, second[0].callers) != (first[0].first, first[0].callers)
