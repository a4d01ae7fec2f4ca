from __future__ import annotations


import pytest
from conftest import ranked_row

from probecast.core.model.pricing import Catalog, billed_seconds, cost_usd
from probecast.core.model.rank.ranking import is_pareto, rank


def test_billing_rules() -> None:
    assert billed_seconds(10.2, "exact") == 10.2
    assert billed_seconds(10.2, "per-second") == 11
    assert billed_seconds(10.2, "per-second-60") == 60
    assert billed_seconds(61.5, "per-second-60") == 62
    assert billed_seconds(61, "per-minute") == 120
    assert billed_seconds(3601, "per-hour") == 7200
    assert billed_seconds(0, "per-hour") == 0
    assert cost_usd(3.06, 1800, "exact") == pytest.approx(1.53)
    assert cost_usd(3.06, 30, "per-second-60") == pytest.approx(3.06 / 60)
    with pytest.raises(ValueError, match="unknown billing rule"):
        billed_seconds(1, "per-fortnight")


def test_embedded_catalog_has_seed_and_current_instances_with_dates() -> None:
    cat = Catalog.embedded()
    for name, price in [("p2.xlarge", 0.90), ("p3.2xlarge", 3.06), ("p3.16xlarge", 24.48),
                        ("ml.p3.2xlarge", 3.8), ("NC6", 0.90), ("gce-v100", 2.48)]:
        inst = cat.get(name)
        assert inst is not None and inst.price_per_hour == price and inst.price_date == "2021-02"
    for name in ("g4dn.xlarge", "g5.xlarge", "g6.xlarge", "p4d.24xlarge", "p5.48xlarge"):
        inst = cat.get(name)
        assert inst is not None and inst.price_per_hour and inst.price_date and inst.gpu_count
    assert cat.get("p4d.24xlarge").gpus == "8x A100"  # type: ignore[union-attr]
    assert all(i.price_date for i in cat if i.price_per_hour is not None)


def test_user_prices_override_and_add() -> None:
    cat = Catalog.embedded().with_prices({"g5.xlarge": 0.5, "my-box": 0.1})
    assert cat.price("g5.xlarge") == (0.5, "user")
    assert cat.price("my-box")[0] == 0.1
    assert cat.get("g5.xlarge").gpu_model == "A10G"  # type: ignore[union-attr]
    price, why = cat.price("nope.large")
    assert price is None and "nope.large" in why


def row(probe: str, inst: str, b: int, t: float, c: float | None):  # type: ignore[no-untyped-def]
    return ranked_row(probe, inst, b, t, c)


def test_rank_normalises_to_best_and_sorts_by_view() -> None:
    rows = [row("a", "p2.xlarge", 256, 400.0, 0.10), row("b", "p3.2xlarge", 256, 100.0, 0.085),
            row("c", "p3.8xlarge", 256, 200.0, 0.68)]
    by_time = rank(rows, "time")
    assert [r.probe for r in by_time] == ["b", "c", "a"]
    assert [r.relative for r in by_time] == pytest.approx([1.0, 2.0, 4.0])
    by_cost = rank(rows, "cost")
    assert [r.probe for r in by_cost] == ["b", "a", "c"]
    assert by_cost[0].relative == 1.0
    assert by_cost[2].relative == pytest.approx(0.68 / 0.085)


def test_rank_ties_are_stable_and_missing_costs_last() -> None:
    rows = [row("z", "g5.xlarge", 64, 100.0, None), row("y", "a-inst", 64, 100.0, 0.2),
            row("x", "a-inst", 32, 100.0, 0.2)]
    by_time = rank(rows, "time")
    assert [r.probe for r in by_time] == ["x", "y", "z"]  # tie on time: instance, then batch size
    by_cost = rank(rows, "cost")
    assert by_cost[-1].probe == "z"
    assert by_cost[-1].relative is None


def test_pareto_frontier() -> None:
    times = [100, 200, 150, 300, 100]
    costs = [5.0, 1.0, 2.0, 1.0, None]
    assert is_pareto(times, costs) == [True, True, True, False, False]
    # a duplicate point does not dominate its twin
    assert is_pareto([1, 1], [1.0, 1.0]) == [True, True]


def test_pareto_matches_the_definition_on_random_rows() -> None:
    """The sweep gives exactly what the O(n^2) definition gives, NaN and missing costs included."""
    import math
    import random

    def by_definition(times: list[float], costs: list[float | None]) -> list[bool]:
        out = []
        for i, (t, c) in enumerate(zip(times, costs)):
            if c is None or math.isnan(c) or math.isnan(t):
                out.append(False)
                continue
            out.append(not any(
                j != i and c2 is not None and t2 <= t and c2 <= c and (t2 < t or c2 < c)
                for j, (t2, c2) in enumerate(zip(times, costs))))
        return out

    rng = random.Random(7)
    for _ in range(2000):
        n = rng.randint(0, 10)
        times = [math.nan if rng.random() < 0.1 else float(rng.randint(1, 4)) for _ in range(n)]
        costs = [rng.choice([None, math.nan]) if rng.random() < 0.15 else float(rng.randint(1, 4))
                 for _ in range(n)]
        assert is_pareto(times, costs) == by_definition(times, costs), (times, costs)


def test_a_batch_size_the_log_does_not_say_reads_as_unknown_not_zero() -> None:
    """A Keras program fitting a dataset it batched itself, probed with nothing configured:
    the log's batch size is 0. Rows, tables and exports say '?', never 'batch 0'."""
    from probecast.core.report.export import to_markdown

    known, unknown = ranked_row("a", "m5.large", 64, 100.0, 1.0), ranked_row("b", "c5.large", 0, 90.0, 1.0)
    assert (known.batch_label, unknown.batch_label) == ("64", "?")
    assert unknown.name == "c5.large"  # (not "c5.large b?": the instance alone names it)
    table = to_markdown([known, unknown], "t")
    assert "| m5.large | 64 |" in table and "| c5.large | ? |" in table and "| 0 |" not in table
    from rich.console import Console

    from probecast.tui.widgets.detail import heading_lines
    from probecast.tui.widgets.memory_view import no_fit_detail

    assert "batch ? " in heading_lines(unknown)[0].plain
    console = Console(record=True, width=200)
    console.print(no_fit_detail(unknown))
    assert "batch ? " in console.export_text()
