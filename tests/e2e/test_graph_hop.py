"""The hop a traced step's call back into Python costs (graph_hop.py), measured on real
TensorFlow in a process of its own: once, its seconds the agent's own - in its start-up before
the first step, in the step's own time after it - and where it cannot be measured, no
correction and no error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, sys
from probecast.core.agent import compat, graph_hop, imports

class Session:
    def __init__(self, started):
        self.started, self.own, self.said = started, 0.0, []
    def log(self, level, msg, code=""):
        self.said.append(msg)

if sys.argv[1] == "broken":  # a TensorFlow without what the measure calls
    compat.TF_FUNCTION = "tensorflow:no_such_function"
import tensorflow  # (the program imported it: the hop is measured at its first traced step)
before = imports.SPENT[0]
first = Session(started=sys.argv[1] == "started")
graph_hop.measure_once(first)
hop = graph_hop.hop_s()
spent_start, spent_step = imports.SPENT[0] - before, first.own
again = Session(started=True)
graph_hop.measure_once(again)
print(json.dumps({"hop": hop, "start_up": spent_start, "step": spent_step, "said": first.said,
                  "again": [again.own, again.said, graph_hop.hop_s() == hop]}))
"""


def measure(how: str) -> dict:
    out = subprocess.run([sys.executable, "-c", SCRIPT, how], capture_output=True, text=True,
                         timeout=300, cwd=ROOT, env={"PYTHONPATH": str(ROOT.parent),
                                                     "TF_CPP_MIN_LOG_LEVEL": "2",
                                                     "PATH": "/usr/bin:/bin"}, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.tensorflow
@pytest.mark.parametrize("how", ["before-start", "started"])
def test_the_hop_is_measured_once_and_its_time_is_the_agents(how: str) -> None:
    pytest.importorskip("tensorflow")
    got = measure(how)
    assert got["hop"] > 0  # a call into Python and back: never free
    assert len(got["said"]) == 1 and "ms (measured here)" in got["said"][0]
    start_up, step = got["start_up"], got["step"]
    assert (start_up > 0 and step == 0) if how == "before-start" else (step > 0 and start_up == 0)
    assert got["again"] == [0.0, [], True]  # once a process: the second call measures nothing


@pytest.mark.tensorflow
def test_a_tensorflow_the_measure_cannot_call_gives_no_correction() -> None:
    pytest.importorskip("tensorflow")
    got = measure("broken")
    assert got["hop"] == 0.0 and got["said"] == []
    assert got["again"] == [0.0, [], True]
