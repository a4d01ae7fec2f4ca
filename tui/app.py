"""The probecast app. It receives one Session (live or replay) from a factory (tui.main, tests)."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import App
from textual.worker import Worker, WorkerState

from probecast.core.run.config import ProbeSettings
from probecast.core.run.plan import PlannedProbe
from probecast.core.run.session import Session

from .actions import bindings
from .commands import ProbecastCommands
from .messages import ChartSaved, StartProbes
from .screens.run import RunScreen

if TYPE_CHECKING:
    from probecast.core.cloud.aws_launch import AwsLaunch, AwsProvider


class ProbecastApp(App[None]):
    CSS_PATH = Path(__file__).parent / "probecast.tcss"  # absolute: subclasses live elsewhere
    TITLE = "probecast"
    COMMANDS = App.COMMANDS | {ProbecastCommands}
    BINDINGS = bindings("app")

    def __init__(self, session: Session, *, setup: bool = False,
                 provider: AwsProvider | None = None) -> None:
        super().__init__()
        self.session = session
        self.provider = provider  # [aws]: picked instance types without a host are launched
        self.launch: AwsLaunch | None = None
        self.start_with_setup = setup and not session.is_replay
        self.sub_title = session.title

    def on_mount(self) -> None:
        try:  # the terminal went away (SSH drop): stop the probes and leave, no questions
            asyncio.get_running_loop().add_signal_handler(
                signal.SIGHUP, lambda: self.run_worker(self._hang_up(), group="quit",
                                                       exit_on_error=False, description="hang up"))
        except (NotImplementedError, RuntimeError):
            pass
        if self.start_with_setup:
            from .screens.setup import SetupScreen

            self.push_screen(SetupScreen(self.session, self.provider))
        else:
            self.push_screen(RunScreen(self.session))
            if self.session.runners:  # after the first frame: 10 000 logs load behind it
                self.call_after_refresh(self._play)

    def _play(self) -> None:
        self.run_worker(self.session.play, exclusive=True, group="probes",
                        exit_on_error=False, description="play the given runners")

    @on(StartProbes)
    def _start_probes(self, message: StartProbes) -> None:
        launch = message.launch
        if message.find is not None:  # the largest batch size that fits, host by host
            work = self._find(message.plan, message.find)
        elif launch is not None:  # launched first; terminated when the probes end, or on quit
            self.launch = launch
            work = self.session.run_launched(launch, message.plan, message.concurrency,
                                             message.timeout)
        else:
            work = self.session.run(message.plan, message.concurrency, message.timeout)
        what = ("find the batch size" if message.find is not None else
                "launch and probe" if launch is not None else "run probes")
        self.run_worker(work, exclusive=True, group="probes", exit_on_error=False,
                        description=what)
        self.switch_screen(RunScreen(self.session))

    @on(Worker.StateChanged)
    def _worker_state(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            self.notify(f"{event.worker.description} failed: {event.worker.error}",
                        severity="error", timeout=10)
        elif event.state == WorkerState.SUCCESS and event.worker.group == "probes":
            board = self.session.board
            failed = [e.spec.label for e in board.entries.values() if e.status == "failed"]
            lines = ["All probes ended.", *self.session.summary()]
            if self.launch is not None and self.launch.launched:
                lines.append(f"Terminated {len(self.launch.launched)} launched instance(s).")
            self.notify("\n".join(lines), severity="warning" if failed else "information",
                        timeout=10 if len(lines) > 1 else 5)

    @on(ChartSaved)
    def _chart_saved(self, message: ChartSaved) -> None:
        if message.path is None:
            self.notify(message.problem, severity="warning")
        else:
            self.notify(f"Saved {message.path}", timeout=8)

    async def _find(self, plan: list[PlannedProbe], settings: ProbeSettings) -> None:
        from probecast.core.run.find_batch import find_on

        hosts = list({p.host.name: p.host for p in plan}.values())
        found = await find_on(self.session, hosts, settings, plan[0].log_path.parent)
        self.notify("\n".join(f"{f.host.name}: {f.answer.lines()[0]}" for f in found),
                    title="Largest batch size that fits", timeout=30)

    async def stop_all(self) -> None:
        try:
            await self.session.stop_all()
        finally:
            self.workers.cancel_group(self, "probes")
            if self.launch is not None:  # every exit path: nothing launched outlives the app
                await self.launch.close()

    # ---- actions ------------------------------------------------------------------------------

    def action_help(self) -> None:
        from .screens.dialogs import HelpScreen  # Markdown is slow to import: not at start-up

        self.push_screen(HelpScreen())

    @work(exclusive=True, group="quit", exit_on_error=False, description="quit")
    async def action_quit(self) -> None:  # type: ignore[override]
        running = self.session.board.active if self.session.has_probes or self.launch else 0
        if running and not self.session.is_replay:
            from .screens.dialogs import ConfirmScreen

            launched = (f"\nTheir {len(self.launch.hosts)} launched instance(s) are terminated."
                        if self.launch is not None else "")
            ok = await self.push_screen_wait(
                ConfirmScreen(f"{running} probe(s) still running.\nStop them and quit?{launched}"))
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
