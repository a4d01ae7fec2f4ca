"""Memory in the app: a replayed probe that did not fit is a ranking row that says so (never a
time), its panel says why and its detail what fits; the setup's f searches for the batch size."""

from __future__ import annotations

from pathlib import Path

from conftest import LogBuilder
from pilot_steps import finished_view
from probecast.core.run.board import Board
from probecast.core.run.config import Config, Host, ProbeSettings
from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing
from probecast.core.run.session import Session
from probecast.tui.app import ProbecastApp
from probecast.tui.main import make_replay_app
from probecast.tui.widgets.detail import DetailView
from probecast.tui.widgets.probe_panel import ProbePanel, hardware_line
from probecast.tui.widgets.ranking import COLUMNS

KEYS = [key for key, _ in COLUMNS]


def probe_log(path: Path, b: int, peak: float, ran_out: bool = False) -> Path:
    log = LogBuilder(batch_size=b, instance="g5.xlarge", probe=f"p{b}", workload="w")
    if not ran_out:
        log.init(1.0).steps(0, [0.1 * (1 + b / 512)] * 12)
    log.events.append({"ev": "memory", "t": log.t, "device": "cpu", "host_peak_mb": peak,
                       "host_limit_mb": 4096.0, "host_limit_kind": "memory"})
    if not ran_out:
        return log.end().write(path)
    reason = f"b{b} does not fit on cpu (limit 4096 MB): MemoryError: Unable to allocate"
    log.timed("done", 0.5, status="does-not-fit", reason=reason)
    log.timed("end", 0.1, status="does-not-fit", reason=reason, exit_code=1)
    return log.write(path)


async def test_a_replayed_probe_that_did_not_fit_is_a_row_that_says_so(tmp_path: Path) -> None:
    probe_log(tmp_path / "a.jsonl", 64, 600.0)
    probe_log(tmp_path / "b.jsonl", 256, 1080.0)
    probe_log(tmp_path / "c.jsonl", 4096, 4090.0, ran_out=True)
    app = make_replay_app([str(tmp_path)], 0)
    async with app.run_test(size=(80, 24)) as pilot:
        table = await finished_view(app, pilot)
        rows = [[str(table.get_cell_at((i, k))) for k in range(len(KEYS))]
                for i in range(table.row_count)]
        assert len(rows) == 3
        last = dict(zip(KEYS, rows[-1]))  # after the ranked rows
        assert last["rank"] == "✗" and last["runtime"] == "no fit" and last["batch"] == "4096"
        assert last["cost"] == "-" and "4.0G" in last["bounds"]
        assert all(":" not in r[KEYS.index("runtime")] for r in rows[:2])  # times, ranked
        panel = next(p for p in app.screen.query(ProbePanel) if p.key == "c")
        assert panel.entry.status == "does-not-fit"
        assert "b4096 does not fit on cpu" in hardware_line(panel.entry).plain
        table.move_cursor(row=2)
        await pilot.pause()
        detail = app.screen.query_one(DetailView)
        text = detail.plain_text(78)
        assert "does not fit" in text and "no time or cost" in text
        assert "forecast (10% headroom)" in text
        table.move_cursor(row=0)
        await pilot.pause()
        text = detail.plain_text(78)
        assert "memory: peak host RSS" in text and "on g5.xlarge: b" in text


async def test_f_on_the_setup_screen_runs_the_batch_size_search(tmp_path: Path,
                                                                 monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from probecast.core.run import find_batch

    searched: list[tuple[list[str], list[int]]] = []

    async def fake_find_on(session, hosts, settings, log_dir, *args):  # type: ignore[no-untyped-def]
        searched.append(([h.name for h in hosts], list(settings.batch_sizes)))
        return []

    monkeypatch.setattr(find_batch, "find_on", fake_find_on)
    config = Config(hosts=[Host(name="local", kind="local", instance="local")],
                    probe=ProbeSettings(batch_sizes=[32, 64], max_steps=5), path=None)
    app = ProbecastApp(Session(Board(Pricing(Catalog.embedded())), config=config,
                               memory_from=[str(tmp_path)]), setup=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.press("f")
        await pilot.pause()
        summary = str(app.screen.query_one("#summary").render())
        assert "find the largest batch size" in summary
        assert "memory: nothing to forecast from (no mnist-cnn probes" in summary
        await pilot.press("s")
        await app.workers.wait_for_complete()
        await pilot.pause()
    assert searched == [(["local"], [32, 64])]
