"""Functional tests of the app, driven by Pilot at 80x24 and 160x48. No sleeps: wait on workers."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from conftest import ROOT, SAMPLE_LOGS, until
from fakes import SteppingProbe
from pilot_steps import finished_view
from probecast.core.run.board import Board
from probecast.core.run.config import Config, Host, ProbeSettings
from probecast.core.model.events import Event, EventReader
from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing
from probecast.core.run.runners import ProbeSpec, RunnerItem, RunnerStatus
from probecast.core.run.session import Session
from probecast.tui.app import ProbecastApp
from probecast.tui.main import make_replay_app
from probecast.tui.widgets.ranking import COLUMNS, RankingTable

SEISMIC = sorted(str(p) for p in (SAMPLE_LOGS / "reconstructed-dissertation").glob("seismic-fcn-*"))
SIZES = [(80, 24), (160, 48)]
COLUMN_KEYS = [key for key, _ in COLUMNS]


def cli_order(*args: str) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "probecast.tui", "rank", *args, "--json"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    return [r["probe"] for r in json.loads(out)]


def cli_p(*args: str) -> list[str]:
    """`rank --json`'s probability that the leader beats each row, as the P column writes it."""
    by = "cost" if "cost" in args else "time"
    out = subprocess.run([sys.executable, "-m", "probecast.tui", "rank", *args, "--json"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    cells = []
    for r in json.loads(out):
        p = r["p_faster" if by == "time" else "p_cheaper"]
        cells.append("" if p is None else ">99%" if p >= 0.995 else f"{p:.0%}")
    return cells


def p_column(table: RankingTable) -> list[str]:
    return [str(table.get_cell_at((i, COLUMN_KEYS.index("p")))) for i in range(table.row_count)]


def table_order(table: RankingTable) -> list[str]:
    return [table.coordinate_to_cell_key((i, 0))[0].value for i in range(table.row_count)]


def title(app: ProbecastApp) -> str:
    return str(app.screen.query_one("#ranking-box").border_title)


@pytest.mark.parametrize("size", SIZES)
async def test_replay_to_the_end_matches_cli_rank_and_views_toggle(size) -> None:  # type: ignore[no-untyped-def]
    app = make_replay_app(SEISMIC, speed=0)
    async with app.run_test(size=size) as pilot:
        table = await finished_view(app, pilot)
        keys = table_order(table)
        assert len(keys) == 6
        # probe keys are file stems == probe ids in these logs
        assert keys == cli_order(*SEISMIC)
        assert "fastest" in title(app) and "planned" in title(app)
        assert p_column(table) == cli_p(*SEISMIC)
        await pilot.press("v")
        assert "cheapest" in title(app)
        assert table_order(table) == cli_order(*SEISMIC, "--by", "cost")
        assert p_column(table) == cli_p(*SEISMIC, "--by", "cost")
        await pilot.press("v")  # weighted: no single probability to show
        assert set(p_column(table)) == {""}
        await pilot.press("v", "h")  # back to fastest, then horizon 5 epochs
        assert "5 epochs" in title(app) and "fastest" in title(app)
        assert table_order(table) == cli_order(*SEISMIC, "--epochs", "5")
        await pilot.press("h", "h")  # 20 epochs
        assert "20 epochs" in title(app)
        assert table_order(table) == cli_order(*SEISMIC, "--epochs", "20")


async def test_a_replay_of_gzipped_logs_ranks_them_as_rank_does(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The corpus is committed as .jsonl.gz: replay reads it as `rank` does (not as malformed
    text), names each probe without the suffix, and `o` finds its .output.gz."""
    import gzip

    from textual.widgets import Log

    from probecast.tui.screens.output import OutputScreen

    for src in SEISMIC:
        name = Path(src).name
        (tmp_path / f"{name}.gz").write_bytes(gzip.compress(Path(src).read_bytes()))
    first = tmp_path / f"{Path(SEISMIC[0]).stem}.output.gz"
    first.write_bytes(gzip.compress(b"Epoch 1/3\nhello from a gzipped output\n"))
    app = make_replay_app([str(tmp_path)], speed=0)
    async with app.run_test(size=(80, 24)) as pilot:
        table = await finished_view(app, pilot)
        entries = app.session.board.entries
        assert all("malformed" not in e.detail and e.status == "done" for e in entries.values())
        assert table_order(table) == cli_order(str(tmp_path)) == cli_order(*SEISMIC)
        table.move_cursor(row=table.get_row_index(Path(SEISMIC[0]).stem))
        await pilot.press("o")
        await pilot.pause()
        assert isinstance(app.screen, OutputScreen)
        text = "\n".join(str(line) for line in app.screen.query_one(Log).lines)
        assert "hello from a gzipped output" in text


async def test_cursor_stays_on_its_row_when_the_order_changes() -> None:
    app = make_replay_app(SEISMIC, speed=0)
    async with app.run_test(size=(80, 24)) as pilot:
        table = await finished_view(app, pilot)
        await pilot.press("h")  # 5 epochs: p2.xlarge is 3rd
        target = "seismic-fcn-p2.xlarge-b256"
        table.move_cursor(row=table.get_row_index(target))
        before = table.get_row_index(target)
        await pilot.press("h", "h")  # 20 epochs: p2.xlarge drops to 5th
        assert table.get_row_index(target) != before
        assert table.selected_key() == target


async def test_detail_view_shows_terms_and_equation() -> None:
    app = make_replay_app(SEISMIC, speed=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await finished_view(app, pilot)
        box = app.screen.query_one("#detail-box")
        assert not box.display  # narrow terminal: detail on demand
        await pilot.press("d")
        assert box.display
        text = app.screen.query_one("#detail").plain_text()
        assert "Eq. 5.3" in text and "T_init" in text and "N_it" in text and "159" in text


async def test_mixed_workloads_rank_one_workload_at_a_time() -> None:
    app = make_replay_app([str(SAMPLE_LOGS / "reconstructed-dissertation")], speed=0)
    async with app.run_test(size=(80, 24)) as pilot:
        table = await finished_view(app, pilot)
        assert table.row_count == 6
        first = title(app)
        await pilot.press("w")
        assert title(app) != first and table.row_count == 6


# ---- live probes with a fake runner ------------------------------------------------------------


class GatedRunner:
    """Speaks schema v1 like an agent; releases events when the test says so."""

    def __init__(self, spec: ProbeSpec, n_it: int = 100, step: float = 0.1) -> None:
        self.spec = spec
        self.gate = asyncio.Event()
        self.cancelled = False
        t = 0.0
        lines = [{"ev": "start", "t": 0, "v": 1, "probe": spec.key, "instance": spec.instance,
                  "batch_size": spec.batch_size, "workload": "fake", "steps_per_epoch": n_it,
                  "val_steps": 0}]
        for i, dt in enumerate([1.0, 2.0] + [step] * 20):
            t += dt
            lines.append({"ev": "init", "t": t, "dt": dt} if i == 0 else
                         {"ev": "step", "t": t, "dt": dt, "epoch": 0, "step": i - 1})
        reader = EventReader()
        self.events: list[Event] = list(reader.read(json.dumps(x) for x in lines))

    async def stream(self) -> AsyncIterator[RunnerItem]:
        yield RunnerStatus("running")
        for i, ev in enumerate(self.events):
            if i == 10:
                await self.gate.wait()
            if self.cancelled:
                yield RunnerStatus("stopped", "cancelled")
                return
            yield ev
        yield RunnerStatus("done")

    async def cancel(self) -> None:
        self.cancelled = True
        self.gate.set()


def live_app(runners: dict[str, GatedRunner]) -> ProbecastApp:
    hosts = [Host(name="g5-a", instance="g5.xlarge", address="10.0.0.1"),
             Host(name="p3-a", instance="p3.2xlarge", address="10.0.0.2")]
    config = Config(hosts=hosts, probe=ProbeSettings(batch_sizes=[64], max_steps=20), path=Path("t.toml"))

    def factory(host, spec, path):  # type: ignore[no-untyped-def]
        step = 0.05 if host.name == "p3-a" else 0.1
        runners[spec.key] = GatedRunner(spec, step=step)
        return runners[spec.key]

    return ProbecastApp(Session(Board(Pricing(Catalog.embedded())), config=config, factory=factory),
                        setup=True)


@pytest.mark.parametrize("size", SIZES)
async def test_setup_pick_start_rows_appear_then_cancel(size, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    runners: dict[str, GatedRunner] = {}
    app = live_app(runners)
    async with app.run_test(size=size) as pilot:
        # pick both hosts' instances: filter, then space on the first row
        await pilot.press("slash", *"g5", "enter", "space")
        await pilot.press("slash", "ctrl+a", "ctrl+k", *"p3.2x", "enter", "space")
        summary = str(app.screen.query_one("#summary").render())
        assert "2 probes" in summary and "worst" in summary and "$" in summary
        await pilot.press("s")
        await pilot.pause()
        assert set(runners) == {"g5-a-b64", "p3-a-b64"}
        runners["p3-a-b64"].gate.set()
        await until(lambda: app.session.board.entries["p3-a-b64"].status == "done", "the p3 probe to end")
        app.screen.refresh_view(force=True)  # type: ignore[attr-defined]
        await pilot.pause()
        table = app.screen.query_one(RankingTable)
        assert table_order(table) == ["p3-a-b64", "g5-a-b64"]  # rows appear, faster first
        assert app.session.board.entries["g5-a-b64"].status == "running"
        # cancel the g5 probe from the ranking
        table.move_cursor(row=table.get_row_index("g5-a-b64"))
        await pilot.press("x")
        await app.workers.wait_for_complete()
        assert app.session.board.entries["g5-a-b64"].status == "stopped"
        assert app.session.board.entries["p3-a-b64"].status == "done"


class SlowCancelRunner(GatedRunner):
    """A probe whose cancel takes long (an SSH host's grace period), released by the test."""

    def __init__(self, spec: ProbeSpec, step: float = 0.1) -> None:
        super().__init__(spec, step=step)
        self.cancel_started = asyncio.Event()
        self.release = asyncio.Event()
        self.cancel_done = False

    async def cancel(self) -> None:
        self.cancel_started.set()
        try:
            await asyncio.wait_for(self.release.wait(), 30)  # bounded: a test must end
        except asyncio.TimeoutError:
            pass
        self.cancel_done = True
        await super().cancel()


async def test_keys_act_while_a_cancel_is_under_way(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    runners: dict[str, GatedRunner] = {}
    app = live_app(runners)
    app.session.factory = lambda host, spec, path: runners.setdefault(  # type: ignore[assignment]
        spec.key, SlowCancelRunner(spec, step=0.05 if host.name == "p3-a" else 0.1))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("slash", *"g5", "enter", "space")
        await pilot.press("slash", "ctrl+a", "ctrl+k", *"p3.2x", "enter", "space", "s")
        await until(lambda: len(app.session.board.entries) == 2 and all(
            e.state.steps >= 2 for e in app.session.board.entries.values()), "two steps of both probes")
        app.screen.refresh_view(force=True)  # type: ignore[attr-defined]
        await pilot.pause()
        table = app.screen.query_one(RankingTable)
        table.move_cursor(row=table.get_row_index("g5-a-b64"))
        slow = runners["g5-a-b64"]
        assert isinstance(slow, SlowCancelRunner)
        await pilot.press("x")
        await asyncio.wait_for(slow.cancel_started.wait(), 60)
        await pilot.press("v")  # another key, while the cancel waits
        assert "cheapest" in title(app)
        assert not slow.cancel_done  # it acted before the cancel was over
        slow.release.set()
        await app.workers.wait_for_complete([w for w in app.workers if w.group == "cancel"])
        assert slow.cancel_done
        runners["p3-a-b64"].gate.set()  # the other probe ends: the run is over
        await until(lambda: not app.session.board.active, "the run to end")
        assert app.session.board.entries["g5-a-b64"].status == "stopped"
        assert app.session.board.entries["p3-a-b64"].status == "done"


class LengthRunner(SteppingProbe):
    """A probe as long as its spec asks (max_steps), 2 % apart between hosts and noisy, so the
    ranking cannot tell them apart and the adaptive probe runs them again, longer."""

    STEP = {"g5.xlarge": 1.00, "p3.2xlarge": 1.02}

    def __init__(self, spec: ProbeSpec, again: asyncio.Event) -> None:
        super().__init__(spec, self.STEP[spec.instance], noise=0.3)
        self.again = again  # a re-probe (longer than the first 12 steps) waits for it

    async def ready(self) -> None:
        if (self.spec.max_steps or 0) > 12:
            await self.again.wait()


async def test_a_probe_panel_follows_its_re_probe(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The adaptive probe restarts a probe on the board (a new entry, same key): its panel must
    show the new probe, not keep drawing the superseded one."""
    from probecast.core.run.job import ProbeJob
    from probecast.tui.messages import StartProbes
    from probecast.tui.widgets.probe_panel import ProbePanel

    hosts = [Host(name="g5-a", instance="g5.xlarge", kind="local"),
             Host(name="p3-a", instance="p3.2xlarge", kind="local")]
    settings = ProbeSettings(batch_sizes=[64], max_steps=12, adaptive_budget=1e6)
    config = Config(hosts=hosts, probe=settings, path=Path("t.toml"))
    again = asyncio.Event()
    session = Session(Board(Pricing(Catalog.embedded())), config=config,
                      factory=lambda host, spec, path: LengthRunner(spec, again))
    app = ProbecastApp(session)
    async with app.run_test(size=(80, 40)) as pilot:
        app.post_message(StartProbes(ProbeJob(session, hosts, tmp_path)))
        await until(lambda: (tmp_path / "superseded").exists() and len(session.board.entries) == 2
                    and all(e.status == "pending" for e in session.board.entries.values()),
                    "the first probes to end and the re-probes to wait")
        app.screen.refresh_view(force=True)  # type: ignore[attr-defined]
        await pilot.pause()
        assert len(app.screen.query(ProbePanel)) == 2  # drawn before the re-probe
        again.set()
        await finished_view(app, pilot)
        assert session.adaptive is not None and session.adaptive.reprobed  # probed again
        panels = {p.id: p for p in app.screen.query(ProbePanel)}
        for key, entry in session.board.entries.items():
            assert entry.state.steps >= 18  # the re-probe's, longer than the first 12 steps
            panel = panels[f"probe-{key}"]
            assert panel.entry is entry
            headline = str(panel.query_one(".headline").render())
            assert f"{entry.state.steps:>5} steps" in headline, headline


async def test_quit_asks_while_probes_run_and_stops_them(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    runners: dict[str, GatedRunner] = {}
    app = live_app(runners)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("slash", *"g5", "enter", "space", "s")
        await pilot.pause()
        await pilot.press("q")
        await pilot.pause()
        from probecast.tui.screens.dialogs import ConfirmScreen
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
        await pilot.press("q")
        await pilot.pause()
        await pilot.press("y")
        await app.workers.wait_for_complete()
    assert runners["g5-a-b64"].cancelled


class HangingCancelRunner(GatedRunner):
    """A host that never finishes stopping its probe (a hung SSH host): its cancel waits."""

    async def cancel(self) -> None:
        self.cancelled = True
        await asyncio.sleep(60)  # bounded: a test must end


async def test_quit_gives_up_on_a_host_that_does_not_stop(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Quitting waits for the hosts to stop their probes only so long (Session.stop_wait), then
    quits all the same, each probe marked stopped: the wait used to raise, and the app stayed
    up with its probes cancelled."""
    monkeypatch.chdir(tmp_path)
    runners: dict[str, GatedRunner] = {}
    app = live_app(runners)
    app.session.factory = lambda host, spec, path: runners.setdefault(  # type: ignore[assignment]
        spec.key, HangingCancelRunner(spec))
    app.session.stop_wait = 0.5
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("slash", *"g5", "enter", "space", "s")
        await until(lambda: app.session.board.entries.get("g5-a-b64") is not None, "the probe to start")
        await pilot.press("q")
        await pilot.pause()
        await pilot.press("y")
        await until(lambda: not app.is_running, "the app to quit", 60)
    # the board says stopped though the host never confirmed it (a real runner's log ends in
    # its stream's own `finally`, where the cancel lands: test_ssh's cancel tests)
    assert runners["g5-a-b64"].cancelled
    assert app.session.board.entries["g5-a-b64"].status == "stopped"


async def test_export_writes_csv_json_markdown(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    app = make_replay_app(SEISMIC, speed=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await finished_view(app, pilot)
        await pilot.press("e")
    files = sorted((tmp_path / "probecast-exports").iterdir())
    assert [f.suffix for f in files] == [".csv", ".json", ".md"]
    assert "p3.2xlarge" in files[2].read_text()
    assert json.loads(files[1].read_text())[0]["instance"] == "p3.2xlarge"


def test_tui_process_never_imports_tensorflow() -> None:
    code = (
        "import asyncio, sys\n"
        "from probecast.tui.main import make_replay_app\n"
        "async def main():\n"
        "    app = make_replay_app(['sample_logs'], 0)\n"
        "    async with app.run_test(size=(80, 24)) as pilot:\n"
        "        await app.workers.wait_for_complete()\n"
        "asyncio.run(main())\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('tensorflow', 'keras')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("size", SIZES)
async def test_charts_open_cycle_and_save(size, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from textual_plotext import PlotextPlot

    from probecast.tui.screens.charts import ChartScreen

    monkeypatch.chdir(tmp_path)
    app = make_replay_app(SEISMIC, speed=0)
    async with app.run_test(size=size) as pilot:
        await finished_view(app, pilot)
        await pilot.press("g")
        await pilot.pause()
        assert isinstance(app.screen, ChartScreen) and app.screen.kind == "scatter"
        plot = app.screen.query_one(PlotextPlot)
        assert plot.size.width >= 60 and plot.size.height >= 10  # readable at 80x24
        await pilot.press("g")  # crossover: the crossings are named under the chart
        await pilot.pause()
        notes = str(app.screen.query_one("#chart-notes").render())
        assert "p3.8xlarge b256 is faster than p2.xlarge b256 from 5 epochs on" in notes
        await pilot.press("g", "e")
        await app.workers.wait_for_complete()  # matplotlib renders in a worker thread
        saved = list((tmp_path / "probecast-exports").glob("batch-*.png"))
        assert saved and saved[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        await pilot.press("escape")
        assert not isinstance(app.screen, ChartScreen)


async def test_weighted_view_key_and_title() -> None:
    app = make_replay_app(SEISMIC, speed=0)
    async with app.run_test(size=(80, 24)) as pilot:
        table = await finished_view(app, pilot)
        await pilot.press("v", "v")
        assert "weighted 0.5" in title(app)
        await pilot.press("right_square_bracket", "right_square_bracket",
                          "right_square_bracket", "right_square_bracket", "right_square_bracket")
        assert "weighted 1.0" in title(app)  # all weight on time: the fastest order
        assert table_order(table) == cli_order(*SEISMIC)
        for _ in range(10):
            await pilot.press("left_square_bracket")
        assert "weighted 0.0" in title(app)
        assert table_order(table) == cli_order(*SEISMIC, "--by", "cost")


async def test_detail_says_where_n_ep_comes_from() -> None:
    full = SAMPLE_LOGS / "cpu-keras" / "full-runs"
    probes = [str(SAMPLE_LOGS / "cpu-keras" / "probes" / "probe-mnist-cnn-b64-cpu-1core.jsonl"),
              str(SAMPLE_LOGS / "cpu-keras" / "probes" / "probe-mnist-cnn-b256-cpu-1core.jsonl")]
    app = make_replay_app(probes, 0, [str(p) for p in sorted(full.glob("*-15ep.jsonl"))])
    async with app.run_test(size=(160, 48)) as pilot:
        table = await finished_view(app, pilot)
        table.move_cursor(row=table.get_row_index("probe-mnist-cnn-b64-cpu-1core"))
        await pilot.pause()
        text = app.screen.query_one("#detail").plain_text(120)
        assert "N_ep" in text and "2 (full run (1 run), accuracy 0.787)" in text


async def test_replay_pause_resume_and_speed_keys() -> None:
    app = make_replay_app(SEISMIC[:1], speed=1.0)
    async with app.run_test(size=(80, 24)) as pilot:
        runner = app.session.replay_runners[0]
        await pilot.press("space")
        assert runner.paused
        app.screen.update_status()  # type: ignore[attr-defined]
        assert "paused ×1" in str(app.screen.query_one("#statusline").render())
        await pilot.press("plus", "plus")
        assert runner.speed == 4.0
        await pilot.press("minus")
        assert runner.speed == 2.0
        await pilot.press("space")
        assert not runner.paused
        runner.speed = 1000.0
        await app.workers.wait_for_complete()
        assert app.session.board.entries[runner.spec.key].status == "done"


async def test_o_shows_the_probes_program_output_kept_beside_its_log(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import shutil

    from textual.widgets import Log

    from probecast.tui.screens.output import OutputScreen

    src = SAMPLE_LOGS / "cpu-keras" / "probes" / "probe-mnist-cnn-b64-cpu-1core.jsonl"
    log = tmp_path / "probe.jsonl"
    shutil.copy(src, log)
    log.with_suffix(".output").write_bytes(b"Epoch 1/3\n 1/20 [=>....] loss 2.3\r20/20 [=====] loss 0.4\n"
                                           b"hello from the script\n")
    app = make_replay_app([str(log)], 0)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("o")
        await pilot.pause()
        assert isinstance(app.screen, OutputScreen)
        text = "\n".join(str(line) for line in app.screen.query_one(Log).lines)
        assert "hello from the script" in text
        assert "20/20 [=====] loss 0.4" in text and "1/20 [=>" not in text  # a bar's last state
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, OutputScreen)


async def test_many_logs_show_the_top_rows_and_a_few_panels(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Thousands of logs: the table holds the top rows and the panels the first probes, and both
    say how many there are (limits made small here; benchmarks/scale.py runs 10 000)."""
    import probecast.tui.screens.run as run_screen
    import probecast.tui.widgets.ranking as ranking_widget

    monkeypatch.setattr(run_screen, "MAX_PANELS", 3)
    monkeypatch.setattr(run_screen, "MAX_ROWS", 5)
    monkeypatch.setattr(ranking_widget, "MAX_ROWS", 5)
    source = SAMPLE_LOGS / "cpu-keras" / "probes" / "probe-mnist-cnn-b64-cpu-1core.jsonl"
    text = source.read_text()
    for i in range(8):
        (tmp_path / f"copy-{i}.jsonl").write_text(
            text.replace('"probe":"probe-mnist-cnn-b64-cpu-1core"', f'"probe":"copy-{i}"'))
    app = make_replay_app([str(tmp_path)], speed=0)
    async with app.run_test(size=(100, 40)) as pilot:
        table = await finished_view(app, pilot)
        assert table.row_count == 5
        assert "top 5 of 8 rows" in str(app.screen.query_one("#ranking-box").border_subtitle)
        assert len(app.screen.query(run_screen.ProbePanel)) == 3
        assert "first 3 of 8" in str(app.screen.query_one("#probes").border_title)


async def test_a_changed_estimate_repaints_its_row_not_the_table() -> None:  # type: ignore[no-untyped-def]
    """Over a bastion's link every repainted line costs bytes: a new figure in one row refreshes
    that row's region; the table as a whole is repainted only when the order changes."""
    from textual.app import App, ComposeResult

    from conftest import ranked_row
    from probecast.core.model.rank.ranking import rank

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield RankingTable()

    rows = [ranked_row("a", "g5.xlarge", 64, 100.0, 1.0), ranked_row("b", "p3.2xlarge", 64, 300.0, 2.0)]
    app = One()
    async with app.run_test(size=(80, 12)) as pilot:
        table = app.query_one(RankingTable)
        table.apply(rank(rows))
        await pilot.pause()
        whole: list[bool] = []
        real = table.refresh

        def spy(*regions, **kwargs):  # type: ignore[no-untyped-def]
            whole.append(not regions)
            return real(*regions, **kwargs)

        table.refresh = spy  # type: ignore[method-assign]
        rows = [ranked_row("a", "g5.xlarge", 64, 110.0, 1.1), ranked_row("b", "p3.2xlarge", 64, 300.0, 2.0)]
        table.apply(rank(rows))
        assert whole and not any(whole)  # regions only
        assert "1m50s" in str(table.get_row("a")[3])
        rows = [ranked_row("a", "g5.xlarge", 64, 400.0, 4.0), ranked_row("b", "p3.2xlarge", 64, 300.0, 2.0)]
        table.apply(rank(rows))  # the order changed: a full repaint is right
        assert any(whole) and table_order(table) == ["b", "a"]


async def test_a_replay_that_loads_inside_one_redraw_interval_is_still_drawn(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The ranking is throttled; a board that stops changing inside the interval must still be
    drawn at the next tick (it once stayed empty: the change was marked seen, not drawn)."""
    monkeypatch.setenv("PROBECAST_REFRESH", "0.5")
    app = make_replay_app([str(SAMPLE_LOGS / "cpu-torch")], speed=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        table = app.screen.query_one(RankingTable)
        # no forced refresh: the timer alone draws it (it once never did); the title names the
        # workload shown through its watcher, a tick after the rows (a loaded machine sees both)
        await until(lambda: table.row_count > 0 and "hf_trainer" in title(app),
                    "the refresh timer to draw the ranking and its title", 60)
        assert table.row_count == 1  # one workload at a time


async def test_a_probe_that_left_a_checkpoint_says_so_in_its_panel_and_detail(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A recorded probe whose agent said, before its end, what the stopped program left in its
    folder (a `left-files` warning): the ended probe's panel says it left files, and the detail
    view names them - a user about to train in that folder is told before they resume from it."""
    from probecast.tui.widgets.probe_panel import ProbePanel

    src = SAMPLE_LOGS / "cpu-torch" / "probe-hf_trainer-b16-e3-c2.jsonl"
    lines = src.read_text().splitlines()
    end = json.loads(lines[-1])
    warning = {"ev": "log", "t": end["t"], "level": "warning", "code": "left-files",
               "msg": "the probe stopped the program before its end: it left 1 file(s) it wrote "
                      "in its folder: out/checkpoint-40/model.safetensors - as the stopped run "
                      "left them"}
    log = tmp_path / src.name
    log.write_text("\n".join([*lines[:-1], json.dumps(warning), lines[-1]]) + "\n")
    app = make_replay_app([str(log)], speed=0)
    async with app.run_test(size=(100, 40)) as pilot:
        await finished_view(app, pilot)
        panel = app.screen.query_one(ProbePanel)
        assert "left files in its folder" in str(panel.query_one(".headline").render())
        await pilot.press("d")
        assert "out/checkpoint-40/model.safetensors" in app.screen.query_one("#detail").plain_text()
