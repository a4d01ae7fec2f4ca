"""The batch-size search on a simulated host: memory a + b*batch (+ a curve, + noise) under a
limit; a probe over the limit does not fit. The search finds a batch size that fits and whose
double does not, in few probes, and says when nothing fits."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from probecast.core.model.memory.batch_search import Search
from probecast.core.model.memory.forecast import MemoryPoint


def simulate(peak: Callable[[int], float], limit: float, search: Search) -> Search:
    while (b := search.next()) is not None:
        mb = peak(b)
        search.add(MemoryPoint(b, mb > limit, host_mb=min(mb, limit), host_limit_mb=limit,
                               host_limit_kind="memory"), b)
    return search


def largest_true(peak: Callable[[int], float], usable: float) -> int:
    return max(b for b in range(1, 100_000) if peak(b) <= usable)


@pytest.mark.parametrize("peak", [
    lambda b: 1050 + 0.535 * b,  # PyTorch on CPU, as measured here
    lambda b: 700 + 2.0 * b,  # a larger model
    lambda b: 400 + 0.3 * b + 0.0002 * b * b,  # memory growing faster than the batch
])
def test_it_finds_a_batch_size_that_fits_and_whose_double_does_not(peak) -> None:  # type: ignore[no-untyped-def]
    s = simulate(peak, 3000.0, Search(start=32, cap=100_000))
    a = s.answer()
    assert a.batch_size is not None
    assert peak(a.batch_size) <= 3000 * 0.9  # fits, with the headroom
    assert peak(2 * a.batch_size) > 3000 * 0.9  # its double does not
    assert a.batch_size >= 0.9 * largest_true(peak, 2700)  # and it is near the largest
    assert a.probes <= 6, [t.batch_size for t in s.tried]
    assert a.margin is not None and a.margin >= 0.1


def test_noise_on_the_peaks_costs_probes_not_the_answer() -> None:
    rng = random.Random(1)
    s = simulate(lambda b: 1050 + 0.535 * b + rng.uniform(-15, 15), 2500.0,
                 Search(start=32, cap=100_000))
    a = s.answer()
    assert a.batch_size is not None and 1050 + 0.535 * a.batch_size <= 2250 + 15
    assert 1050 + 0.535 * 2 * a.batch_size > 2500
    assert a.probes <= 8


def test_a_start_that_does_not_fit_is_halved_and_nothing_fitting_says_so() -> None:
    s = simulate(lambda b: 1000 + 10 * b, 3000.0, Search(start=4096, cap=100_000))
    a = s.answer()
    assert a.batch_size is not None and [t.batch_size for t in s.tried][:3] == [4096, 2048, 1024]
    assert 1000 + 10 * a.batch_size <= 2700 < 1000 + 20 * a.batch_size
    s = simulate(lambda b: 5000 + b, 3000.0, Search(start=8))
    assert s.answer().batch_size is None and s.done() == "even batch size 1 does not fit"
    assert "no batch size fits" in s.answer().lines()[0]


def test_the_cap_stops_it_and_the_answer_says_the_double_would_fit() -> None:
    s = simulate(lambda b: 500 + 0.01 * b, 3000.0, Search(start=32, cap=512))
    a = s.answer()
    assert a.batch_size == 512 and "cap" in a.why
    assert any("would fit" in line for line in a.lines())


def test_a_probe_that_fails_otherwise_stops_the_search() -> None:
    s = Search(start=32)
    s.add(MemoryPoint(32, True, host_mb=900.0, host_limit_mb=3000.0), 32)
    s.failure = "b128: the probe failed (exit 1)"
    assert s.next() is None and s.answer().why == "b128: the probe failed (exit 1)"
