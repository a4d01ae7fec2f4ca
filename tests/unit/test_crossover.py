from __future__ import annotations

import json

import pytest

from conftest import ranked_row, SAMPLE_LOGS
from probecast.core.model.rank.crossover import Line, cost_crossovers, line_for, runtime_crossovers
from probecast.core.model.estimate.runtime import estimate_runtime
from probecast.core.model.logstore import load_probe
from probecast.core.model.rank.ranking import rank

SEISMIC = sorted((SAMPLE_LOGS / "reconstructed-dissertation").glob("seismic-fcn-*.jsonl"))


def test_hand_made_crossing() -> None:
    # A: 100 s start-up, 10 s/epoch. B: 10 s start-up, 20 s/epoch. Equal at N = 9.
    a, b = Line("A", "A", 100, 10), Line("B", "B", 10, 20)
    (c,) = runtime_crossovers([a, b])
    assert c.epochs == pytest.approx(9.0) and c.winner == "A" and c.loser == "B"
    assert c.sentence({"A": "g5.xlarge", "B": "p3.2xlarge"}) == \
        "g5.xlarge is faster than p3.2xlarge from 9 epochs on"
    # parallel lines never cross; a crossing at negative N is not one
    assert runtime_crossovers([Line("A", "A", 1, 5), Line("B", "B", 2, 5)]) == []
    assert runtime_crossovers([Line("A", "A", 1, 5), Line("B", "B", 2, 6)]) == []


def test_cost_crossing_with_prices_and_a_billing_minimum() -> None:
    # A: $3.6/h, T = 100 + 10N ; B: $0.9/h, T = 10 + 50N.  cost A = 0.1 + 0.01N, B = 0.0025 + 0.0125N
    a = Line("A", "A", 100, 10, price=3.6)
    b = Line("B", "B", 10, 50, price=0.9)
    (c,) = cost_crossovers([a, b])
    assert c.epochs == pytest.approx((0.1 - 0.0025) / (0.0125 - 0.01))
    assert c.winner == "A"
    # with a 60 s minimum B's cost is flat below N=1: the exact crossing moves nowhere here
    a60 = Line("A", "A", 100, 10, 3.6, "per-second-60")
    b60 = Line("B", "B", 10, 50, 0.9, "per-second-60")
    (c60,) = cost_crossovers([a60, b60])
    assert a60.cost(c60.epochs) == pytest.approx(b60.cost(c60.epochs), rel=1e-3)


def test_lines_are_exact_for_the_estimator() -> None:
    st = load_probe(SEISMIC[0]).state
    ln = line_for(st, "k", "k")
    for n in (1, 5, 13, 40):
        assert ln.runtime(n) == pytest.approx(estimate_runtime(st, n).runtime_s)


def test_reconstructed_p2_p3_reproduce_fig_5_4(run_cli) -> None:  # type: ignore[no-untyped-def]
    """Malta 2021, Fig. 5.4: with one epoch the p2.xlarge is among the fastest; with many the
    p3.2xlarge wins and the p2.xlarge falls behind the multi-GPU p3s."""
    def order(n: int) -> list[str]:
        rows = json.loads(run_cli("rank", *map(str, SEISMIC), "--epochs", str(n), "--json")[1])
        return [r["instance"] for r in rows]

    assert order(1).index("p2.xlarge") <= 1
    assert order(25)[0] == "p3.2xlarge"
    assert order(25).index("p2.xlarge") > order(25).index("p3.8xlarge")
    rows = json.loads(run_cli("rank", *map(str, SEISMIC), "--json")[1])
    p2 = next(r for r in rows if r["instance"] == "p2.xlarge")
    sentences = [c["sentence"] for c in p2["crossovers"]]
    assert "p3.8xlarge b256 is faster than p2.xlarge b256 from 5 epochs on" in sentences


def row(k: str, t: float, c: float):  # type: ignore[no-untyped-def]
    return ranked_row(k, k, 1, t, c, spread=0.0)


def test_weighted_view_moves_between_fastest_and_cheapest() -> None:
    rows = [row("fast", 100, 4.0), row("cheap", 400, 1.0), row("middle", 150, 1.5)]
    assert rank(rows, "weighted", 1.0)[0].probe == "fast"
    assert rank(rows, "weighted", 0.0)[0].probe == "cheap"
    mid = rank(rows, "weighted", 0.5)
    # scores: fast .5*1+.5*4 = 2.5, cheap .5*4+.5*1 = 2.5, middle .5*1.5+.5*1.5 = 1.5
    assert mid[0].probe == "middle"
    assert mid[0].relative == 1.0
    assert mid[0].score == pytest.approx(1.5)
    with pytest.raises(ValueError):
        rank(rows, "weighted", 1.5)


@pytest.mark.parametrize("kind", ["scatter", "crossover", "batch"])
def test_plot_export_writes_valid_png_and_svg(run_cli, tmp_path, kind) -> None:  # type: ignore[no-untyped-def]
    import xml.etree.ElementTree as ET

    png = tmp_path / f"{kind}.png"
    code, out, err = run_cli("plot", *map(str, SEISMIC), "--kind", kind, "--out", str(png))
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    svg = tmp_path / f"{kind}.svg"
    assert run_cli("plot", *map(str, SEISMIC), "--kind", kind, "--out", str(svg))[0] == 0
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    if kind == "crossover":
        assert "from 5 epochs on" in svg.read_text()


def test_plot_refuses_a_bad_suffix(run_cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run_cli("plot", *map(str, SEISMIC), "--out", str(tmp_path / "x.jpg"))
    assert code == 2 and ".png or .svg" in err
