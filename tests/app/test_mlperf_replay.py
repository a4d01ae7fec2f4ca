"""Imported MLPerf runs replay in the app as `rank` ranks them: a row per system (several runs
of one system are one row), panels that count blocks and evaluations, the detail view's block
terms - runs timed in blocks go through the same board, ranking and views as probes."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import ROOT
from pilot_steps import finished_view
from probecast.tui.main import make_replay_app
from probecast.tui.widgets.detail import DetailView
from probecast.tui.widgets.probe_panel import ProbePanel

DATA = ROOT / "tests" / "data" / "mlperf"


async def test_imported_runs_replay_ranked_with_their_blocks(
        tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run_cli("import", "mlperf", str(DATA / "v4.0" / "Oracle"),
                           "--out", str(tmp_path))
    assert code == 0, err
    llama = tmp_path / "llama2_70b_lora"
    logs = sorted(llama.glob("*.jsonl"))
    (llama / "again.jsonl").write_text(logs[0].read_text())  # a second run of the system
    code, out, err = run_cli("rank", str(llama), "--json")
    assert code == 0, err
    cli = json.loads(out)
    assert len(cli) == 1
    app = make_replay_app([str(llama)], speed=0)
    async with app.run_test(size=(80, 24)) as pilot:
        table = await finished_view(app, pilot)
        assert table.row_count == 1  # two runs of one system: one row, as `rank` says
        cells = [str(table.get_row_at(0)[i]) for i in range(4)]
        assert cells[1].startswith("1xBM.GPU.H100")
        heads = [str(p.query_one(".headline").render()) for p in app.screen.query(ProbePanel)]
        assert heads and all("5 blocks" in h and "5 evaluations" in h for h in heads)
        await pilot.press("d")
        await pilot.pause()
        text = app.screen.query_one(DetailView).plain_text()
        assert "blocks seen 5" in text and "3072 samples, 5 evaluations" in text
        assert f"{cli[0]['runtime_s']:.2f} s" in text
