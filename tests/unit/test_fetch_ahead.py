"""A loader that fetches ahead (Accelerate's DataLoaderShard draws one batch before it is
asked) makes the first optimizer step look like two batches, so the agent first reads half the
steps in an epoch and corrects itself a few steps later. The correction must reach the epoch
the probe waits for and the job's total: accelerate_loop at batch 16, recorded back to back,
was estimated at 456 steps of 916 (-47 %), its probe stopped at "an epoch boundary that did not
come" half an epoch past the wrong end."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from probecast.core.agent.emit import Emitter
from probecast.core.agent.policy import StopPolicy
from probecast.core.agent.probe_session import ProbeMeta, ProbeSession
from probecast.core.model.logstore import load_probe

pytestmark = pytest.mark.unit

RECORDED = (Path(__file__).resolve().parents[2] / "benchmarks" / "corpus"
            / "runs-shapes-interleaved" / "probe-accelerate_loop-b16-e4-c1.jsonl.gz")


def session() -> tuple[ProbeSession, io.StringIO]:
    out = io.StringIO()
    s = ProbeSession(Emitter(out=out, strict=True), StopPolicy(max_steps=30), ProbeMeta(),
                     sample_interval=None, under_agent=True)
    s.begin(steps_per_epoch=114)
    return s, out


def plans(out: io.StringIO) -> list[dict[str, object]]:
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    return [e for e in events if e["ev"] == "plan"]


def test_the_agent_waits_for_the_corrected_epoch_and_corrects_a_total_of_epochs() -> None:
    s, out = session()
    s.plan(epochs=4, steps=456, source="for epoch in range(num_epochs) x the loader")
    s.plan(steps_per_epoch=229)
    assert s.steps_per_epoch == 229 and s.planned_steps == 916
    assert plans(out)[-1]["steps"] == 916 and plans(out)[-1]["steps_per_epoch"] == 229


def test_a_total_the_program_gave_outright_stays() -> None:
    s, out = session()
    s.plan(steps=1000, source="argument --max_train_steps = 1000")
    s.plan(steps_per_epoch=229)
    assert s.steps_per_epoch == 229 and s.planned_steps == 1000
    assert "steps" not in plans(out)[-1]


def test_a_recorded_log_whose_correction_gave_only_the_epoch_reads_the_whole_job() -> None:
    state = load_probe(RECORDED).state
    assert state.steps_per_epoch == 229  # the correction's, not start's 114
    assert state.plan is not None and (state.plan.epochs, state.plan.steps) == (4, 916)
