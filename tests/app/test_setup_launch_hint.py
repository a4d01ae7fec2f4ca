"""Without [aws], picking an instance type that has no host launches nothing and says how to
add a host or an [aws] section; the row says so too."""

from __future__ import annotations

from pathlib import Path

from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing
from probecast.core.run.board import Board
from probecast.core.run.config import Config, Host, ProbeSettings
from probecast.core.run.session import Session
from probecast.tui.app import ProbecastApp
from probecast.tui.screens.setup import SetupScreen


async def test_a_type_without_host_or_aws_says_how_to_add_one(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    config = Config(hosts=[Host(name="g5-a", instance="g5.xlarge", address="10.0.0.1")],
                    probe=ProbeSettings(batch_sizes=[64], max_steps=20), path=Path("t.toml"))
    app = ProbecastApp(Session(Board(Pricing(Catalog.embedded())), config=config), setup=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("slash", *"p3.2x", "enter", "space")
        await pilot.pause()
        said = [str(n.message) for n in app._notifications]
        assert any("no host for p3.2xlarge" in m and "[aws] section" in m for m in said), said
        screen = app.screen
        assert isinstance(screen, SetupScreen) and not screen.selected_launch
        assert "add a host" in str(screen.query_one("#instances").get_cell("p3.2xlarge", "hosts"))
        assert "p3.2xlarge" not in str(screen.query_one("#summary").render())
