"""Figures for reports (PNG/SVG) with matplotlib, headless (Agg): the same data as the app."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .charts import batch_series, crossover_data, pareto_frontier, scatter_points
from ..model.rank.crossover import Line
from ..model.rank.ranking import RankedRow


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    return plt


NO_PRICE = "no prices: time–cost needs a price per instance (--price INSTANCE=USD_PER_HOUR)"


def render(kind: str, rows: Sequence[RankedRow], lines: list[Line], out: Path,
           title: str = "", selected: str | None = None, max_epochs: int = 30) -> Path:
    """Write the figure to ``out`` (format from its suffix: .png or .svg)."""
    if out.suffix.lower() not in (".png", ".svg"):
        raise ValueError(f"--out must end in .png or .svg, got {out.name!r}")
    plt = _plt()
    if kind == "scatter":
        fig = _scatter(plt, rows, selected)
    elif kind == "crossover":
        fig = _crossover(plt, lines, max_epochs)
    elif kind == "batch":
        fig = _batch(plt, rows)
    else:
        raise ValueError(f"unknown plot kind {kind!r}: scatter, crossover or batch")
    fig.suptitle(title or f"probecast: {kind}")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)
    return out


def _scatter(plt: Any, rows: Sequence[RankedRow], selected: str | None) -> Any:
    """Cost against time, the selected row in red, the Pareto frontier in green."""
    fig, ax = plt.subplots(figsize=(7, 5))
    pts = scatter_points(rows)
    if not pts:  # say so on the chart: runtimes alone, on the x axis
        ax.scatter([row.runtime_s / 60 for row in rows], [0] * len(rows), c="tab:grey")
        for row in rows:
            ax.annotate(row.name, (row.runtime_s / 60, 0), fontsize=8, xytext=(4, 4),
                        textcoords="offset points")
        ax.text(0.5, 0.6, NO_PRICE, transform=ax.transAxes, ha="center", fontsize=9,
                color="tab:red", wrap=True)
    for p in pts:
        hi = p.key == selected
        ax.scatter(p.runtime_s / 60, p.cost_usd, s=80 if hi else 40,
                   c="tab:red" if hi else ("tab:green" if p.pareto else "tab:blue"), zorder=3)
        ax.annotate(p.label, (p.runtime_s / 60, p.cost_usd), fontsize=8,
                    xytext=(4, 4), textcoords="offset points")
    front = pareto_frontier(pts)
    if front:
        ax.step([p.runtime_s / 60 for p in front], [p.cost_usd for p in front],
                where="post", c="tab:green", lw=1, label="Pareto frontier")
        ax.legend(loc="best")
    ax.set_xlabel("estimated training time (min)")
    ax.set_ylabel("estimated cost (USD)")
    return fig


def _crossover(plt: Any, lines: list[Line], max_epochs: int) -> Any:
    """Time and cost against the planned epochs, where rows trade places marked."""
    data = crossover_data(lines, max_epochs)
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(7, 7), sharex=True)
    for key, ys in data.runtime.items():
        ax.plot(data.epochs, [y / 60 for y in ys], label=data.labels[key])
        costs = data.cost[key]
        if all(c is not None for c in costs):
            ax2.plot(data.epochs, costs, label=data.labels[key])
    for c in data.crossings:
        target = ax if c.metric == "runtime" else ax2
        target.axvline(c.epochs, c="grey", lw=0.5, ls=":")
    ax.set_ylabel("estimated time (min)")
    ax2.set_ylabel("estimated cost (USD)")
    ax2.set_xlabel("planned epochs")
    if not any(all(c is not None for c in cs) for cs in data.cost.values()):
        ax2.text(0.5, 0.5, NO_PRICE, transform=ax2.transAxes, ha="center", color="tab:red",
                 fontsize=8)
    ax.legend(fontsize=7, loc="upper left")
    note = "\n".join(data.sentences(4))
    if note:
        ax2.text(0.01, 0.98, note, transform=ax2.transAxes, fontsize=7, va="top")
    return fig


def _batch(plt: Any, rows: Sequence[RankedRow]) -> Any:
    """Time and cost against the batch size, one line per instance."""
    series = batch_series(rows)
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(7, 7), sharex=True)
    for s in series:
        ax.plot(s.batch, [r / 60 for r in s.runtime], marker="o", label=s.instance)
        if all(c is not None for c in s.cost):
            ax2.plot(s.batch, s.cost, marker="o", label=s.instance)
        for b, r, acc in zip(s.batch, s.runtime, s.accuracy):
            if acc is not None:
                ax.annotate(f"acc {acc:.2f}", (b, r / 60), fontsize=7, xytext=(3, 3),
                            textcoords="offset points")
    if not any(all(c is not None for c in s.cost) for s in series):
        ax2.text(0.5, 0.5, NO_PRICE, transform=ax2.transAxes, ha="center", color="tab:red",
                 fontsize=8)
    ax.set_xscale("log", base=2)
    ax.set_ylabel("estimated time (min)")
    ax2.set_ylabel("estimated cost (USD)")
    ax2.set_xlabel("batch size")
    ax.legend(fontsize=7)
    return fig
