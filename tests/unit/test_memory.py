"""Memory: out-of-memory recognised, peaks read from logs, the forecast's line and its verdicts
on catalog instances, and does-not-fit rows in the ranking, `rank --json` and its text."""

from __future__ import annotations

import json
import math
import signal
from pathlib import Path

import pytest

from conftest import LogBuilder
from probecast.core.agent import memory as agent_memory
from probecast.core.agent.memory import GroupWatch, does_not_fit_reason, killed_by_memory, out_of_memory
from probecast.core.model.logstore import load_probe
from probecast.core.model.memory.forecast import (DEVICE, HOST, MemoryPoint, fit_memory, memory_point,
                                         program_memory)
from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing, RankOptions, build_ranking


# ---- the agent: was it out of memory? ----------------------------------------------------------

class OutOfMemoryError(RuntimeError):  # torch.cuda.OutOfMemoryError, by name
    pass


class ResourceExhaustedError(Exception):  # tensorflow.errors.ResourceExhaustedError, by name
    pass


@pytest.mark.parametrize("exc", [
    OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB"),
    RuntimeError("[enforce fail at alloc_cpu.cpp:127] DefaultCPUAllocator: can't allocate memory: "
                 "you tried to allocate 1610612736 bytes"),
    ResourceExhaustedError("Graph execution error:\n\nOOM when allocating tensor with "
                           "shape[2048,123008]"),
    MemoryError(),
    RuntimeError("CUDA error: out of memory"),
])
def test_the_frameworks_out_of_memory_errors_are_recognised(exc: BaseException) -> None:
    said = out_of_memory(exc)
    assert said is not None and said.startswith(type(exc).__name__)


def test_an_out_of_memory_error_wrapped_in_another_is_found_and_others_are_not() -> None:
    try:
        try:
            raise MemoryError("Unable to allocate 3.00 GiB for an array")
        except MemoryError as inner:
            raise RuntimeError("the trainer failed") from inner
    except RuntimeError as outer:
        assert out_of_memory(outer) == "MemoryError: Unable to allocate 3.00 GiB for an array"
    assert out_of_memory(RuntimeError("a bad batch")) is None
    assert out_of_memory(ValueError("shapes (3,) and (4,) not aligned")) is None


def test_the_reason_names_the_batch_size_the_device_and_its_memory() -> None:
    gpu = {"device": "cuda:0 NVIDIA A10G", "device_total_mb": 22731.0}
    assert does_not_fit_reason(1024, gpu) == "b1024 does not fit on cuda:0 NVIDIA A10G (22731 MB)"
    cpu = {"device": "cpu", "host_limit_mb": 2048.0, "host_limit_kind": "memory"}
    assert does_not_fit_reason(1024, cpu, "MemoryError: x") == \
        "b1024 does not fit on cpu (limit 2048 MB): MemoryError: x"


def test_a_death_by_signal_is_memory_only_where_the_kernel_or_a_limit_shows_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    watch = GroupWatch()
    # only what the watch saw: ru_maxrss of this test process's own children (every subprocess
    # the suite ran before) is not the probe's
    watch.host_peak_mb = lambda: watch.rss_peak_mb or None  # type: ignore[method-assign]
    kill = -int(signal.SIGKILL)
    key = "/sys/fs/cgroup/memory/x/memory.oom_control"
    said = killed_by_memory(kill, {key: 0}, {key: 1}, watch)
    assert said is not None and "OOM killer" in said and "/sys/fs" not in said
    monkeypatch.setattr(agent_memory, "host_limit", lambda: (1000.0, "memory", "cgroup"))
    assert killed_by_memory(kill, {key: 0}, {key: 0}, watch) is None  # nothing shows it
    watch.rss_peak_mb = 950.0
    assert "950 MB of its 1000 MB" in (killed_by_memory(kill, {}, {}, watch) or "")
    assert killed_by_memory(1, {}, {}, watch) is None  # an exit, not a signal
    assert killed_by_memory(-int(signal.SIGTERM), {}, {}, watch) is None  # a stop


def test_an_error_exit_at_an_address_space_limit_is_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """oneDNN pinned to one core failed to allocate under RLIMIT_AS, said "could not create a
    primitive" and exited 1 at 2899.8 of 2900 MB: no words to match, the peak says it."""
    watch = GroupWatch()
    monkeypatch.setattr(agent_memory, "host_limit", lambda: (2900.0, "address-space", "RLIMIT_AS"))
    watch.vm_peak_mb = 2899.8
    said = killed_by_memory(1, {}, {}, watch)
    assert said is not None and "2900 MB of its 2900 MB" in said and "status 1" in said
    assert killed_by_memory(0, {}, {}, watch) is None  # it ended well
    watch.vm_peak_mb = 900.0
    assert killed_by_memory(1, {}, {}, watch) is None  # far from the limit: another failure


