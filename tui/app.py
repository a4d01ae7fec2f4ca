"""The probecast app. It receives its sources (a board, runners or a plan) from a factory."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual import on, work
from textual.app import App
from textual.binding import Binding
from textual.worker import Worker, WorkerState

from probecast.core.run.board import Board
from probecast.core.run.config import Config
from probecast.core.run.plan import PlannedProbe, RunnerFactory, run_plan, run_runners, runner_factory
from probecast.core.run.runners import ReplayRunner, Runner

from .commands import ProbecastCommands
from .screens.run import RunScreen


class ProbecastApp(App[None]):
    CSS_PATH = Path(__file__).parent / "probecast.tcss"  # absolute: subclasses live elsewhere
    TITLE = "probecast"
    COMMANDS = App.COMMANDS | {ProbecastCommands}
    BINDINGS = [
        Binding("q", "quit", "Quit", id="quit"),
        Binding("question_mark", "help", "Help", id="help"),
    ]

    def __init__(
        self,
        board: Board,
        *,
        config: Config | None = None,
        replay: list[ReplayRunner] | None = None,
        runners: list[Runner] | None = None,
        log_dir: Path | None = None,
        factory: RunnerFactory | None = None,
        horizons: tuple[int, ...] = (5, 10, 20, 25),
        setup: bool = False,
        subtitle: str = "",
    ) -> None:
        super().__init__()
        self.board = board
        self.config = config
        self.replay_runners = replay or []
        self.runners = list(runners or []) + list(self.replay_runners)
        self.log_dir = log_dir
        self.factory = factory
        self.horizons = horizons
        self.start_with_setup = setup
        self.sub_title = subtitle
        self._live: dict[str, Runner] = {}

    def on_mount(self) -> None:
        import signal

        try:  # the terminal went away (SSH drop): stop the probes and leave, no questions
            asyncio.get_running_loop().add_signal_handler(
                signal.SIGHUP, lambda: self.run_worker(self._hang_up(), group="quit",
                                                       exit_on_error=False, description="hang up"))
        except (NotImplementedError, RuntimeError):
            pass
        if self.start_with_setup:
            from .screens.setup import SetupScreen

            self.push_screen(SetupScreen())
        else:
            self.push_screen(RunScreen())
            if self.runners:
                self.drive_runners(self.runners)

    # ---- workers ------------------------------------------------------------------------------

    def drive_runners(self, runners: list[Runner]) -> None:
        for r in runners:
            self._live[r.spec.key] = r
        self.run_worker(run_runners(self.board, runners), exclusive=True, group="probes",
                        exit_on_error=False, description="drive probes")

    def start_plan(self, plan: list[PlannedProbe], concurrency: int, timeout: float) -> None:
        make = self.factory or runner_factory(self.config.hosts if self.config else [])

        def factory(host, spec, path):  # type: ignore[no-untyped-def]
            runner = make(host, spec, path)
            self._live[spec.key] = runner
            return runner

        if plan:
            self.log_dir = plan[0].log_path.parent
        self.run_worker(run_plan(self.board, plan, concurrency=concurrency, timeout=timeout,
                                 factory=factory),
                        exclusive=True, group="probes", exit_on_error=False, description="run probes")
        if self.start_with_setup:
            self.switch_screen(RunScreen())

    @on(Worker.StateChanged)
    def _worker_state(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            self.notify(f"{event.worker.description} failed: {event.worker.error}",
                        severity="error", timeout=10)
        elif event.state == WorkerState.SUCCESS and event.worker.group == "probes":
            failed = [e.spec.label for e in self.board.entries.values() if e.status == "failed"]
            msg = "All probes ended." + (f" Failed: {', '.join(failed)}" if failed else "")
            self.notify(msg, severity="warning" if failed else "information")

    async def cancel_probe(self, key: str) -> bool:
        entry = self.board.entries.get(key)
        runner = self._live.get(key)
        if entry is None or runner is None or not entry.active:
            return False
        await runner.cancel()
        return True

    async def stop_all(self) -> None:
        """Stop every running probe and wait (bounded) until they are gone."""
        active = [r for k, r in self._live.items() if self.board.entries.get(k) and self.board.entries[k].active]
        if active:
            await asyncio.wait_for(asyncio.gather(*(r.cancel() for r in active), return_exceptions=True), 20)
        self.workers.cancel_group(self, "probes")

    # ---- actions ------------------------------------------------------------------------------

    def action_help(self) -> None:
        from .screens.dialogs import HelpScreen  # Markdown is slow to import: not at start-up

        self.push_screen(HelpScreen())

    @work(exclusive=True, group="quit", exit_on_error=False, description="quit")
    async def action_quit(self) -> None:  # type: ignore[override]
        running = self.board.active if self.runners or self._live else 0
        if running and not self.replay_runners:
            from .screens.dialogs import ConfirmScreen

            ok = await self.push_screen_wait(
                ConfirmScreen(f"{running} probe(s) still running.\nStop them and quit?"))
            if not ok:
                return
        await self.stop_all()
        self.exit()

    async def _hang_up(self) -> None:
        await self.stop_all()
        self.exit(return_code=129)

    async def on_unmount(self) -> None:
        # The terminal went away (SSH drop) or the app is closing: no probe may outlive it.
        try:
            await self.stop_all()
        except Exception:  # noqa: BLE001 - best effort while shutting down
            pass
