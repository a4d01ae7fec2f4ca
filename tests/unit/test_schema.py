"""One event schema: the agent's `schema` module, the lines its Emitter writes and the msgspec
records the readers decode them into are the same thing, kind by kind and field by field."""

from __future__ import annotations

import io
import json
import math
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from probecast.core.agent import schema
from probecast.core.agent.emit import Emitter
from probecast.core.agent.schema import KINDS, SchemaError
from probecast.core.model import events
from probecast.core.model.events import EVENT_TYPES, EventReader, read_log

ROOT = Path(__file__).resolve().parents[2]


def emit_every_kind(emitter: Emitter) -> None:
    """Each kind once through the Emitter's own API, every field set to a non-default value."""
    emitter.start("p-1", instance="g5.xlarge", batch_size=64, workload="train.py",
                  steps_per_epoch=100, val_steps=7, epochs=3, framework="torch 2.13.0",
                  devices=[{"kind": "gpu", "name": "A10G", "memory_mb": 23028.0},
                           {"kind": "cpu", "name": "cpu (4 cores usable)"}],
                  price_per_hour=1.006, note="a note", train_size=12000, val_size=2000,
                  threads=2, pipeline="tfdata", explicit_steps=True, autotune=False, rank=0)
    emitter.timed("init")
    emitter.timed("step", epoch=1, step=2, phase=2)
    emitter.timed("val", epoch=1, steps=3, metrics={"val_loss": 0.5, "val_accuracy": float("nan")},
                  phase=2)
    emitter.emit("epoch", epoch=1, metrics={"loss": 0.25, "accuracy": 0.9})
    emitter.emit("sample", gpu_util=[50.0, 60.0], gpu_mem_mb=[1000.0, 1100.0],
                 gpu_mem_total_mb=[23028.0, 23028.0], cpu_util=80.5, rss_mb=900.1, swap_mb=1.5)
    emitter.log("warning", "fit() called again", code="fit-loop")
    emitter.emit("plan", epochs=4, steps=5000, every=250,
                 source="while True ... if iter_num > max_iters: break (train.py:250)",
                 every_source="if iter_num % eval_interval == 0 (train.py:262)",
                 steps_per_epoch=1250)
    emitter.emit("memory", device="cuda:0 NVIDIA A10G", device_peak_mb=20000.5,
                 device_reserved_mb=21000.0, device_total_mb=23028.0, host_peak_mb=3000.25,
                 host_vm_peak_mb=9000.0, host_limit_mb=16000.0, host_limit_kind="memory",
                 source="torch.cuda.max_memory_allocated")
    # the agent never writes `block` (imported logs do), but the schema's records must read it
    emitter.timed("block", index=2, progress=3072.5, unit="samples")
    emitter.emit("phase", index=2, loop="for epoch in range(3) (finetune.py:40)",
                 steps_per_epoch=20, previous="complete")
    emitter.timed("done", status="probe-done", reason="max 30 steps")
    emitter.end("complete", "training ran to the program's exit", exit_code=3)


def _builtins(value: Any) -> Any:
    return msgspec.json.decode(msgspec.json.encode(value))  # tuples as lists, records as dicts


def test_every_kind_round_trips_through_the_emitter_and_the_reader(tmp_path: Path) -> None:
    path = tmp_path / "probe.jsonl"
    out = io.StringIO()
    emitter = Emitter(out=out, path=str(path), t0=0.0, strict=True)
    emit_every_kind(emitter)
    emitter.close()
    assert out.getvalue() == path.read_text()  # stdout and the file get the same lines

    written = [json.loads(line) for line in path.read_text().splitlines()]
    assert [obj["ev"] for obj in written] == list(KINDS)  # every kind, in the schema's order
    read, report = read_log(path)
    assert report.malformed == [] and not report.unknown_kinds and not report.truncated
    assert len(read) == len(written)
    for obj, event in zip(written, read):
        kind = KINDS[obj["ev"]]
        assert type(event) is EVENT_TYPES[kind.name]
        for name, value in obj.items():
            field = kind.field(name)
            if name == "ev" or (field is not None and not field.read):
                continue  # the tag, and fields for people that readers ignore
            assert _builtins(getattr(event, name)) == value, (kind.name, name)
    assert read[3].metrics == {"val_loss": 0.5, "val_accuracy": None}  # NaN travels as null


