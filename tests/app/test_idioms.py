"""The app by Textual's idioms: the run screen's view is reactive state whose change redraws the
ranking once; a chart is saved in a worker thread while the keys stay live; the setup summary
is rebuilt once the typing pauses; the palette offers the actions of the screen it is on."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from textual.message import Message
from textual.widgets import Input
from textual.worker import Worker

from conftest import SAMPLE_LOGS, until
from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing, RankOptions
from probecast.core.run.board import Board
from probecast.core.run.config import Config, Host, ProbeSettings
from probecast.core.run.session import Session
from probecast.tui.app import ProbecastApp
from probecast.tui.commands import ProbecastCommands
from probecast.tui.main import make_replay_app
from probecast.tui.messages import ChartSaved
from probecast.tui.screens.run import RunScreen
from probecast.tui.widgets.ranking import RankingTable

SEISMIC = sorted(str(p) for p in (SAMPLE_LOGS / "reconstructed-dissertation").glob("seismic-fcn-*"))


async def finished(app: ProbecastApp, pilot: Any) -> RunScreen:
    await app.workers.wait_for_complete()
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, RunScreen)
    screen.refresh_view(force=True)
    await pilot.pause()
    return screen


def order(table: RankingTable) -> list[str]:
    return [table.coordinate_to_cell_key((i, 0))[0].value for i in range(table.row_count)]


def board_order(app: ProbecastApp, **options: Any) -> list[str]:
    return [r.key for r in app.session.board.ranking(RankOptions(**options)).rows]


async def test_the_view_is_reactive_state_and_one_key_redraws_the_ranking_once(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    app = make_replay_app(SEISMIC, speed=0)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await finished(app, pilot)
        table = screen.query_one(RankingTable)
        box = screen.query_one("#ranking-box")
        rankings: list[RankOptions] = []
        real = screen.update_ranking

        def counted() -> None:
            rankings.append(screen.options())
            real()

        monkeypatch.setattr(screen, "update_ranking", counted)
        await pilot.press("v")
        assert screen.by == "cost" and "cheapest" in str(box.border_title)
        assert order(table) == board_order(app, by="cost") != board_order(app, by="time")
        assert len(rankings) == 1
        # `]` changes two things (the weight and the weighted view): one ranking, for both
        rankings.clear()
        await pilot.press("right_square_bracket")
        assert (screen.by, screen.weight) == ("weighted", 0.6)
        assert [(o.by, o.weight) for o in rankings] == [("weighted", 0.6)]
        assert "weighted 0.6" in str(box.border_title)
        # the state, set from anywhere, redraws through the same watchers
        screen.by, screen.horizon_index = "time", 1
        await pilot.pause()
        assert "5 epochs" in str(box.border_title) and "fastest" in str(box.border_title)
        assert order(table) == board_order(app, epochs=5)


async def test_a_chart_is_saved_in_a_worker_thread_while_the_keys_act(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from probecast.core.report import figures

    monkeypatch.chdir(tmp_path)
    gate = threading.Event()
    on_main_thread: list[bool] = []
    real = figures.render

    def held(*args: Any, **kwargs: Any) -> Path:  # matplotlib's real figure, once let go
        on_main_thread.append(threading.current_thread() is threading.main_thread())
        assert gate.wait(30), "the test never let the render go"
        return real(*args, **kwargs)

    monkeypatch.setattr(figures, "render", held)
    seen: list[Message] = []
    app = make_replay_app(SEISMIC, speed=0)
    async with app.run_test(size=(80, 24), message_hook=seen.append) as pilot:
        await finished(app, pilot)
        await pilot.press("g", "e")  # the scatter, saved
        saving = [w for w in app.workers if w.group == "chart-export"]
        assert len(saving) == 1 and not saving[0].is_finished
        assert saving[0].description == "save the chart as a PNG"
        await pilot.press("g")  # the screen answers while matplotlib works
        assert app.screen.kind == "crossover"  # type: ignore[attr-defined]
        await pilot.press("e")  # a second save waits its turn: pyplot is one figure at a time
        assert [w for w in app.workers if w.group == "chart-export"] == saving
        gate.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
    assert on_main_thread == [False]
    saved = [m for m in seen if isinstance(m, ChartSaved)]
    assert len(saved) == 1 and saved[0].path is not None
    assert saved[0].path.name.startswith("scatter-") and saved[0].path.read_bytes()[:4] == b"\x89PNG"
    states = [m.state.name for m in seen if isinstance(m, Worker.StateChanged)
              and m.worker is saving[0]]
    assert states[-1] == "SUCCESS"


def setup_app() -> ProbecastApp:
    hosts = [Host(name="g5-a", instance="g5.xlarge", address="10.0.0.1")]
    config = Config(hosts=hosts, probe=ProbeSettings(batch_sizes=[64], max_steps=30),
                    path=Path("probecast.toml"))
    return ProbecastApp(Session(Board(Pricing(Catalog.embedded())), config=config,
                                memory_from=[str(SAMPLE_LOGS / "cpu-keras" / "probes")]),
                        setup=True)


async def test_typing_in_the_setup_rebuilds_the_summary_once_the_typing_pauses(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import probecast.tui.screens.setup as setup

    monkeypatch.setattr(setup, "SUMMARY_DEBOUNCE", 1.0)  # keystrokes of a loaded CI stay inside
    app = setup_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        screen = app.screen
        assert isinstance(screen, setup.SetupScreen)
        await until(lambda: not screen.summary_due.pending, "the start-up's settings to settle", 60)
        builds: list[str] = []
        real = screen.update_summary

        def counted() -> None:
            builds.append(screen.query_one("#max-steps", Input).value)
            real()

        monkeypatch.setattr(screen, "update_summary", counted)
        screen.query_one("#max-steps", Input).focus()
        await pilot.press("end", "backspace", "backspace", "1", "2", "0")
        assert builds == [] and screen.summary_due.pending  # five keystrokes, nothing rebuilt yet
        assert "30 steps" in str(screen.query_one("#summary").render())
        await until(lambda: not screen.summary_due.pending, "the typing's pause", 60)
        assert builds == ["120"]  # once, with everything typed
        assert "120 steps" in str(screen.query_one("#summary").render())


async def test_the_palette_offers_the_actions_of_the_screen_it_is_opened_on() -> None:
    async def offered(screen: Any) -> list[str]:
        return [str(hit.text) async for hit in ProbecastCommands(screen).discover()]

    app = setup_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        texts = await offered(app.screen)
        assert any(t.startswith("Setup: start the probes  [s]") for t in texts)
        assert any(t.startswith("Quit") for t in texts)  # and the app's
        assert not any(t.startswith(("Ranking:", "Charts:", "Replay:")) for t in texts)
        # through the real palette: typed, chosen, run on the setup screen
        await pilot.press("ctrl+p", *"find the largest")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen.find_batch  # type: ignore[attr-defined]
    live = ProbecastApp(Session(Board(Pricing(Catalog.embedded()))))
    async with live.run_test(size=(80, 24)):
        texts = await offered(live.screen)
        assert any(t.startswith("Ranking: fastest") for t in texts)
        assert not any("replay" in t.lower() or t.startswith("Setup:") for t in texts)
    replay = make_replay_app(SEISMIC[:1], speed=0)
    async with replay.run_test(size=(80, 24)):
        assert any(t.startswith("Replay: pause") for t in await offered(replay.screen))


async def test_a_replay_is_the_apps_worker_before_its_first_frame() -> None:
    """The given logs play in a worker made when the app mounts, which waits for the first frame
    before it reads them: whoever waits for the app's workers waits for the replay. Made only
    after the first frame, a loaded CI machine's test waited before it existed and read an
    empty ranking. Here the first frame never comes (the app's after-refresh calls are held)."""
    app = make_replay_app(SEISMIC[:1], speed=0)
    held: list[Any] = []
    app.call_after_refresh = lambda callback, *args, **kwargs: held.append(callback)  # type: ignore[method-assign]
    async with app.run_test(size=(80, 24)):
        probes = [w for w in app.workers if w.group == "probes"]
        assert len(probes) == 1 and not app.session.board.entries  # made, and waiting
        held.clear()
