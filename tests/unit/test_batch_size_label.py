"""The batch size a probe's log gives: the value a command that takes the batch size was given
wins; a command that does not take it is labelled by the program's own (its DataLoader's, fit()'s),
and none ("?") where the program says none - not the probe's (Lightning's backbone example, run
with no {batch_size}, was ranked as "batch 64" for a DataLoader of 32; a full-batch loop, which
has none, was ranked "batch 64" too)."""

from __future__ import annotations

import io
import json

import pytest

from probecast.core.agent.emit import Emitter
from probecast.core.agent.policy import StopPolicy
from probecast.core.agent.probe_session import ProbeMeta, ProbeSession
from probecast.core.run.runners import ProbeSpec

pytestmark = pytest.mark.unit


def start_batch(meta: ProbeMeta, program: int | None) -> int:
    out = io.StringIO()
    s = ProbeSession(Emitter(out=out, strict=True), StopPolicy(max_steps=5), meta,
                     sample_interval=None, under_agent=True)
    s.begin(steps_per_epoch=10, batch_size=program)
    start = next(json.loads(line) for line in out.getvalue().splitlines()
                 if json.loads(line)["ev"] == "start")
    return int(start["batch_size"])


def test_the_given_value_wins_then_the_programs_own_else_none() -> None:
    assert start_batch(ProbeMeta(batch_size=64), program=32) == 64
    assert start_batch(ProbeMeta(), program=32) == 32
    assert start_batch(ProbeMeta(), program=None) == 0


def test_a_command_without_the_placeholder_is_given_no_batch_size() -> None:
    given = ProbeSpec(key="k", label="k", batch_size=16, command="python t.py --bs {batch_size}")
    args = given.agent_args()
    assert args[args.index("--batch-size") + 1] == "16"
    assert args[-3:] == ["t.py", "--bs", "16"]
    own = ProbeSpec(key="k", label="k", batch_size=64, command="python t.py")
    args = own.agent_args()
    assert "--batch-size" not in args  # the program's own, else none: not the probe's 64
