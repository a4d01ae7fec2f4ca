"""The setup screen lists the configured hosts' instances, then the catalog newest GPU generation
first (old generations at the end), and marks a price nobody could verify with '?'."""

from __future__ import annotations

from pathlib import Path

from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing
from probecast.core.run.board import Board
from probecast.core.run.config import Config, Host, ProbeSettings
from probecast.core.run.session import Session
from probecast.tui.app import ProbecastApp
from probecast.tui.screens.setup import SetupScreen


async def test_setup_lists_newest_gpus_first_and_marks_unverified_prices(tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                         monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = Config(hosts=[Host(name="p3-a", instance="p3.2xlarge", address="10.0.0.1")],
                    probe=ProbeSettings(batch_sizes=[64], max_steps=20), path=Path("t.toml"))
    catalog = Catalog.embedded()
    app = ProbecastApp(Session(Board(Pricing(catalog)), config=config), setup=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SetupScreen)
        table = screen.query_one("#instances")
        keys = [str(row.key.value) for row in table.ordered_rows]
        assert keys[0] == "p3.2xlarge"  # a configured host's instance first, old as it is
        models = [catalog.get(k).gpu_model for k in keys[1:]]  # type: ignore[union-attr]
        assert models[0] == "B200" and "K80" not in models[:10]
        assert models.index("H100") < models.index("L4") < models.index("T4") < models.index("K80")
        assert str(table.get_cell("g5.24xlarge", "price")).endswith("?")  # a 2024 price kept
        assert str(table.get_cell("p5e.48xlarge", "price")) == "-?"  # no on-demand price at all
        assert not str(table.get_cell("p5.48xlarge", "price")).endswith("?")
        await pilot.press("slash", *"H200", "enter")  # the filter keeps the order
        await pilot.pause()
        keys = [str(row.key.value) for row in table.ordered_rows]
        assert keys and all(catalog.get(k).gpu_model == "H200" for k in keys)  # type: ignore[union-attr]
