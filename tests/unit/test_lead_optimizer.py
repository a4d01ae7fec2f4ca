"""Several optimizers in one loop: the first to step leads, and the others' steps belong to its
iteration - a GAN's discriminator and generator step once each a batch, one training step (the
public DCGAN example was estimated at half its time when each counted) - unless another one
steps again before the lead does: then it trains alone and leads. Through the real PyTorch
loops adapter and ProbeSession, the optimizers' post-step hook called as torch calls it."""

from __future__ import annotations

import io
import json
import time

import pytest

from probecast.core.agent.adapters.lead import LeadOptimizer
from probecast.core.agent.adapters.torch_loops import TorchLoopsAdapter
from probecast.core.agent.emit import Emitter
from probecast.core.agent.policy import StopPolicy
from probecast.core.agent.probe_session import ProbeMeta, ProbeSession

pytestmark = pytest.mark.unit


class Optimizer:
    def __init__(self, name: str) -> None:
        self.name = name


def steps_told(sequence: list[Optimizer]) -> int:
    out = io.StringIO()
    session = ProbeSession(Emitter(out=out, t0=time.monotonic()), StopPolicy(full=True),
                           ProbeMeta(probe="t"), sample_interval=None)
    adapter = TorchLoopsAdapter(session, steps_per_epoch=1000)
    adapter.sync_cuda = False
    for optimizer in sequence:
        adapter._after_optimizer_step(optimizer, (), {})
    return sum(json.loads(line)["ev"] == "step" for line in out.getvalue().splitlines())


D, G, A, B = Optimizer("D"), Optimizer("G"), Optimizer("A"), Optimizer("B")


def test_a_gan_steps_once_a_batch() -> None:
    assert steps_told([D, G] * 10) == 10


def test_one_optimizer_every_step_counts() -> None:
    assert steps_told([A] * 7) == 7


def test_a_critic_stepped_five_times_a_generator_step_leads() -> None:
    assert steps_told(([D] * 5 + [G]) * 3) == 15
    # the generator stepped first: the critic, stepping again before it, leads from then on -
    # its first step, alone too, counted once its second says so
    assert steps_told([G] + ([D] * 5 + [G]) * 3) == 1 + 15


def test_a_later_phase_with_its_own_optimizer_is_timed() -> None:
    """Pretraining with one optimizer, fine-tuning with another: the second leads from its
    second step (its first might have been a GAN's other half) - and its first is counted then,
    at the time it ended (before: 5 + 4, a step of the run's never told)."""
    assert steps_told([A] * 5 + [B] * 5) == 5 + 5


def test_another_optimizers_first_step_in_another_phase_leads_at_once() -> None:
    """The adapter says the step is outside the lead's loop: the fine-tuning's first step counts."""
    lead = LeadOptimizer()
    told = [lead.leads(k, stopped=False, another_phase=lambda: True) for k in [1] * 5 + [2] * 5]
    assert sum(told) == 10
    # inside the lead's loop (a GAN's generator), even after the probe stopped it: not a step
    lead = LeadOptimizer()
    told = [lead.leads(k, stopped=k == 2, another_phase=lambda: False) for k in [1, 2] * 4]
    assert told == [True, False] * 4


def events_told(sequence: list[Optimizer], steps_per_epoch: int) -> list[dict[str, object]]:
    """The log of an agent-run session (phases on) fed ``sequence`` through the real adapter."""
    out = io.StringIO()
    session = ProbeSession(Emitter(out=out, t0=time.monotonic()), StopPolicy(full=True),
                           ProbeMeta(probe="t"), sample_interval=None, under_agent=True)
    adapter = TorchLoopsAdapter(session, steps_per_epoch=steps_per_epoch)
    adapter.sync_cuda = False
    for optimizer in sequence:
        adapter._after_optimizer_step(optimizer, (), {})
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_an_optimizer_first_stepping_after_a_whole_pass_is_a_phase_of_its_own() -> None:
    """A layer-wise trainer: A's loop ran its whole pass (8 steps), then B - never stepped -
    takes over: another part trained, a phase (every step counted); its first step inside A's
    first pass would have been a GAN's other half (not a step)."""
    events = events_told([A] * 8 + [B] * 6, steps_per_epoch=8)
    phases = [e for e in events if e["ev"] == "phase"]
    assert len(phases) == 1 and phases[0]["previous"] == "complete"
    steps = [e for e in events if e["ev"] == "step"]
    assert len(steps) == 8 + 6 and [e.get("phase", 1) for e in steps] == [1] * 8 + [2] * 6
    # B inside A's pass: no phase; B leads from its second step, its first counted then
    events = events_told([A] * 5 + [B] * 5, steps_per_epoch=8)
    assert not [e for e in events if e["ev"] == "phase"]
    assert len([e for e in events if e["ev"] == "step"]) == 5 + 5
    # a GAN: D then G each batch, one step a batch, however short the pass
    events = events_told([D, G] * 6, steps_per_epoch=1)
    assert not [e for e in events if e["ev"] == "phase"]
    assert len([e for e in events if e["ev"] == "step"]) == 6


def alternating(sequence: list[Optimizer]) -> bool:
    lead = LeadOptimizer()
    for optimizer in sequence:
        lead.leads(id(optimizer), False, lambda: False)
    return lead.alternating


def test_two_loops_of_steps_an_epoch_each_its_own_optimizer_alternate() -> None:
    """Spinning Up's PPO: a policy loop, then a value loop, each epoch - the lead goes to the
    value optimizer and comes back: the warning's case. A GAN's two a batch, a critic's five
    before its generator's one, and a pretraining then a fine-tuning optimizer do not."""
    assert alternating(([A] * 6 + [B] * 80) * 3)
    assert not alternating([D, G] * 10)
    assert not alternating(([D] * 5 + [G]) * 3)
    assert not alternating([A] * 5 + [B] * 5)
    said: list[tuple[str, str]] = []
    lead = LeadOptimizer()
    for optimizer in ([A] * 6 + [B] * 80) * 3:
        lead.leads(id(optimizer), False, lambda: False)
        lead.warn(lambda level, msg, code="": said.append((level, code)))
    assert said == [("warning", "alternating-optimizers")]  # once


def test_a_new_leads_first_step_is_told_at_the_time_it_ended() -> None:
    """PPO's value loop: its optimizer's first step is no step yet (a GAN's other half?); its
    second, alone, makes it the lead - and the first is told then, at the time it ended, so
    each loop's steps are all counted (158 of 160 an epoch before) and each step's dt is its
    own (not two steps in one)."""
    out = io.StringIO()
    session = ProbeSession(Emitter(out=out, t0=time.monotonic()), StopPolicy(full=True),
                           ProbeMeta(probe="t"), sample_interval=None)
    adapter = TorchLoopsAdapter(session, steps_per_epoch=1000)
    adapter.sync_cuda = False
    for optimizer in [A] * 4 + [B] * 3:
        time.sleep(0.02)
        adapter._after_optimizer_step(optimizer, (), {})
    steps = [json.loads(line) for line in out.getvalue().splitlines()
             if json.loads(line)["ev"] == "step"]
    assert len(steps) == 4 + 3
    assert [e["step"] for e in steps] == list(range(7))
    assert all(0.015 < e["dt"] < 0.2 for e in steps[1:])  # one step's time each, none doubled
