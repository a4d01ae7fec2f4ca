"""The probe job: what every front-end runs - `probe --headless` (local, SSH, AWS, SkyPilot) and
the app's start alike, so they cannot disagree.

In: the session (its board, config and probe settings), the configured hosts to probe, and what
to launch with whom (instance types for AWS, candidates for SkyPilot; the providers come from
core/cloud, handed in: run may not import cloud). Out, in order:

- ``check``: before anything starts - the log directory (created, writable, room) and the
  project (``[probe] project``: scanned once, refused over its size limit when it is copied);
- ``quote``: each launch's worst case against its ``max_spend`` - refused, nothing launched,
  when over it or unpriced (the caller asks for a confirmation after this);
- ``make_plan``: one plan of the configured and the launched hosts;
- ``run``: the Session runs it (the adaptive probe included), behind the launch when there is
  one: launched hosts probe as they come up, and everything launched ends with it (``close``
  ends it early: the app's quit); with ``[probe] contenders`` only the contenders are probed
  (and launched), the rest predicted (core/run/contenders.py);
- ``ranking`` from the board, and ``summary``: what to say at the end.

The probe's length is decided here, once (``probe_length``, the agent's rule), as is loading
the epoch plans of full runs (``load_epoch_plan``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..agent.policy import probe_length, steady_floor
from ..model.epochs import EpochsInfo
from ..model.rank.ranking import Ranking, RankOptions
from .board import Board
from .config import Host, ProbeSettings
from .probe_plan import PlannedProbe, check_log_dir, plan_probes
from .prepare import Preparation
from .session import Launch, Session

Say = Callable[[str], object]


def _quiet(line: str) -> None:
    pass


class JobError(Exception):
    """Why the job may not start, found before anything starts (one line)."""


class LaunchQuote(Protocol):
    """What a launch would cost at worst (``core.cloud.provision.LaunchQuote``,
    ``core.cloud.sky_launch.SkyQuote``)."""

    @property
    def types(self) -> tuple[str, ...]: ...

    @property
    def notes(self) -> tuple[str, ...]: ...  # worth a warning (a catalog that could not be read)

    @property
    def problem(self) -> str | None: ...  # why it may not launch; None: it may

    def describe(self) -> str: ...  # "will launch ...; worst case $..., cap $..."

    def teardown(self) -> str: ...  # when what is launched is torn down


class LaunchProvider(Protocol):
    """A source of launched hosts: ``core.cloud.aws_launch.AwsProvider`` ([aws]),
    ``core.cloud.sky_launch.SkyProvider`` ([skypilot])."""

    @property
    def kind(self) -> str: ...

    def quote(self, names: list[str]) -> LaunchQuote: ...

    def launch(self, names: list[str], log_dir: Path, taken: set[str] | None = None
               ) -> Launch: ...


def settings_for(settings: ProbeSettings, full: bool = False,
                 typed_over: ProbeSettings | None = None) -> ProbeSettings:
    """The probe settings a job runs with: the step limit decided by the one rule. ``typed_over``:
    the settings a length was typed over (the setup screen) - a length other than theirs is the
    user's, kept exactly (no steady floor)."""
    s = settings.copy()
    if typed_over is not None and (s.max_steps, s.target_ci) != (typed_over.max_steps,
                                                                 typed_over.target_ci):
        s.min_steady_seconds = None
    s.min_steady_seconds = 0.0 if full else steady_floor(s.max_steps, s.target_ci, s.max_seconds,
                                                         given=s.min_steady_seconds)
    s.max_steps = probe_length(s.max_steps, s.target_ci, s.max_seconds, full)
    return s


def describe_length(s: ProbeSettings) -> str:
    """How a probe stops, in a few words (the setup's summary)."""
    parts = [f"{s.max_steps} steps"] if s.max_steps else []
    if parts and s.min_steady_seconds:
        parts[0] += f" (or {s.min_steady_seconds:g} s of them)"
    if s.target_ci is not None:
        parts.append(f"CI ≤ {s.target_ci:.0%}")
    if s.max_seconds is not None:
        parts.append(f"{s.max_seconds:g} s")
    return " or ".join(parts) or "the whole training"


