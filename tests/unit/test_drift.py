"""The step time's trend (core/model/estimate/drift.py) on real recorded series: a GPU run that
settles (torch.compile on an H200), a flat CPU run of half an hour, and a noisy CPU series with
outliers a hundred times its median step."""

from __future__ import annotations

from pathlib import Path

import pytest

from probecast.core.model.calibrate.runs import read
from probecast.core.model.estimate.drift import detect, probe_trend, settled_window
from probecast.core.model.state import fold_all

CORPUS = Path(__file__).resolve().parents[2] / "benchmarks" / "corpus"


def steady(corpus: str, name: str) -> list[float]:
    return list(fold_all(read(CORPUS / corpus / f"{name}.jsonl.gz")).steady.values)


@pytest.fixture(scope="module")
def compiled() -> list[float]:
    """nanoGPT's loop compiled, the whole run on an H200: ~12 ms steps settling to ~9 ms."""
    return steady("runs-gpu-h200", "gpt_loop_compile-b64")


def test_a_settling_gpu_probe_is_seen_speeding_up() -> None:
    values = steady("runs-gpu-h200", "probe-gpt_loop_compile-b64")
    d = detect(values)
    assert d is not None and d.direction == "speeding up"
    assert d.change < -0.05 and d.per_100_steps < 0
    assert abs(d.change) > 2 * d.noise
    assert "speeding up" in d.describe() and "%/100 steps" in d.describe()


def test_a_probe_cut_mid_settling_ended_still_speeding_up(compiled: list[float]) -> None:
    trend, moving = probe_trend(compiled[:400])
    assert trend is not None and trend.direction == "speeding up"
    assert moving == "speeding up"


def test_the_settled_window_starts_after_the_warm_up(compiled: list[float]) -> None:
    prefix = compiled[:400]
    w = settled_window(prefix)
    assert w.first > 0 and w.last == len(prefix)
    assert w.drift is not None and w.drift.significant
    assert w.mean_s < sum(prefix) / len(prefix)  # the settled steps are the faster ones


def test_a_long_cpu_run_is_flat() -> None:
    values = steady("runs-long", "workload:mnist-cnn-b512-e58-c2")  # 34 minutes, 2 cores
    d = detect(values)
    assert d is not None and d.direction == "flat" and not d.significant
    assert abs(d.change) < 0.05
    assert d.describe() == "steady"
    assert probe_trend(values)[1] == ""
    assert settled_window(values).first == 0


def test_outliers_do_not_make_a_trend() -> None:
    values = steady("runs-shapes", "keras_tape-b32-e35-c1")  # slowest step > 100x the median
    assert max(values) > 50 * sorted(values)[len(values) // 2]
    d = detect(values)
    assert d is not None and d.direction == "flat"


def test_outliers_do_not_hide_a_trend() -> None:
    values = steady("runs-gpu-h200", "probe-gpt_loop_compile-b64")
    clean = detect(values)
    spiked = [v * 50 if i % 17 == 5 else v for i, v in enumerate(values)]
    d = detect(spiked)
    assert clean is not None and d is not None
    assert d.direction == clean.direction == "speeding up"
    assert d.change == pytest.approx(clean.change, abs=0.05)


def test_too_few_steps_say_nothing() -> None:
    values = steady("runs-gpu-h200", "probe-gpt_loop_compile-b64")
    assert detect(values[:12]) is None
    assert probe_trend(values[:12]) == (None, "")
