"""The app opened from the command line with your own command: `probecast --host ... -b 32 -b 96
-- python train.py ...` shows the setup screen filled in - every named host picked, the batch
sizes chosen, the command and the probe length shown - before anything is probed."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Label, SelectionList

from probecast.core.cli.main import parse_command_line
from probecast.tui.main import make_app
from probecast.tui.screens.setup import SetupScreen

COMMAND = ["--", "python", "train.py", "--batch-size", "{batch_size}"]


def app_for(*args: str):  # type: ignore[no-untyped-def]
    """The app as the console script builds it for these arguments (without running it)."""
    return make_app(parse_command_line(list(args)))


@pytest.fixture(autouse=True)
def _in_an_empty_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no probecast.toml, no earlier sessions' logs


async def test_hosts_batch_sizes_and_command_from_the_command_line_fill_the_setup() -> None:
    app = app_for("--host", "ubuntu@gpu1:2222", "--host", "lab", "-b", "32", "-b", "96",
                  "--max-steps", "12", *COMMAND)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = pilot.app.screen
        assert isinstance(screen, SetupScreen)
        assert screen.selected_hosts == {"gpu1:2222", "lab"}  # named: both picked
        table = screen.query_one("#instances")
        for name in ("gpu1:2222", "lab"):
            assert str(table.get_cell(name, "pick")) == "✓"
            assert str(table.get_cell(name, "hosts")) == name
        # 96 is no preset: added to the list, and chosen with 32; nothing else is
        assert sorted(screen.query_one("#batches", SelectionList).selected) == [32, 96]
        assert screen.batch_sizes() == [32, 96]
        shown = str(screen.query_one("#command", Label).render())
        assert shown == "python train.py --batch-size {batch_size}"
        assert screen.query_one("#max-steps", Input).value == "12"
        summary = str(screen.query_one("#summary").render())
        assert "4 probes (2 host × 2 batch)" in summary
        # the plan Start (s) would run: what `probecast probe` with the same line runs
        plan = screen.plan()
        assert sorted(p.spec.key for p in plan) == ["gpu1:2222-b32", "gpu1:2222-b96", "lab-b32",
                                                    "lab-b96"]
        assert {p.spec.command_argv()[-1] for p in plan} == {"32", "96"}
        assert {(p.host.address, p.host.user, p.host.port) for p in plan} == {
            ("gpu1", "ubuntu", 2222), ("lab", None, None)}
        assert "your command" in str(pilot.app.sub_title)


async def test_without_hosts_this_machine_is_picked_and_no_builtin_workload_note() -> None:
    app = app_for("-b", "32", *COMMAND)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = pilot.app.screen
        assert isinstance(screen, SetupScreen)
        assert screen.selected_hosts == {"local"}
        assert screen.batch_sizes() == [32]
        assert not any("built-in workload" in str(n.message) for n in pilot.app._notifications)


async def test_a_command_without_a_batch_size_placeholder_offers_no_batch_sizes() -> None:
    """`probecast -- python train.py`: the program sets its own batch size, so one probe a host
    runs it as it is - the batch panel says so and picks nothing (before, it listed the presets
    and every size picked ran the very same command under another name)."""
    app = app_for("--", "python", "train.py", "--epochs", "2")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = pilot.app.screen
        assert isinstance(screen, SetupScreen)
        for picker in (screen.query_one("#batches", SelectionList),
                       screen.query_one("#custom-batches", Input)):
            assert picker.disabled and not picker.display
        # the command is shown whole, not cut to the field labels' width
        assert str(screen.query_one("#command", Label).render()) == "python train.py --epochs 2"
        assert screen.query_one("#command", Label).size.width >= len("python train.py --epochs 2")
        assert "no {batch_size}" in str(screen.query_one("#own-batch").render())
        plan = screen.plan()
        assert [p.spec.label for p in plan] == ["local"]  # the host's probe, no batch in its name
        assert "1 probes (1 host × the program's batch size)" in str(
            screen.query_one("#summary").render())
        await pilot.press("f")  # no batch size to search for the largest that fits
        await pilot.pause()
        assert not screen.find_batch
        assert any("no batch size to search" in str(n.message) for n in pilot.app._notifications)
