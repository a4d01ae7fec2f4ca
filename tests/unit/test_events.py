from __future__ import annotations

import pytest

import json
from pathlib import Path

from probecast.core.model.event_writer import EventWriter
from probecast.core.model.events import (End, EventReader, Init, Start, Step, Val, dumps,
                         parse_line, read_log)


def test_reader_counts_malformed_lines_with_numbers_and_keeps_going(tmp_path: Path) -> None:
    p = tmp_path / "a.jsonl"
    p.write_text(
        '{"ev":"start","t":0,"v":1,"probe":"x","steps_per_epoch":10,"val_steps":0}\n'
        "not json at all\n"
        '{"ev":"init","t":1.0,"dt":1.0}\n'
        '{"ev":"step","t":1.5}\n'  # no dt
        '[1,2,3]\n'
        '{"ev":"step","t":2.0,"dt":0.5,"epoch":0,"step":0}\n'
        '{"ev":"end","t":2.0,"dt":0.0,"status":"exploded"}\n'
    )
    events, report = read_log(p)
    assert [type(e) for e in events] == [Start, Init, Step]
    assert [n for n, _ in report.malformed] == [2, 4, 5, 7]
    assert "dt" in report.malformed[1][1]
    assert "status" in report.malformed[3][1]
    assert report.truncated  # the only end line was malformed


def test_unknown_kinds_and_fields_are_ignored_not_errors() -> None:
    reader = EventReader()
    evs = list(reader.read([
        '{"ev":"init","t":0.5,"dt":0.5,"future_field":{"a":1}}',
        '{"ev":"gpu_topology","t":0.6,"links":[]}',
        '{"ev":"end","t":0.7,"dt":0.2,"status":"complete","extra":true}',
    ]))
    assert evs == [Init(0.5, 0.5), End(0.7, 0.2, "complete")]
    assert reader.report.unknown_kinds == {"gpu_topology": 1}
    assert reader.report.malformed == []
    assert not reader.report.truncated


def test_log_without_end_is_truncated_but_usable() -> None:
    reader = EventReader()
    evs = list(reader.read(['{"ev":"init","t":1,"dt":1}', '{"ev":"step","t":2,"dt":1,"epoch":0,"step":0}']))
    assert len(evs) == 2
    assert reader.report.truncated


def test_chunks_split_anywhere_give_the_same_events_and_partial_tail_is_malformed() -> None:
    text = ('{"ev":"init","t":1,"dt":1}\n{"ev":"step","t":2,"dt":1,"epoch":0,"step":0}\n'
            '{"ev":"val","t":3,"dt":1,"epoch":0,"steps":2,"metrics":{"acc":0.5}}\n')
    whole = EventReader()
    expected = whole.feed_chunk(text)
    for cut in range(1, len(text)):
        r = EventReader()
        got = r.feed_chunk(text[:cut]) + r.feed_chunk(text[cut:]) + r.close()
        assert got == expected
    r = EventReader()
    r.feed_chunk(text + '{"ev":"step","t":4,"dt":')
    assert r.close() == []
    assert len(r.report.malformed) == 1


def test_writer_appends_and_flushes_each_line(tmp_path: Path) -> None:
    p = tmp_path / "sub" / "w.jsonl"
    w = EventWriter(p)
    w.write(Start(0.0, probe="p", instance="g5.xlarge", batch_size=8, steps_per_epoch=3))
    w.write(Init(1.0, 1.0))
    # visible to another reader before close: a crash of the writer loses nothing written
    events, report = read_log(p)
    assert [type(e) for e in events] == [Start, Init]
    w.close()
    w2 = EventWriter(p)
    w2.write(End(2.0, 1.0, "stopped", "cancelled"))
    w2.close()
    events, report = read_log(p)
    assert events[-1] == End(2.0, 1.0, "stopped", "cancelled")
    assert not report.truncated


def test_round_trip_through_json() -> None:
    v = Val(3.0, 0.25, 1, 5, {"val_accuracy": 0.9})
    assert parse_line(dumps(v)) == v
    s = Start(0.0, probe="p", epochs=12, price_per_hour=1.5)
    d = json.loads(dumps(s))
    assert d["ev"] == "start" and d["epochs"] == 12 and d["price_per_hour"] == 1.5
    assert parse_line(dumps(s)) == s


def test_step_lines_parse_the_same_whatever_the_spacing_or_key_order() -> None:
    lines = ['{"ev":"step","t":12.5,"dt":0.051234,"epoch":3,"step":17}',
             '{"ev":"step","t":1e-3,"dt":5e-05,"epoch":0,"step":0}\n',
             '{"ev":"step", "t": 2.0, "dt": 0.1, "epoch": 0, "step": 1}',  # other spacing
             '{"ev":"step","t":2.0,"epoch":0,"step":1,"dt":0.1}']  # other key order
    for line in lines:
        fast = EventReader().feed_line(line)
        assert fast == parse_line(line.strip()), line
    r = EventReader()
    assert r.feed_line('{"ev":"step","t":2.0,"dt":-0.1,"epoch":0,"step":1}') is None
    assert r.report.malformed and "dt: Expected `float` >= 0" in r.report.malformed[0][1]


@pytest.mark.parametrize("line", [
    '{"ev":"step","t":1.2.3,"dt":0.1,"epoch":0,"step":1}',  # half a number
    '{"ev":"step","t":' + "9" * 5000 + ',"dt":0.1,"epoch":0,"step":1}',  # 5000 digits
    '{"ev":"step","t":1.0,"dt":NaN,"epoch":0,"step":1}',  # not JSON
    '{"ev":"step","t":1.0,"dt":Infinity,"epoch":0,"step":1}',
    '{"ev":"step","t":1.0,"dt":1e999,"epoch":0,"step":1}',  # decodes to inf
    '{"ev":"end","t":1.0,"dt":0.1,"status":"exploded"}',
    '{"ev":"step","t":1.0,"dt":0.1,"epoch":-1,"step":1}',
])
@pytest.mark.faults('malformed and non-finite values in a log',
                    checks='counted as malformed lines; no exception')
def test_bad_values_are_malformed_lines_never_exceptions(line: str) -> None:
    r = EventReader()
    assert r.feed_line(line) is None
    assert len(r.report.malformed) == 1 and r.report.malformed[0][0] == 1


@pytest.mark.faults('out-of-order steps, a future schema version',
                    checks='warned, file named')
def test_out_of_order_steps_and_a_future_schema_are_said(log_builder, tmp_path, run_cli) -> None:  # type: ignore[no-untyped-def]
    import json as _json

    p = log_builder().init(1.0).steps(0, [0.5] + [0.1] * 10).end().write(tmp_path / "x.jsonl")
    lines = p.read_text().splitlines()
    start = _json.loads(lines[0])
    start["v"] = 99
    steps = [i for i, ln in enumerate(lines) if '"step"' in ln]
    lines[steps[3]], lines[steps[4]] = lines[steps[4]], lines[steps[3]]  # swapped
    lines.insert(steps[6], lines[steps[6]])  # repeated
    p.write_text("\n".join([_json.dumps(start), *lines[1:]]) + "\n")
    code, out, err = run_cli("estimate", str(p))
    assert code == 0
    assert "newer probecast (schema v99)" in err and "out of order or repeated" in err
