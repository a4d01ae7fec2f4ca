"""`probecast probe ... --headless`: the probe job (core/run/job.py) on the configured hosts and
what [aws] / [skypilot] launch (or on this machine), progress as it goes, then the ranking from
the board - what the app shows - printed as `probecast rank` prints it."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path
from collections.abc import Coroutine
from typing import Any, TextIO, TypeVar

from ..agent.policy import DEFAULT_MAX_STEPS
from ..agent.workloads import WORKLOADS
from ..cloud.providers import aws_provider, live_session, sky_provider
from ..model.pricing import Catalog
from ..run.config import Config, ConfigError, Host, ProbeSettings, default_config, load_config, local_host
from ..run.job import JobError, LaunchProvider, ProbeJob
from ..run.probe_plan import host_price, session_dir
from ..run.session import Session
from .analyze import print_ranked
from .common import CliError, confirm_launch, say_summary, warn, warn_ranking
from .progress import with_progress
from .own_command import (EXAMPLE, FORM, add_batch_size_option, add_host_options, add_save_option,
                          own_command_config, save_config)

T = TypeVar("T")


def _settings(ns: argparse.Namespace, base: ProbeSettings) -> ProbeSettings:
    s = base.copy()
    if ns.workload:
        s.workload, s.command = ns.workload, None
    if ns.batch_size:
        s.batch_sizes = ns.batch_size
    if ns.max_steps is not None or ns.target_ci is not None or ns.full:
        s.max_steps, s.target_ci = ns.max_steps, ns.target_ci
        s.min_steady_seconds = None  # the rule again: none where a length is given
    if ns.max_seconds is not None:
        s.max_seconds = ns.max_seconds
    if ns.epochs is not None:
        s.epochs = ns.epochs
    if getattr(ns, "steps", None) is not None:
        s.steps = ns.steps
    if getattr(ns, "contenders", False):
        s.contenders = True
    if ns.project is not None:
        project = Path(ns.project).expanduser().resolve()
        if not project.is_dir():
            raise CliError(f"--project {ns.project}: no such directory")
        s.project = str(project)
    extra = []
    for flag in ("train_size", "val_size", "threads"):
        value = getattr(ns, flag)
        if value is not None:
            extra += ["--" + flag.replace("_", "-"), str(value)]
    s.workload_args = [*s.workload_args, *extra]
    return s


def run_interruptible(coro: Coroutine[Any, Any, T]) -> T:
    """asyncio.run, where SIGTERM and SIGHUP (a closed terminal) stop the work exactly as Ctrl-C
    does: the task is cancelled - runners stop their probes and close their logs with an `end`,
    launched instances are terminated - and KeyboardInterrupt is raised."""
    import signal

    async def main() -> T:
        task = asyncio.ensure_future(coro)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGHUP):
            try:
                loop.add_signal_handler(sig, task.cancel)
            except (NotImplementedError, RuntimeError):
                pass
        try:
            return await task
        except asyncio.CancelledError:
            raise KeyboardInterrupt from None

    return asyncio.run(main())


def _config(ns: argparse.Namespace) -> Config:
    """The config this probe runs: the command line's own command (a command after --, or
    --host), else --local's this machine, else the config file (searched as the app does)."""
    try:
        config = own_command_config(ns, warn)
        if config is not None:
            return config
        config = default_config() if ns.local else load_config(ns.config)
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    if ns.local:
        config.hosts = [local_host()]
    return config