def test_the_group_watch_reads_this_process() -> None:
    import os

    watch = GroupWatch()
    watch.poll(os.getpgid(0))
    assert watch.rss_peak_mb > 0 and watch.vm_peak_mb >= watch.hwm_peak_mb > 0


# ---- the forecast ------------------------------------------------------------------------------

def point(b: int, host: float, ran_out: bool = False, **kw: float | str) -> MemoryPoint:
    return MemoryPoint(b, ran_out, host_mb=host, **kw)  # type: ignore[arg-type]


def test_a_line_through_two_probes_and_what_it_rests_on() -> None:
    fit = fit_memory([point(64, 600.0), point(256, 1080.0), point(512, 9999.0, ran_out=True)], HOST)
    assert fit is not None and fit.batch_sizes == (64, 256)  # the one that did not fit is out
    assert fit.per_sample_mb == pytest.approx(2.5) and fit.intercept_mb == pytest.approx(440.0)
    assert fit.at(1024) == pytest.approx(3000.0)
    assert fit.largest(2000.0, headroom=0.10) == math.floor((1800 - 440) / 2.5)
    assert "b64 600 MB, b256 1080 MB" in fit.rests_on() and "2.5 MB per sample" in fit.rests_on()
    assert fit.describe_reach(1024) == "4.0x the largest probed batch size"
    assert "long reach" in fit.describe_reach(4096)
    assert fit_memory([point(64, 600.0)], HOST) is None  # one batch size: no line


def test_least_squares_over_three_probes_says_its_miss() -> None:
    fit = fit_memory([point(32, 500.0), point(64, 560.0), point(128, 700.0)], HOST)
    assert fit is not None and len(fit.batch_sizes) == 3 and fit.residual_mb > 0
    assert "least squares" in fit.rests_on() and "misses a probe" in fit.rests_on()


def test_every_catalog_instance_gets_a_verdict_with_its_headroom() -> None:
    gpu = dict(device="cuda:0 NVIDIA A10G", device_total_mb=22731.0)
    points = [MemoryPoint(64, False, device_mb=2000.0, host_mb=3000.0, **gpu),  # type: ignore[arg-type]
              MemoryPoint(128, False, device_mb=3000.0, host_mb=3100.0, **gpu)]  # type: ignore[arg-type]
    program = program_memory(points, Catalog.embedded(), batch_sizes=[1024, 2048])
    assert program.main is not None and program.main.basis == DEVICE
    g5 = program.on("g5.xlarge")  # one 24 GB A10G, 16 GB RAM: 1000 MB + 15.625 MB a sample
    assert g5 is not None and not g5.proxy
    assert g5.fits[1024] and not g5.fits[2048]
    assert g5.largest == math.floor((24 * 1024 * 0.9 - 1000) / 15.625)
    p2 = program.on("p2.xlarge")  # a 12 GB K80
    assert p2 is not None and not p2.fits[1024] and p2.largest is not None and p2.largest < 700
    assert program.on("gce-tpu-v2") is None  # no memory figures: no verdict


def test_host_probes_stand_in_for_gpu_memory_and_say_so() -> None:
    program = program_memory([point(64, 600.0), point(256, 1080.0)], Catalog.embedded())
    g5 = program.on("g5.xlarge")
    assert g5 is not None and g5.proxy


def test_memory_from_a_v3_log_and_from_an_old_log_s_samples(tmp_path: Path) -> None:
    b = LogBuilder(batch_size=64).init(1.0).steps(0, [0.1] * 5)
    b.events.append({"ev": "sample", "t": b.t, "rss_mb": 700.0})
    old = load_probe(b.end().write(tmp_path / "old.jsonl")).state
    p = memory_point(old)
    assert p is not None and p.host_mb == 700.0 and p.sampled and p.basis == HOST
    b = LogBuilder(batch_size=64).init(1.0).steps(0, [0.1] * 5)
    b.events.append({"ev": "memory", "t": b.t, "device": "cpu", "host_peak_mb": 800.0,
                     "host_vm_peak_mb": 2000.0, "host_limit_mb": 2500.0,
                     "host_limit_kind": "address-space"})
    new = load_probe(b.end().write(tmp_path / "new.jsonl")).state
    p = memory_point(new)
    assert p is not None and p.basis == "address-space" and p.peak(p.basis) == 2000.0
    assert p.limit_mb == 2500.0 and not p.sampled


