"""The probecast app. It receives one Session (live or replay) from a factory (tui.main, tests)."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

from textual import on, work
from textual.app import App
from textual.worker import Worker, WorkerState

from probecast.core.run.config import ProbeSettings
from probecast.core.run.job import LaunchProvider, ProbeJob
from probecast.core.run.session import Launch, Session

from .actions import bindings
from .commands import ProbecastCommands
from .messages import ChartSaved, StartProbes
from .screens.run import RunScreen



class ProbecastApp(App[None]):
    CSS_PATH = Path(__file__).parent / "probecast.tcss"  # absolute: subclasses live elsewhere
    TITLE = "probecast"
    COMMANDS = App.COMMANDS | {ProbecastCommands}
    BINDINGS = bindings("app")

    def __init__(self, session: Session, *, setup: bool = False,
                 providers: list[LaunchProvider] | None = None) -> None:
        super().__init__()
        self.session = session
        # [aws], [skypilot]: what the setup offers to launch (core/cloud/providers.py)
        self.providers = list(providers or [])
        self.job: ProbeJob | None = None  # the one started: what it launched ends with the app
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

            self.push_screen(SetupScreen(self.session, self.providers))
        else:
            self.push_screen(RunScreen(self.session))
            if self.session.runners:
                self._play()

    def _play(self) -> None:
        """The given runners, in a worker made now - so whoever waits for the app's workers waits
        for them (a loaded machine's first frame came after a test's wait: an empty ranking) -
        that starts after the first frame: 10 000 logs load behind it."""
        painted = asyncio.Event()
        self.call_after_refresh(painted.set)

        async def play() -> None:
            await painted.wait()
            await self.session.play()

        self.run_worker(play(), exclusive=True, group="probes", exit_on_error=False,
                        description="play the given runners")

    @property
    def launch(self) -> Launch | None:
        """What the job launched (torn down when its probes end, or on quit)."""
        return self.job.launch if self.job is not None else None

    @on(StartProbes)
    def _start_probes(self, message: StartProbes) -> None:
        job = self.job = message.job
        if message.find is not None:  # the largest batch size that fits, host by host
            work = self._find(job, message.find)
        else:  # the probe job, as `probe --headless` runs it
            work = job.run()
        what = ("find the batch size" if message.find is not None else
                "launch and probe" if job.launches else "run probes")
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
            summary = self.job.summary() if self.job is not None else self.session.summary()
            lines = ["All probes ended.", *summary]
            self.notify("\n".join(lines), severity="warning" if failed else "information",
                        timeout=10 if len(lines) > 1 else 5)

    @on(ChartSaved)
    def _chart_saved(self, message: ChartSaved) -> None:
        if message.path is None:
            self.notify(message.problem, severity="warning")
        else:
            self.notify(f"Saved {message.path}", timeout=8)

    async def _find(self, job: ProbeJob, settings: ProbeSettings) -> None:
        from probecast.core.run.find_batch import find_on

        found = await find_on(self.session, job.hosts, settings, job.log_dir)
        self.notify("\n".join(f"{f.host.name}: {f.answer.lines()[0]}" for f in found),
                    title="Largest batch size that fits", timeout=30)

    async def stop_all(self) -> None:
        try:
            await self.session.stop_all()
        finally:
            self.workers.cancel_group(self, "probes")
            if self.job is not None:  # every exit path: nothing launched outlives the app
                await self.job.close()

    # ---- actions ------------------------------------------------------------------------------

    def action_help(self) -> None:
        from .screens.dialogs import HelpScreen  # Markdown is slow to import: not at start-up

        self.push_screen(HelpScreen())

    @work(exclusive=True, group="quit", exit_on_error=False, description="quit")
    async def action_quit(self) -> None:  # type: ignore[override]
        running = self.session.board.active if self.session.has_probes or self.launch else 0
        if running and not self.session.is_replay:
            from .screens.dialogs import ConfirmScreen

            launched = ("\nThe hosts launched for them are terminated (SkyPilot's: sky down)."
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