@dataclass
class ProbeJob:
    session: Session
    hosts: list[Host]  # the configured hosts to probe
    log_dir: Path
    launches: list[tuple[LaunchProvider, list[str]]] = field(default_factory=list)
    full: bool = False  # every probe trains to the end (probe --full, methodology 1's runs)
    given: ProbeSettings | None = None  # the probe settings, when not the session's (the app's setup)
    quotes: list[LaunchQuote] = field(default_factory=list, init=False)
    launch: Launch | None = field(default=None, init=False)
    prep: Preparation | None = field(default=None, init=False)
    plan: list[PlannedProbe] = field(default_factory=list, init=False)
    _planned: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        self.launches = [(p, list(names)) for p, names in self.launches if names]
        self.session.settings = settings_for(self.given or self.session.probe_settings,
                                             self.full or self.session.full)

    @property
    def settings(self) -> ProbeSettings:
        return self.session.probe_settings

    @property
    def remote(self) -> bool:
        """Whether a host of the job is not this machine (the project is copied to it)."""
        return bool(self.launches) or any(h.kind != "local" for h in self.hosts)

    # ---- before anything starts -------------------------------------------------------------

    def check(self, say: Say = _quiet) -> None:
        """The log directory and the project, before any host is touched; JobError names what
        is wrong. Blocking (the project is read)."""
        problem = check_log_dir(self.log_dir)
        if problem:
            raise JobError(problem)
        self.prep = Preparation.from_settings(self.settings, self.log_dir)
        project = self.settings.project
        if self.prep is None or project is None:
            return
        if not self.remote:
            say(f"project {project}: used in place (local probes)")
            return
        from .project import ProjectError

        try:
            scanned = self.prep.scan()  # kept for the hosts: the files are read once
        except ProjectError as exc:
            raise JobError(str(exc)) from None
        say(f"{scanned.describe()}, limit {self.settings.project_limit_mb:g} MB; copied to each "
            f"SSH host ({'kept' if self.settings.keep_project else 'removed'} afterwards), "
            "used in place by local probes")

    def quote(self, say: Say = _quiet, warn: Say | None = None) -> list[LaunchQuote]:
        """Each launch's worst case, said; JobError when one may not launch. Blocking (a
        provider may read its catalog)."""
        self.quotes = []
        for provider, names in self.launches:
            try:
                q = provider.quote(names)
            except Exception as exc:  # a provider's own error (SDK missing, catalog unreadable)
                raise JobError(str(exc)) from exc
            self.quotes.append(q)
            say(q.describe())
            if self.settings.contenders and not self.full:
                say("  only the contenders are probed: a type is launched when its probe is "
                    "handed out, the rest are predicted and never launched - the worst case "
                    "above is every type")
            for note in q.notes:
                (warn or say)(note)
            if q.problem:
                raise JobError(q.problem)
        return self.quotes

    def preflight(self, say: Say = _quiet, warn: Say | None = None) -> list[LaunchQuote]:
        """``check`` then ``quote``: everything that can refuse the job before it starts."""
        self.check(say)
        return self.quote(say, warn)

    # ---- the plan and the run ---------------------------------------------------------------

    def make_plan(self) -> list[PlannedProbe]:
        """The configured hosts' probes, then each launch's (their hosts planned before they
        exist: their probes wait at a gate until each is up). Made once."""
        if self._planned:
            return self.plan
        config = self.session.config
        known = list(config.hosts) if config is not None else list(self.hosts)
        taken = {h.name for h in known}
        launches: list[Launch] = []
        for provider, names in self.launches:
            launches.append(provider.launch(names, self.log_dir, taken))
            taken |= set(names)
        self.plan = plan_probes(self.hosts, self.settings, self.log_dir, known, self.prep)
        for launch in launches:
            self.plan += launch.plan(self.settings, None, known, self.prep)
        if self.full:
            for p in self.plan:
                p.spec.full = True
        self.launch = launches[0] if len(launches) == 1 else _Together(launches) if launches \
            else None
        self._planned = True
        return self.plan

    async def run(self) -> None:
        """Probe the plan - only its contenders with ``[probe] contenders`` - behind the launch,
        when there is one (raises only when nothing could run: every host of the plan was
        launched and none came up)."""
        plan = self.make_plan()
        self._probe_contenders(plan)
        if self.launch is None:
            if plan:
                await self.session.run(plan)
            return
        await self.session.run_launched(self.launch, plan)

    def _probe_contenders(self, plan: list[PlannedProbe]) -> None:
        """With ``[probe] contenders`` (not with ``--full``: whole runs are the evidence), the
        session probes the plan in the contender plan's rounds, and a launched host comes up
        only when a probe of it is handed out - the candidates it predicts are never launched
        (core/run/contenders.py)."""
        if not self.settings.contenders or self.full or not plan:
            return
        from .contenders import ContenderPlan

        self.session.contenders = ContenderPlan(plan, self.session.board, self.rank_options())
        if self.launch is not None:
            self.launch.on_demand = True

    async def close(self) -> None:
        """Everything launched torn down now (the app's quit; ``run`` does it when it ends)."""
        if self.launch is not None:
            await self.launch.close()

    # ---- what comes out ---------------------------------------------------------------------

    def rank_options(self, **given: object) -> RankOptions:
        """The ranking's options for this job: its planned length, unless ``given``."""
        values: dict[str, object] = {"epochs": self.settings.epochs, "steps": self.settings.steps}
        values.update(given)
        return RankOptions(**values)  # type: ignore[arg-type]

    def ranking(self, options: RankOptions | None = None) -> Ranking:
        """The ranking from the board: what the probes measured, as the app shows it."""
        return self.session.board.ranking(options or self.rank_options())

    def summary(self, failures: bool = True) -> list[str]:
        """What the end of the run says: the launched hosts torn down, the preparations, the
        failures (``failures``), what the adaptive probe did."""
        lines = self.launch.summary() if self.launch is not None else []
        return [*lines, *self.session.summary(failures)]