# ---- does-not-fit in the ranking -----------------------------------------------------------------

def write_probe(path: Path, b: int, host_mb: float, ran_out: bool = False) -> Path:
    log = LogBuilder(batch_size=b, instance="g5.xlarge", probe=f"p{b}", workload="w")
    if not ran_out:
        log.init(1.0).steps(0, [0.1] * 10)
    log.events.append({"ev": "memory", "t": log.t, "device": "cpu", "host_peak_mb": host_mb,
                       "host_limit_mb": 4096.0, "host_limit_kind": "memory"})
    reason = f"b{b} does not fit on cpu (limit 4096 MB): MemoryError: x"
    return _no_fit(log, reason, path) if ran_out else log.end("probe-done").write(path)


def _no_fit(log: LogBuilder, reason: str, path: Path) -> Path:
    log.timed("done", 1.0, status="does-not-fit", reason=reason)
    log.timed("end", 0.2, status="does-not-fit", reason=reason, exit_code=1)
    return log.write(path)


def test_a_batch_size_that_does_not_fit_is_a_row_that_says_so(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    paths = [write_probe(tmp_path / "a.jsonl", 64, 600.0),
             write_probe(tmp_path / "b.jsonl", 256, 1080.0),
             write_probe(tmp_path / "c.jsonl", 4096, 4000.0, ran_out=True)]
    candidates = [load_probe(p).candidate() for p in paths]
    ranking = build_ranking(candidates, Pricing(Catalog.embedded()), RankOptions(epochs=5))
    assert sorted(r.batch_size for r in ranking.rows) == [64, 256]  # ranked: the two that fit
    (no_fit,) = ranking.no_fit["w"]
    assert no_fit.batch_size == 4096 and no_fit.does_not_fit and math.isnan(no_fit.runtime_s)
    assert no_fit.mark == "✗" and "does not fit on cpu" in no_fit.notes[0]
    assert no_fit.memory is not None and no_fit.memory.ran_out
    ranked = ranking.rows[0]
    assert ranked.memory is not None and ranked.memory.forecast and "g5.xlarge" in ranked.memory.largest_on
    # rank --json: every row, the one that does not fit with null times and its memory
    code, out, _ = run_cli("rank", str(tmp_path), "--epochs", "5", "--json")
    assert code == 0
    rows = json.loads(out)
    bad = next(r for r in rows if r["batch_size"] == 4096)
    assert bad["status"] == "does-not-fit" and bad["runtime_s"] is None and bad["cost_usd"] is None
    assert bad["memory"]["ran_out"] is True and "does not fit" in bad["memory"]["reason"]
    good = next(r for r in rows if r["batch_size"] == 64)
    assert good["memory"]["fits_on"]["g5.xlarge"] is True
    assert good["memory"]["largest_on"]["g5.xlarge"] > 4096
    # the text ranking: the ranked rows, then the row that does not fit, then the forecast
    code, out, _ = run_cli("rank", str(tmp_path), "--epochs", "5")
    assert code == 0
    assert "✗ g5.xlarge b4096: b4096 does not fit on cpu (limit 4096 MB)" in out
    assert "memory forecast: peak host RSS: a line through b64 600 MB, b256 1080 MB" in out
    # only the row that does not fit: still an answer
    code, out, _ = run_cli("rank", str(paths[2]))
    assert code == 0 and "does not fit" in out


def test_the_setup_screen_words_for_what_fits_and_for_nothing_to_go_by() -> None:
    from probecast.core.report.memory_text import fit_cell, setup_note

    program = program_memory([point(64, 600.0), point(256, 1080.0)], Catalog.embedded(),
                             batch_sizes=[64, 8192])
    g4 = program.on("g4dn.xlarge")  # 16 GB RAM: 440 + 2.5 MB a sample -> b5000 or so
    assert fit_cell(g4, [64, 8192]) == "≤64" and fit_cell(g4, [64]) == "all"
    assert fit_cell(None, [64]) == ""
    note = setup_note("w", program, [64, 8192], ["g4dn.xlarge"])
    assert note.startswith("memory (RSS b64-b256, 10% room): ✗ b8192 on g4dn.xlarge")
    assert len(note) <= 80
    assert setup_note("w", None, [64], []) == \
        "memory: nothing to forecast from (no w probes at 2+ batch sizes)"
