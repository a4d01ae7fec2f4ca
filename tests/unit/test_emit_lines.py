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
