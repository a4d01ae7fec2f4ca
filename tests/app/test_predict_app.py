"""Predicted rows in the app: replaying imported MLPerf runs with a config whose [[catalog]]
holds an instance nobody probed, the ranking shows it marked '~' and the detail view says what
its prediction rests on - the rows `rank --predict` gives."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import ROOT
from pilot_steps import finished_view
from probecast.tui.main import make_replay_app
from probecast.tui.widgets.detail import DetailView

DATA = ROOT / "tests" / "data" / "mlperf"
CONFIG = """
[[catalog]]
name = "lab-b200"
gpu = "NVIDIA B200"
gpus = 8
price_per_hour = 60.0
"""


async def test_replay_ranks_the_configs_own_instance_as_predicted(
        tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run_cli("import", "mlperf", str(DATA), "--out", str(tmp_path / "logs"))
    assert code == 0, err
    ssd = tmp_path / "logs" / "ssd"
    config = tmp_path / "probecast.toml"
    config.write_text(CONFIG)
    code, out, err = run_cli("rank", str(ssd), "--config", str(config), "--predict", "lab-b200",
                             "--json")
    assert code == 0, err
    cli = json.loads(out)
    predicted = [r for r in cli if r["predicted"]]
    assert [r["instance"] for r in predicted] == ["lab-b200"]
    app = make_replay_app([str(ssd)], speed=0, config_path=str(config))
    async with app.run_test(size=(80, 24)) as pilot:
        table = await finished_view(app, pilot)
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