def cmd_probe(ns: argparse.Namespace, out: TextIO) -> int:
    """`probe`: the probe job (core/run/job.py) on the configured hosts and what [aws] /
    [skypilot] launch, with progress, then the ranking from the board."""
    config = _config(ns)
    ranking_out = out
    if ns.json:  # stdout carries only the ranking's JSON; progress goes to stderr
        out = sys.stderr
    settings = _settings(ns, config.probe)
    if ns.save_config:  # what this probe runs, for `--config FILE` later
        config.probe = settings
        save_config(ns.save_config, config, lambda line: out.write(line + "\n"))
    log_dir = session_dir(ns.out)
    session = live_session(config, settings=settings, log_dir=log_dir, full=ns.full, warn=warn)
    job = ProbeJob(session, list(config.hosts), log_dir, [] if ns.local else launches(config),
                   full=ns.full)
    try:  # before anything starts: nothing may be lost later, no host touched in vain
        job.check(say=lambda line: out.write(line + "\n"))
    except JobError as exc:
        raise CliError(str(exc)) from None
    _log_to(log_dir)
    if ns.find_batch_size:
        from .batch_cmd import find_on_hosts

        return find_on_hosts(ns, config, session, log_dir, out, ranking_out,
                             run=lambda work: run_interruptible(with_progress(session, work, out)),
                             rank=lambda logs, ns, config, epochs, to: _rank(job, ns, epochs, to))
    if job.launches:
        try:
            job.quote(say=lambda line: out.write(line + "\n"), warn=warn)  # as the app's dialog
        except JobError as exc:
            warn(str(exc))
            return 1
        what = " and ".join(NOUNS.get(p.kind, p.kind) for p, _ in job.launches)
        if not confirm_launch(ns, what, out):
            return 1
    epochs = ns.epochs or job.settings.epochs
    if ns.full_on_cheapest:
        ran = _full_runs(job, out)
        if ran is None:
            return 130
        epochs = ns.epochs  # methodology 1: N_ep comes from the full runs, unless given
    return _probe_and_rank(job, ns, epochs, out, ranking_out)


NOUNS = {"aws": "instances", "skypilot": "SkyPilot clusters"}
GONE = {"aws": "instances terminated", "skypilot": "clusters torn down (sky down)"}


def launches(config: Config) -> list[tuple[LaunchProvider, list[str]]]:
    """What [aws] and [skypilot] launch headless: every listed instance type and candidate."""
    out: list[tuple[LaunchProvider, list[str]]] = []
    aws, sky = aws_provider(config), sky_provider(config)
    if aws is not None:
        out.append((aws, list(aws.aws.instance_types)))
    if sky is not None:
        out.append((sky, list(sky.settings.accelerators)))
    return out


def _probe_and_rank(job: ProbeJob, ns: argparse.Namespace, epochs: int | None, out: TextIO,
                    ranking_out: TextIO) -> int:
    """Probe the job's plan, then rank what was measured; the exit status says how it went."""
    from ..cloud.client import AwsError
    from ..cloud.skypilot import SkyPilotError

    session, log_dir = job.session, job.log_dir
    plan = job.make_plan()
    config = session.config
    where = (f"{config.path}" if config is not None and config.path else "the command line"
             if getattr(ns, "command", None) or getattr(ns, "host", None) else
             "this machine (no config)")
    only = (" (only the contenders: the rest predicted)" if job.settings.contenders
            and not job.full else "")
    out.write(f"probing {'up to ' if only else ''}{len(plan)} probe(s) on "
              f"{len({p.host.name for p in plan})} host(s) from {where}{only}; "
              f"logs: {log_dir}/\n")
    interrupted = False
    try:
        run_interruptible(with_progress(session, job.run(), out))
    except KeyboardInterrupt:
        interrupted = True
        gone = "".join(f"; {GONE.get(p.kind, 'launched hosts torn down')}"
                       for p, _ in job.launches)
        out.write(f"\ninterrupted: probes stopped{gone}; ranking of what was measured:\n")
    except (AwsError, SkyPilotError) as exc:  # nothing launched came up: nothing was measured
        warn(str(exc))
        for line in job.launch.summary() if job.launch is not None else []:
            out.write(line + "\n")
        return 1
    say_summary(job, out)
    out.write(f"\nlogs written to {log_dir}/\n\n")
    entries = session.board.entries.values()
    if not any(e.state.start is not None for e in entries):  # nothing was measured
        return 130 if interrupted else 1
    code = _rank(job, ns, epochs, ranking_out)
    ok = any(e.status == "done" for e in entries)
    # exit status by convention: 130 after Ctrl-C, non-zero when no probe succeeded
    return 130 if interrupted else (code if ok else (code or 1))


