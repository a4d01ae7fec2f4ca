"""Snapshot tests of the main screens with stable content (no clocks, no wall-clock paths).

Update after an intended change: .venv/bin/pytest tests/app/test_snapshots.py --snapshot-update
and look at the SVGs (tests/app/__snapshots__/) before committing them.
"""

from __future__ import annotations

from pathlib import Path

from conftest import SAMPLE_LOGS
from probecast.core.run.board import Board
from probecast.core.run.config import Config, Host, ProbeSettings
from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing
from probecast.core.run.session import Session
from probecast.tui.app import ProbecastApp
from probecast.tui.main import make_replay_app

SEISMIC = sorted(str(p) for p in (SAMPLE_LOGS / "reconstructed-dissertation").glob("seismic-fcn-*"))


async def replay_done(pilot) -> None:  # type: ignore[no-untyped-def]
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    pilot.app.screen.refresh_view(force=True)
    pilot.app.clear_notifications()
    await pilot.pause()


def test_run_screen_replay(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_replay_app(SEISMIC, 0), terminal_size=(80, 24), run_before=replay_done)


def test_run_screen_detail_wide(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_replay_app(SEISMIC, 0), terminal_size=(160, 48), run_before=replay_done)


def test_help_screen(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_replay_app(SEISMIC, 0), press=["question_mark"], terminal_size=(80, 24),
                        run_before=replay_done)


def test_setup_screen(snap_compare) -> None:  # type: ignore[no-untyped-def]
    hosts = [Host(name="g5-a", instance="g5.xlarge", address="10.0.0.1"),
             Host(name="p3-a", instance="p3.2xlarge", address="10.0.0.2")]
    config = Config(hosts=hosts, probe=ProbeSettings(batch_sizes=[64, 256], max_steps=30),
                    path=Path("probecast.toml"))
    app = ProbecastApp(Session(Board(Pricing(Catalog.embedded())), config=config,
                               title="probecast.toml",
                               memory_from=[str(SAMPLE_LOGS / "cpu-keras" / "probes")]),
                       setup=True)

    async def memory_read(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.app.workers.wait_for_complete()  # the memory forecast, read in a thread
        await pilot.pause()

    assert snap_compare(app, press=["space"], terminal_size=(80, 24), run_before=memory_read)
