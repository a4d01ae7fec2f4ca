"""The setup screen's start: the probe job of what is picked (core/run/job.py, the job `probe
--headless` runs), its checks, and - when it launches anything - the confirm. Nothing is
launched before the confirm is answered yes; a check that fails starts nothing, saying why."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual import work

from probecast.core.run.config import Config, ProbeSettings
from probecast.core.run.job import JobError, LaunchProvider, ProbeJob
from probecast.core.run.probe_plan import session_dir

from ..messages import StartProbes

if TYPE_CHECKING:
    from probecast.core.cloud.aws_launch import AwsProvider
    from probecast.core.cloud.sky_launch import SkyProvider
    from probecast.core.run.session import Session


class StartFromSetup:
    """Mixed into SetupScreen: ``s`` starts what is picked."""

    session: Session
    provider: AwsProvider | None
    sky: SkyProvider | None
    selected_hosts: set[str]
    selected_launch: list[str]
    selected_sky: list[str]
    find_batch: bool

    def job(self, s: ProbeSettings) -> ProbeJob:
        """The probe job of what is picked: the configured hosts, and what [aws] and [skypilot]
        launch."""
        config: Config = self.config  # type: ignore[attr-defined]
        hosts = [h for h in config.hosts if h.name in self.selected_hosts]
        launches: list[tuple[LaunchProvider, list[str]]] = []
        if self.provider is not None and self.selected_launch:
            launches.append((self.provider, list(self.selected_launch)))
        if self.sky is not None and self.selected_sky:
            launches.append((self.sky, list(self.selected_sky)))
        return ProbeJob(self.session, hosts, session_dir(), launches, given=s)

    def action_start(self) -> None:
        notify = self.notify  # type: ignore[attr-defined]
        s = self.settings()  # type: ignore[attr-defined]
        launching = self.selected_launch or self.selected_sky
        if not s.batch_sizes or not (self.selected_hosts or launching):
            notify("Pick at least one instance (space) and one batch size.", severity="warning")
            return
        if self.find_batch and (launching or not self.selected_hosts):
            notify("Finding the batch size probes configured hosts (pick one with a host), not "
                   "instances to launch.", severity="warning")
            return
        job = self.job(s)
        if job.launches or (s.project is not None and job.remote):
            self.start_job(job)  # a project to read, a catalog, a confirm: off the UI thread
            return
        try:  # the log directory: quick
            job.check()
        except JobError as exc:
            notify(f"Nothing started: {exc}", severity="error", timeout=12)
            return
        self.post_message(  # type: ignore[attr-defined]
            StartProbes(job, find=s if self.find_batch else None))

    @work(exclusive=True, group="confirm-launch", exit_on_error=False,
          description="check the job and confirm the launch")
    async def start_job(self, job: ProbeJob) -> None:
        """The job's checks (log directory, project) and its launches' worst case, in a thread
        (the project is read, SkyPilot's catalog too); then the confirm - no is nothing
        launched."""
        from .dialogs import ConfirmScreen

        notify = self.notify  # type: ignore[attr-defined]
        said: list[str] = []
        try:
            quotes = await asyncio.to_thread(job.preflight, said.append)
        except JobError as exc:
            notify(f"Nothing {'launched' if job.launches else 'started'}: {exc}",
                   severity="error", timeout=12)
            return
        if quotes:
            sizes = len(job.settings.batch_sizes)
            described = {q.describe() for q in quotes}
            question = "\n\n".join([
                *(f"{q.describe()}.\n{len(q.types) * sizes} probe(s) on them; {q.teardown()}."
                  for q in quotes),
                *(line for line in said if line not in described), "Launch them?"])
            app = self.app  # type: ignore[attr-defined]
            if not await app.push_screen_wait(ConfirmScreen(question)):
                notify("Nothing launched.")
                return
        elif said:
            notify("\n".join(said), timeout=8)
        self.post_message(StartProbes(job))  # type: ignore[attr-defined]