def test_the_reader_reads_the_emitter_fed_in_chunks(tmp_path: Path) -> None:
    out = io.StringIO()
    emit_every_kind(Emitter(out=out, t0=0.0, strict=True))
    text = out.getvalue()
    reader = EventReader()
    got = []
    for i in range(0, len(text), 7):  # as a socket or pipe delivers them: cut anywhere
        got += reader.feed_chunk(text[i:i + 7])
    got += reader.close()
    assert [type(e) for e in got] == list(EVENT_TYPES.values())
    assert reader.report.malformed == []


@pytest.mark.parametrize("kind, fields, what", [
    ("end", {"status": "exploded"}, "end.status"),
    ("step", {"epoch": 0}, "step.step: missing"),
    ("step", {"epoch": 0, "step": 1, "loss": 0.1}, "step.loss: not a field"),
    ("step", {"epoch": -1, "step": 1}, "step.epoch"),
    ("log", {"level": "info", "msg": "m", "code": "no-such-code"}, "log.code"),
    ("val", {"epoch": 0, "steps": 1, "metrics": {"a": "high"}}, "val.metrics"),
    ("gpu_topology", {}, "unknown kind"),
])
def test_a_strict_emitter_refuses_what_the_schema_does_not_allow(
        kind: str, fields: dict[str, Any], what: str) -> None:
    emitter = Emitter(out=io.StringIO(), t0=0.0, strict=True)
    with pytest.raises(SchemaError, match=re.escape(what)):
        emitter.timed(kind, **fields) if kind in ("end", "step", "val") else emitter.emit(kind, **fields)


def test_a_lenient_emitter_writes_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a user's job a line is never worth the run: without strict it is written as made."""
    monkeypatch.delenv("PROBECAST_STRICT_EVENTS", raising=False)
    out = io.StringIO()
    Emitter(out=out, t0=0.0).emit("log", level="info", msg="m", code="new-code")
    assert json.loads(out.getvalue())["code"] == "new-code"


def test_relayed_lines_are_checked_too() -> None:
    emitter = Emitter(out=io.StringIO(), t0=0.0, strict=True)
    emitter.write_line('{"ev":"step","t":1.0,"dt":0.5,"epoch":0,"step":0}')
    with pytest.raises(SchemaError):
        emitter.write_line('{"ev":"step","t":1.0,"dt":-0.5,"epoch":0,"step":0}')


# ---- the schema module against the msgspec records: neither may drift from the other ----------

def _float_bounds(t: Any) -> tuple[Any, Any]:
    return (t.ge, t.le)


def _matches(type_name: str, t: Any) -> bool:
    """Does msgspec's type ``t`` read what the schema's ``type_name`` describes?"""
    mi = msgspec.inspect
    if type_name in (schema.STR, schema.LEVEL, schema.CODE):
        return isinstance(t, mi.StrType)
    if type_name == schema.BOOL:
        return isinstance(t, mi.BoolType)
    if type_name == schema.INT:
        return isinstance(t, mi.IntType) and t.ge is None
    if type_name == schema.COUNT:
        return isinstance(t, mi.IntType) and t.ge == 0
    if type_name == schema.NUMBER:
        return isinstance(t, mi.FloatType)
    if type_name == schema.TIME:
        return isinstance(t, mi.FloatType) and _float_bounds(t) == (-1e9, 1e9)
    if type_name == schema.DURATION:
        return isinstance(t, mi.FloatType) and _float_bounds(t) == (0, 1e9)
    if type_name == schema.STATUS:
        return isinstance(t, mi.LiteralType) and set(t.values) == set(schema.END_STATUSES)
    if type_name == schema.METRICS:
        return (isinstance(t, mi.DictType) and isinstance(t.key_type, mi.StrType)
                and isinstance(t.value_type, mi.UnionType)
                and {type(u) for u in t.value_type.types} == {mi.FloatType, mi.NoneType})
    if type_name == schema.NUMBERS:
        return isinstance(t, (mi.VarTupleType, mi.ListType)) and isinstance(t.item_type, mi.FloatType)
    if type_name == schema.DEVICES:
        return (isinstance(t, (mi.VarTupleType, mi.ListType))
                and isinstance(t.item_type, mi.StructType)
                and _struct_problems(t.item_type, schema.DEVICE_FIELDS) == [])
    raise AssertionError(f"a schema type this test does not know: {type_name}")


