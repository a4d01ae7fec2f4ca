"""The step time's trend (core/model/estimate/drift.py) on real recorded series: a GPU run that
settles (torch.compile on an H200), a flat CPU run of half an hour, a noisy CPU series with
outliers a hundred times its median step, and a pattern every epoch repeats (mnist on an H200)."""

from __future__ import annotations

from pathlib import Path

import pytest

from probecast.core.model.calibrate.runs import read
from probecast.core.model.estimate.drift import detect, probe_trend, settled_window, whole_epochs
from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing, RankOptions, estimate_row
from probecast.core.model.rows import Candidate
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


def test_a_pattern_each_epoch_repeats_is_no_trend_over_whole_epochs() -> None:
    """pytorch/examples' mnist on an H200, probed over two whole epochs: each epoch's first
    batches ran at 7-8 ms, the rest at 11.8 ms (one DataLoader worker). Read straight through,
    the second epoch's fast start looked like the steps speeding up as the probe ended; epoch
    against epoch at the same places, there is no trend - and the estimate says none."""
    st = fold_all(read(CORPUS / "runs-gpu-h200-public" / "probe-pt-mnist.jsonl.gz"))
    values = list(st.steady.values)
    epochs = whole_epochs(st.steps_by_epoch, st.steps_per_epoch, bool(st.periodic_steps))
    assert epochs == [937, 937]
    assert probe_trend(values)[1] == "speeding up"  # the straight reading's false alarm
    trend, moving = probe_trend(values, epochs)
    assert trend is not None and trend.direction == "flat" and moving == ""
    row = estimate_row(Candidate("m", "m", st), Pricing(Catalog.embedded()), RankOptions())
    assert row.terms["drift"] == "flat" and not any("still" in n for n in row.notes)


def test_epochs_that_each_run_slower_are_a_trend_whatever_their_own_pattern() -> None:
    saw = [0.010] * 20 + [0.016] * 80  # fast first batches, then slower: every epoch alike
    assert probe_trend(saw * 3, [100, 100, 100])[0].direction == "flat"
    slower = [v * 1.08 ** e for e in range(3) for v in saw]  # each epoch 8 % slower
    trend, moving = probe_trend(slower, [100, 100, 100])
    assert trend is not None and trend.direction == "slowing down" and moving == "slowing down"
    assert trend.change == pytest.approx(1.08 ** 2 - 1, rel=0.01)
    assert whole_epochs({0: 101, 1: 101, 2: 40}, 101, False) == [100, 100]
    assert whole_epochs({0: 101, 1: 40}, 101, False) == []  # one whole epoch: no alignment
    assert whole_epochs({0: 101, 1: 101}, 101, True) == []  # periodic work took steps out


def test_a_trend_that_turned_says_both_directions() -> None:
    """Fabric's k-fold example: over its 297 steady steps the probe's steps slowed (+11 %), over
    its last half they sped up. The note said "still speeding up (+6.4 %/100 steps, +11 %)" -
    a direction and figures that contradict; it names the last half's and the whole's apart."""
    from probecast.core.model.logstore import load_probe

    log = CORPUS / "runs-public" / "probe-fabric-kfold.jsonl.gz"
    st = load_probe(log).state
    row = estimate_row(Candidate(key="k", label="k", state=st, path=str(log)),
                       Pricing(Catalog({}), {}), RankOptions())
    (note,) = [n for n in row.notes if n.startswith("the probe ended while")]
    assert row.terms["ended_moving"] == "speeding up" and row.terms["drift"] == "slowing down"
    assert "still speeding up (its last half; slowing down over all: +" in note
