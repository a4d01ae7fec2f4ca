"""The Keras custom-loop hook reads the job's length where a dataset is iterated outside fit()
(a phase may begin there) - once for a loop and cardinality: a program calling predict() in a
loop iterates a dataset twice a call, and reading the loops each time cost ~1 ms a call (keras.io's
character-level LSTM: 1 600 predict() calls of text generation)."""

from __future__ import annotations

import sys

import pytest

from probecast.core.agent import length
from probecast.core.agent.adapters.keras_loops import KerasLoopsAdapter
from probecast.core.agent.anchors import loop_anchor
from probecast.core.agent.emit import Emitter
from probecast.core.agent.probe_session import ProbeSession

pytestmark = pytest.mark.unit


class _Sink:
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def test_the_length_is_read_once_where_a_loop_iterates_a_dataset_again(monkeypatch) -> None:
    reads: list[int] = []
    real = length.read_length
    monkeypatch.setattr(length, "read_length", lambda frame, loop=None: reads.append(1) or real(
        frame, loop))
    hook = KerasLoopsAdapter(ProbeSession(Emitter(out=_Sink()), under_agent=True))
    found = []
    for _ in range(5):  # one loop, one dataset: read at its first pass only
        hook.latest = loop_anchor(sys._getframe())
        hook._read_length_at(sys._getframe(), object(), 100)
        found.append(hook.length_at_pass)
    assert len(reads) == 1 and all(f is found[0] for f in found)
    hook._read_length_at(sys._getframe(), object(), 50)  # another cardinality: read again
    for _ in range(2):  # another loop: read again
        hook.latest = loop_anchor(sys._getframe())
        hook._read_length_at(sys._getframe(), object(), 50)
    assert len(reads) == 3