def _struct_problems(info: Any, fields: tuple[schema.Field, ...]) -> list[str]:
    mi = msgspec.inspect
    problems = []
    theirs = {f.name: f for f in info.fields}
    ours = {f.name: f for f in fields if f.read}
    for name in sorted(set(ours) | set(theirs)):
        if name not in theirs:
            problems.append(f"{name}: in the schema module, not in the record")
            continue
        if name not in ours:
            problems.append(f"{name}: in the record, not in the schema module")
            continue
        field, t = ours[name], theirs[name].type
        nullable = isinstance(t, mi.UnionType) and any(isinstance(u, mi.NoneType) for u in t.types)
        if nullable:
            rest = [u for u in t.types if not isinstance(u, mi.NoneType)]
            t = rest[0] if len(rest) == 1 else t
        if nullable != field.nullable:
            problems.append(f"{name}: nullable {nullable} in the record, {field.nullable} here")
        if not _matches(field.type, t):
            problems.append(f"{name}: the record's {t} does not read {field.type}")
        if theirs[name].required and not field.required:
            problems.append(f"{name}: the record requires what the agent may leave out")
    return problems


def test_every_kind_and_field_of_the_schema_module_has_its_msgspec_counterpart() -> None:
    assert set(EVENT_TYPES) == set(KINDS)
    assert set(events.Event.__args__) == set(EVENT_TYPES.values())  # type: ignore[attr-defined]
    problems = []
    for name, kind in KINDS.items():
        fields = schema.COMMON + (schema.TIMED if kind.timed else ()) + kind.fields
        info = msgspec.inspect.type_info(EVENT_TYPES[name])
        problems += [f"{name}.{p}" for p in _struct_problems(info, fields)]
    assert problems == []


def test_the_model_takes_version_kinds_and_statuses_from_the_agent() -> None:
    assert events.SCHEMA_VERSION is schema.SCHEMA_VERSION
    assert events.END_STATUSES is schema.END_STATUSES
    assert events.EVENT_KINDS == tuple(KINDS)
    assert events.Start(0.0).v == schema.SCHEMA_VERSION
    assert events.Status.__args__ == schema.END_STATUSES  # type: ignore[attr-defined]
    assert len(set(schema.END_STATUSES)) == len(schema.END_STATUSES)


def test_every_log_code_the_agent_writes_is_in_the_schema() -> None:
    """The codes are literals in the agent's source (`code="..."`, KerasFitAdapter._say("...", ...)),
    its adapters/ included."""
    said = set()
    for path in (ROOT / "core" / "agent").rglob("*.py"):
        text = path.read_text()
        said |= set(re.findall(r'\bcode="([a-z-]+)"', text))
        said |= set(re.findall(r'_say\("([a-z-]+)"', text))
    assert said and said <= set(schema.LOG_CODES), said - set(schema.LOG_CODES)
    # and what the model acts on is among them
    for module in ("estimate/bounds", "estimate/runtime", "rank/ranking"):
        text = (ROOT / "core" / "model" / f"{module}.py").read_text()
        for code in re.findall(r'"([a-z]+(?:-[a-z]+)+)" in state\.codes', text):
            assert code in schema.LOG_CODES, (module, code)


def test_recorded_logs_conform_to_the_schema_module() -> None:
    """Every line of the v2 and v3 logs the agent recorded passes the check the strict emitter
    makes (v3 only added to v2, so v2 lines are v3 lines)."""
    checked = 0
    for path in sorted((ROOT / "sample_logs").rglob("*.jsonl")):
        lines = path.read_text().splitlines()
        if not lines or json.loads(lines[0]).get("v") not in range(2, schema.SCHEMA_VERSION + 1):
            continue
        for n, line in enumerate(lines, 1):
            obj = json.loads(line)
            assert schema.problems(obj) == [], (path.name, n)
            checked += 1
    assert checked > 0


def test_schema_checks_numbers_the_way_the_reader_does() -> None:
    assert schema.problems({"ev": "init", "t": math.inf, "dt": 0.0})
    assert schema.problems({"ev": "init", "t": 1, "dt": True})  # bool is not a number
    assert schema.problems({"ev": "init", "t": 1.0, "dt": 0.5}) == []
