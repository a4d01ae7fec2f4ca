"""The default probe's steady floor (policy.steady_floor, StopPolicy.min_steady_s): 30 steps of a
millisecond are 30 ms of evidence, so the default length goes on until the steady steps add up to
a second - a step count the user gives is kept exactly."""

from __future__ import annotations

import gzip
import json

import pytest

from conftest import ROOT
from probecast.core.agent.agent_main import _parser, policy_config
from probecast.core.agent.policy import (DEFAULT_MIN_STEADY_S, STEADY_STEP_CAP, StopPolicy,
                                         steady_floor)
from probecast.core.run.command_line import config_toml
from probecast.core.run.config import default_config, parse_config
from probecast.core.run.job import describe_length, settings_for
from probecast.core.run.runners import ProbeSpec

PUBLIC = ROOT / "benchmarks" / "corpus" / "runs-public"


def recorded_steps(name: str) -> list[float]:
    """A real probe's step times, in order (its first step is not steady)."""
    with gzip.open(PUBLIC / f"probe-{name}.jsonl.gz", "rt") as f:
        return [json.loads(line)["dt"] for line in f if '"ev":"step"' in line]


def steps_until_stop(policy: StopPolicy, dts: list[float]) -> int:
    for i, dt in enumerate(dts):
        policy.observe(dt, steady=i > 0)
        if policy.should_stop():
            return policy.steps
    raise AssertionError("the policy never stopped")


def test_short_real_steps_go_on_to_a_second_of_steady_steps() -> None:
    """pytorch/tutorials' nn_tutorial, 0.35 ms steps under the agent: 30 steps are 12 ms of
    evidence; the default goes on to the step whose steady steps reach 1 s."""
    dts = recorded_steps("tut-nn_tutorial")
    policy = StopPolicy(max_steps=30, min_steady_s=DEFAULT_MIN_STEADY_S)
    n = steps_until_stop(policy, dts)
    assert 30 < n < STEADY_STEP_CAP * 30
    assert sum(dts[1:n]) >= 1.0 > sum(dts[1:n - 1])
    assert policy.reason == f"max-steps 30; went on to {n} steps, 1 s of steady steps"
    assert steps_until_stop(StopPolicy(max_steps=30), dts) == 30  # no floor: the count kept


def test_long_steps_stop_at_the_limit_and_tiny_ones_at_the_cap() -> None:
    dts = recorded_steps("pt-gcn")  # 11.7 ms steps: 30 of them are 0.34 s
    slow = [0.05] * 40
    assert steps_until_stop(StopPolicy(max_steps=30, min_steady_s=1.0), slow) == 30
    policy = StopPolicy(max_steps=30, min_steady_s=1.0)
    assert steps_until_stop(policy, dts + [dts[-1]] * 100) > 30  # 0.34 s: went on
    tiny = [1e-5] * (STEADY_STEP_CAP * 30 + 10)
    capped = StopPolicy(max_steps=30, min_steady_s=1.0)
    assert steps_until_stop(capped, tiny) == STEADY_STEP_CAP * 30
    assert capped.reason.endswith("0.03 s of steady steps (the most it goes on for 1 s)")


def test_the_floor_is_the_default_lengths_only() -> None:
    assert steady_floor(None, None, None) == DEFAULT_MIN_STEADY_S == 1.0
    assert steady_floor(30, None, None) == 0.0  # a count given, even the default's, is kept
    assert steady_floor(None, 0.02, None) == steady_floor(None, None, 60.0) == 0.0
    assert steady_floor(None, None, None, full=True) == 0.0
    assert steady_floor(30, None, None, given=2.5) == 2.5
    # the agent: no length given -> the floor; --max-steps given -> none unless asked for
    assert policy_config(_parser().parse_args(["run", "--", "true"]))["min_steady_s"] == 1.0
    assert policy_config(_parser().parse_args(["run", "--max-steps", "30", "--", "true"])
                         )["min_steady_s"] == 0.0
    assert policy_config(_parser().parse_args(
        ["run", "--max-steps", "30", "--min-steady-seconds", "2", "--", "true"]))["min_steady_s"] == 2.0


def test_the_config_and_the_runner_carry_the_floor_to_the_agent() -> None:
    default = parse_config("").probe
    assert (default.max_steps, default.min_steady_seconds) == (30, 1.0)
    assert default_config().probe.min_steady_seconds == 1.0
    assert parse_config("[probe]\nmax_steps = 30\n").probe.min_steady_seconds == 0.0
    assert parse_config("[probe]\nmin_steady_seconds = 3\n").probe.min_steady_seconds == 3.0
    assert describe_length(default) == "30 steps (or 1 s of them)"
    assert settings_for(default, full=True).min_steady_seconds == 0.0
    typed = default.copy()
    typed.max_steps = 50  # typed over the setup screen's 30: kept exactly
    assert settings_for(typed, typed_over=default).min_steady_seconds == 0.0
    assert settings_for(default.copy(), typed_over=default).min_steady_seconds == 1.0
    args = ProbeSpec(key="k", label="k", command="python t.py", max_steps=30, min_steady_s=1.0).agent_args()
    assert args[args.index("--min-steady-seconds") + 1] == "1.0"
    assert "--min-steady-seconds" not in ProbeSpec(key="k", label="k", max_steps=30).agent_args()


@pytest.mark.parametrize("given", [-1, 4000])
def test_a_floor_out_of_range_is_refused(given: float) -> None:
    with pytest.raises(Exception, match="min_steady_seconds"):
        parse_config(f"[probe]\nmin_steady_seconds = {given}\n")


@pytest.mark.parametrize("probe", ["", "max_steps = 50\n", "target_ci = 0.02\n",
                                   "max_steps = 30\nmin_steady_seconds = 3\n",
                                   "min_steady_seconds = 0\n"])
def test_a_saved_config_keeps_the_length_and_writes_no_derived_key(probe: str) -> None:
    first = parse_config('[probe]\ncommand = "python t.py"\n' + probe)
    written = config_toml(first)
    assert parse_config(written).probe == first.probe
    if not probe:  # the rule's own length: nothing about it written
        assert "max_steps" not in written and "min_steady_seconds" not in written
    if probe == "max_steps = 50\n":
        assert "min_steady_seconds" not in written