def _full_runs(job: ProbeJob, out: TextIO) -> list[str] | None:
    """Methodology 1 (Malta 2021, ch. 4): full trainings on the cheapest host, one per batch
    size, give N_ep per batch size (the board's epoch plan); the other hosts only need short
    probes. The full runs' logs, or None when interrupted."""
    from ..model.epochs import epochs_from_runs

    session = job.session
    cheapest = _cheapest(job.hosts, session.board.pricing.catalog)
    full = ProbeJob(session, [cheapest], job.log_dir / "full-runs", full=True)
    full.prep = job.prep  # the project, scanned once
    out.write(f"methodology 1: full runs of every batch size on the cheapest host, "
              f"{cheapest.name} ({cheapest.instance})\n")
    try:
        run_interruptible(with_progress(session, full.run(), out))
    except KeyboardInterrupt:
        out.write("\ninterrupted\n")
        return None
    job.hosts = [h for h in job.hosts if h.name != cheapest.name]
    states = [session.board.entries[p.spec.key].state for p in full.plan]
    session.board.epoch_plan = epochs_from_runs(states) or None
    if session.board.epoch_plan is None:
        warn("methodology 1: no full run with a usable validation curve; using the logs' plans")
    return [str(p.log_path) for p in full.plan if p.log_path.exists()]