class _Together:
    """Several launches as one (AWS instances and SkyPilot clusters picked together): each
    brings its own hosts up while the plan probes, and each tears its own down."""

    def __init__(self, launches: list[Launch]) -> None:
        self.launches = launches
        self.log_dir = launches[0].log_dir

    @property
    def on_demand(self) -> bool:
        return all(launch.on_demand for launch in self.launches)

    @on_demand.setter
    def on_demand(self, value: bool) -> None:
        for launch in self.launches:
            launch.on_demand = value

    def caption(self, key: str) -> str | None:
        return next((c for launch in self.launches if (c := launch.caption(key)) is not None),
                    None)

    def plan(self, settings: ProbeSettings, others: list[Host] | None = None,
             known: list[Host] | None = None, prep: Preparation | None = None
             ) -> list[PlannedProbe]:
        plan = plan_probes(others or [], settings, self.log_dir, known, prep)
        for launch in self.launches:
            plan += launch.plan(settings, None, known, prep)
        return plan

    async def run(self, board: Board, plan: list[PlannedProbe],
                  probe: Callable[[], Awaitable[None]]) -> None:
        async def inside(i: int) -> None:
            if i == len(self.launches):
                await probe()
            else:
                await self.launches[i].run(board, plan, lambda: inside(i + 1))

        await inside(0)

    async def close(self) -> None:
        results = await asyncio.gather(*(launch.close() for launch in self.launches),
                                       return_exceptions=True)
        for r in results:
            if isinstance(r, BaseException):
                raise r

    def summary(self) -> list[str]:
        return [line for launch in self.launches for line in launch.summary()]


def load_epoch_plan(paths: list[str], metric: str = "val_accuracy", warn: Say = _quiet,
                    what: str = "--epochs-from") -> dict[tuple[str, int], EpochsInfo] | None:
    """Methodology 1: N_ep per (workload, batch size) from full-run logs (files or
    directories); each problem said once through ``warn``."""
    if not paths:
        return None
    from ..model.epochs import epochs_from_runs
    from ..model.logstore import load_records

    plan = epochs_from_runs([r.state for r in load_records(paths, warn)], metric)
    if not plan:
        warn(f"{what}: no run with a usable validation curve; using the logs' plans")
    return dict(plan) if plan else None
