"""The agent's fast line for flat events is byte for byte what json.dumps writes."""

from __future__ import annotations

import enum
import json
import math
import random

import pytest

from probecast.core.agent.emit import Emitter, _finite, _flat_line

pytestmark = pytest.mark.unit


def _json_line(obj: dict) -> str:
    return json.dumps(_finite(obj), separators=(",", ":"), allow_nan=False) + "\n"


def _value(rng: random.Random):
    kind = rng.randrange(7)
    if kind == 0:
        return rng.choice([math.nan, math.inf, -math.inf, -0.0, 1e-300, 1e300, 5e-324])
    if kind == 1:
        return round(rng.uniform(-1e6, 1e6), rng.randrange(0, 9))
    if kind == 2:
        return rng.randrange(-10**20, 10**20)
    if kind == 3:
        return rng.choice([True, False, None])
    return "".join(chr(rng.choice([rng.randrange(0, 128), rng.randrange(128, 0x2FFFF)]))
                   for _ in range(rng.randrange(0, 12)))


def test_flat_events_are_written_as_json_writes_them() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        obj = {"ev": "step", "t": round(rng.uniform(0, 1e4), 6), "dt": round(rng.random(), 6)}
        obj.update({_value(rng) if isinstance(_value(rng), str) else f"k{i}": _value(rng)
                    for i in range(rng.randrange(0, 6))})
        obj = {str(k): v for k, v in obj.items()}
        assert _flat_line(obj) == _json_line(obj)
        json.loads(_flat_line(obj))  # and a line any reader parses


class Level(enum.IntEnum):
    HIGH = 1


@pytest.mark.parametrize("obj", [{"ev": "x", "m": {"loss": math.nan}}, {"ev": "x", "l": [1.0]},
                                 {"ev": "x", "e": Level.HIGH}])
def test_anything_else_falls_back_to_json(obj: dict, tmp_path) -> None:
    assert _flat_line(obj) is None
    path = tmp_path / "log.jsonl"
    em = Emitter(out=open(tmp_path / "stdout", "w"), path=str(path), t0=0.0, strict=False)
    em.emit(obj.pop("ev"), **obj)
    em.close()
    assert json.loads(path.read_text())["ev"] == "x"


class _Steps:
    """Where a step's numbers wait (EventClient.step's signature), and the line made of them."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, t: float, dt: float, epoch: int, step: int) -> None:
        from probecast.core.agent.channel import step_line

        self.lines.append(step_line((t, dt, epoch, step)).decode())


def test_a_plain_step_is_the_line_timed_writes_made_now_or_later(monkeypatch) -> None:
    """Emitter.step writes a step's line itself (a dict and _flat_line were most of the hook's
    time in a step), or hands its numbers to the channel to be written later: either line is
    byte for byte the one ``timed("step", ...)`` writes, with the same dt."""
    rng = random.Random(3)
    clock = [5.0]
    monkeypatch.setattr("time.monotonic", lambda: clock[0])
    general, direct, later = io_lines(), io_lines(), _Steps()
    ems = [Emitter(out=general, t0=1.25, strict=False), Emitter(out=direct, t0=1.25, strict=False),
           Emitter(out=io_lines(), t0=1.25, strict=False, steps=later)]
    for i in range(3000):
        clock[0] += rng.choice([rng.uniform(1e-7, 1e-3), rng.uniform(0.001, 90.0), 1e-9])
        epoch, step = rng.randrange(0, 10**6), rng.randrange(0, 10**9)
        dt = ems[0].timed("step", epoch=epoch, step=step)["dt"]
        assert ems[1].step(epoch, step) == dt
        assert ems[2].step(epoch, step) == pytest.approx(dt, abs=5e-7)  # rounded in the line
    assert direct.lines == general.lines and later.lines == general.lines
    assert [json.loads(line)["dt"] for line in general.lines[:3]] == [
        json.loads(line)["dt"] for line in later.lines[:3]]


class io_lines:  # noqa: N801 - a file-like list of written lines
    def __init__(self) -> None:
        self.lines: list[str] = []

    def write(self, text: str) -> int:
        self.lines.append(text)
        return len(text)

    def flush(self) -> None:
        pass