def _log_to(log_dir: Path) -> None:
    """-v/--debug logging also goes to the session's directory, beside the probe logs."""
    logger = logging.getLogger("probecast")
    if logger.level > logging.INFO or logger.level == logging.NOTSET:
        return
    log_dir.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(log_dir / "probecast.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)


def _rank(job: ProbeJob, ns: argparse.Namespace, epochs: int | None, out: TextIO) -> int:
    """The ranking from the board - what the app shows - printed as `probecast rank` prints it,
    priced by the one lookup."""
    options = job.rank_options(epochs=epochs, by=ns.by,
                               min_accuracy=getattr(ns, "min_accuracy", None),
                               with_setup=getattr(ns, "with_setup", False))
    ranking = job.ranking(options)
    warn_ranking(ranking)
    states = {str(e.log_path): e.state for e in job.session.board.entries.values()
              if e.log_path is not None}
    return print_ranked(ranking, states, options, out,
                        fmt="json" if getattr(ns, "json", False) else "text")


def _cheapest(hosts: list[Host], catalog: Catalog) -> Host:
    def price(h: Host) -> float:
        p = host_price(h, catalog)  # its own price, then the one lookup's catalog
        return p if p is not None else float("inf")

    return min(hosts, key=price)


PROBE_USAGE = f"""{FORM}
       probecast probe [--config FILE | --local] [--workload NAME] [options]"""
PROBE_DESCRIPTION = """\
Probe a few steps of your own training command on each host and batch size, then rank
(host, batch size) by estimated full-training time (or cost). The words after -- are your
command, run as you would run it: from this directory on this machine, from the login
directory on an SSH host (or in --project's copy there). {batch_size} in it becomes each
probe's batch size. With a command after --, no config file is needed or read unless --config
names one: then its hosts and settings apply and this command wins over its probe.command.
Without a command: the config's (./probecast.toml, ~/.config/probecast/config.toml), or with
--local a built-in workload. Progress goes to the terminal, then the ranking; the logs go to
./probecast-logs/<timestamp>/ (--out). The app, set up the same: the same options and command
without `probe`."""
PROBE_EPILOG = f"""\
examples:
  {EXAMPLE}
  probecast probe --host gpu1 --host ubuntu@10.0.0.7:2222 -b 64 -b 128 --max-steps 50 \\
      -- python train.py --batch-size {{batch_size}} --epochs 10
  probecast probe --local --json -b 16 -b 32 -- python train.py --bs={{batch_size}} > ranking.json
  probecast --host gpu1 -b 32 -b 64 -- python train.py --batch-size {{batch_size}}   (the app)

hosts: --host takes what ssh takes - an address, a name or an ~/.ssh/config alias, with user@
and :PORT - and connects as ssh would: ~/.ssh/config (HostName, User, Port, IdentityFile,
ProxyJump), keys from ssh-agent and ~/.ssh, host keys checked against ~/.ssh/known_hosts (an
unknown host is refused: ssh to it once, or ssh-keyscan it). The host needs python3 and what
your command imports; probecast sends its own agent.

--save-config FILE writes the probecast.toml this command line stands for (never over an
existing file), then probes; `probecast --save-config FILE ... -- COMMAND` (no `probe`) only
writes it. Later: probecast probe --config FILE."""


def add_probe_parser(sub: Any) -> None:
    p = sub.add_parser("probe", help="probe your command on hosts (or --local), rank, save logs",
                       usage=PROBE_USAGE, description=PROBE_DESCRIPTION, epilog=PROBE_EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    src = p.add_mutually_exclusive_group()
    src.add_argument("--config", metavar="FILE",
                     help="probecast.toml (default: ./probecast.toml, "
                          "~/.config/probecast/config.toml; with a command after --: none "
                          "unless named here)")
    src.add_argument("--local", action="store_true",
                     help="probe this machine (the default with a command after -- and no --host)")
    add_host_options(src)
    add_batch_size_option(p, "the config's, else 64 and 256")
    add_save_option(p, "then probe")
    p.add_argument("--headless", action="store_true",
                   help="no app (what probe always does; kept for scripts that say it)")
    p.add_argument("--json", action="store_true",
                   help="print the final ranking as JSON on stdout (progress goes to stderr)")
    p.add_argument("--workload", default=None, choices=WORKLOADS,
                   help="built-in workload to probe instead of a command (default: the config's)")
    p.add_argument("--out", metavar="DIR",
                   help="directory for the logs (default ./probecast-logs/<timestamp>/)")
    p.add_argument("--project", metavar="PATH", default=None,
                   help="a local directory copied to each host (git: the files git would track); "
                        "the command and [probe] setup run in the copy")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--max-steps", type=int, default=None, metavar="N",
                   help=f"stop each probe after exactly N steps (default {DEFAULT_MAX_STEPS}, on to 1 s "
                        "of them where steps are short, unless --target-ci, --max-seconds, --full)")
    g.add_argument("--target-ci", type=float, default=None,
                   help="stop once the step time is known to within this fraction (0.02 = 2 %%)")
    g.add_argument("--full", action="store_true", help="run the whole training")
    p.add_argument("--max-seconds", type=float, default=None,
                   help="stop each probe after S seconds of training")
    p.add_argument("--epochs", type=int, default=None, help="planned epochs N_ep")
    p.add_argument("--steps", type=int, default=None,
                   help="the job's total training steps (jobs measured in steps; wins over "
                        "--epochs; default: what the program says)")
    p.add_argument("--by", choices=("time", "cost"), default="time",
                   help="rank the results by time or cost (default time)")
    p.add_argument("--with-setup", action="store_true",
                   help="rank with each host's measured [probe] setup time added to its job")
    p.add_argument("--yes", action="store_true", help="launch cloud instances without asking")
    p.add_argument("--contenders", action="store_true",
                   help="probe only the contenders ([probe] contenders): a few diverse "
                        "candidates first, the rest predicted from them and probed (or "
                        "launched) only while their predicted bounds overlap the leader's; "
                        "needs GPU facts for each host's instance (the catalog, [[catalog]])")
    p.add_argument("--full-on-cheapest", action="store_true",
                   help="methodology 1: first train every batch size to the end on the cheapest "
                        "host to learn N_ep (and accuracy) per batch size, then probe the others")
    p.add_argument("--min-accuracy", type=float, default=None,
                   help="with --full-on-cheapest: leave out batch sizes that reach less")
    p.add_argument("--train-size", type=int, default=None, help="built-in workload: training samples")
    p.add_argument("--val-size", type=int, default=None, help="built-in workload: validation samples")
    p.add_argument("--threads", type=int, default=None, help="built-in workload: TensorFlow threads")
    from .batch_cmd import add_find_arguments

    add_find_arguments(p)
    p.set_defaults(func=cmd_probe)
