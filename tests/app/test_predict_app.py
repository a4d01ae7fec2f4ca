"""Predicted rows in the app: replaying imported MLPerf runs with a config whose [[catalog]]
holds an instance nobody probed, the ranking shows it marked '~' and the detail view says what
its prediction rests on - the rows `rank --predict` gives."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from conftest import ROOT
from probecast.core.cli.main import main
from probecast.tui.main import make_replay_app
from probecast.tui.widgets.detail import DetailView
from probecast.tui.widgets.ranking import RankingTable

DATA = ROOT / "tests" / "data" / "mlperf"
CONFIG = """
[[catalog]]
name = "lab-b200"
gpu = "NVIDIA B200"
gpus = 8
price_per_hour = 60.0
"""


def _cli(*argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(argv)) == 0
    return out.getvalue()


async def test_replay_ranks_the_configs_own_instance_as_predicted(tmp_path: Path) -> None:
    _cli("import", "mlperf", str(DATA), "--out", str(tmp_path / "logs"))
    ssd = tmp_path / "logs" / "ssd"
    config = tmp_path / "probecast.toml"
    config.write_text(CONFIG)
    cli = json.loads(_cli("rank", str(ssd), "--config", str(config), "--predict", "lab-b200",
                          "--json"))
    predicted = [r for r in cli if r["predicted"]]
    assert [r["instance"] for r in predicted] == ["lab-b200"]
    app = make_replay_app([str(ssd)], speed=0, config_path=str(config))
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.screen.refresh_view(force=True)  # type: ignore[attr-defined]
        await pilot.pause()
        table = app.screen.query_one(RankingTable)
        names = [str(table.get_row_at(i)[1]) for i in range(table.row_count)]
        assert table.row_count == len(cli)
        assert "lab-b200~" in names
        table.move_cursor(row=names.index("lab-b200~"))
        await pilot.press("d")
        await pilot.pause()
        text = app.screen.query_one(DetailView).plain_text()
        assert "predicted, not probed" in text
        assert "rests on: predicted from 3 systems' runs" in text
        assert "bf16 2250 TFLOP/s" in text
