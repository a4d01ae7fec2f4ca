"""`probecast probe ... --headless`: run probes from a config (or on this machine), report
progress, then print the same ranking as `probecast rank` on the logs just written."""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import shutil
import sys
import time
from pathlib import Path
from collections.abc import Coroutine
from typing import Any, TextIO, TypeVar

from ..agent.workloads import WORKLOADS
from ..run.board import Board
from ..run.config import Config, ConfigError, ProbeSettings, default_config, load_config, local_host
from ..report.fmt import fmt_ms
from ..run.prepare import Preparation
from ..run.plan import check_log_dir, plan_probes, session_dir
from ..run.session import Session
from ..cloud.price_lookup import price_catalog, pricing_for
from ..model.pricing import Catalog
from ..model.ranking import RankOptions
from .analyze import rank_and_print
from .common import CliError, confirm_launch, epoch_plan_from, load_records, say_summary

T = TypeVar("T")


def _settings(ns: argparse.Namespace, base: ProbeSettings) -> ProbeSettings:
    s = base.copy()
    if ns.workload:
        s.workload, s.command = ns.workload, None
    if ns.batch_size:
        s.batch_sizes = ns.batch_size
    if ns.max_steps is not None or ns.target_ci is not None or ns.full:
        s.max_steps, s.target_ci = ns.max_steps, ns.target_ci
    if ns.max_seconds is not None:
        s.max_seconds = ns.max_seconds
    if ns.epochs is not None:
        s.epochs = ns.epochs
    if getattr(ns, "steps", None) is not None:
        s.steps = ns.steps
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


def _line(entry: Any) -> str:
    st = entry.state
    est, lo, hi = st.step_time()
    step = "" if math.isnan(est) else f"  step {fmt_ms(est)}"
    ci = "" if math.isnan(est) or math.isinf(hi) or not est else f" ±{(hi - lo) / 2 / est:.1%}"
    # a failure's reason; before the first step, what is happening (project copy, setup)
    shown = entry.status in ("failed", "stopped", "does-not-fit") or (entry.active and not st.steps)
    detail = f"  {entry.detail}" if shown and entry.detail else ""
    return f"{entry.spec.label:<24} {entry.status:<12} {st.steps:>6} steps{step}{ci}{detail}"


async def _report(board: Board, out: TextIO, tty: bool, stop: asyncio.Event) -> None:
    """Progress: a compact table redrawn in place on a terminal, changes as lines otherwise."""
    seen: dict[str, tuple[str, int, str]] = {}
    drawn = 0
    last_plain = 0.0
    while True:
        entries = list(board.entries.values())
        if tty:
            # one line per probe, cut to the terminal's width (80 columns included): a line that
            # wrapped would break the redraw in place
            width = max(40, shutil.get_terminal_size((80, 24)).columns - 1)
            if drawn:
                out.write(f"\x1b[{drawn}F")
            for e in entries:
                out.write("\x1b[2K" + _line(e)[:width] + "\n")
            drawn = len(entries)
            out.flush()
        else:
            now = time.monotonic()
            for e in entries:
                key = (e.status, e.state.steps // 50, e.detail if not e.state.steps else "")
                if seen.get(e.key) != key or (e.active and now - last_plain > 10):
                    seen[e.key] = key
                    out.write(_line(e) + "\n")
            if now - last_plain > 10:
                last_plain = now
            out.flush()
        if stop.is_set():
            return
        try:
            await asyncio.wait_for(stop.wait(), 1.0)
        except asyncio.TimeoutError:
            pass


async def _with_progress(session: Session, work: Coroutine[Any, Any, T], out: TextIO) -> T:
    """Run ``work`` (the session driving its probes) with the progress report beside it."""
    stop = asyncio.Event()
    reporter = asyncio.create_task(_report(session.board, out, out.isatty(), stop))
    try:
        return await work
    finally:
        stop.set()
        await reporter


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


def cmd_probe(ns: argparse.Namespace, out: TextIO) -> int:
    if not ns.headless:
        raise CliError("probe without --headless is the app: run `probecast` (or add --headless)")
    try:
        config = default_config() if ns.local else load_config(ns.config)
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    if ns.local:
        config.hosts = [local_host()]
    settings = _settings(ns, config.probe)
    if settings.max_steps is None and settings.target_ci is None and not ns.full:
        settings.max_steps = 30
    log_dir = session_dir(ns.out)
    problem = check_log_dir(log_dir)  # before anything starts: nothing may be lost later
    if problem:
        raise CliError(problem)
    remote = ((config.aws is not None or config.skypilot is not None) and not ns.local) or any(
        h.kind != "local"
                                                              for h in config.hosts)
    prep = _check_project(settings, log_dir, out, remote)
    _log_to(log_dir)
    if ns.json:  # stdout carries only the ranking's JSON; progress goes to stderr
        out, ranking_out = sys.stderr, out
    else:
        ranking_out = out
    pricing = pricing_for(config)  # the one price lookup, as rank and the app
    session = Session(Board(pricing), config=config, settings=settings, log_dir=log_dir,
                      full=ns.full)
    if ns.find_batch_size:
        from .find_batch import find_on_hosts

        return find_on_hosts(ns, config, session, log_dir, out, ranking_out,
                             run=lambda work: run_interruptible(_with_progress(session, work, out)),
                             rank=_rank_logs)
    if config.aws is not None and not ns.local:
        return _probe_on_aws(ns, config, session, log_dir, out, ranking_out)
    if config.skypilot is not None and not ns.local:
        from .skypilot_cli import probe_on_skypilot

        return probe_on_skypilot(ns, config, session, log_dir, out, ranking_out,
                                 run=lambda work: run_interruptible(
                                     _with_progress(session, work, out)),
                                 rank=_rank_logs)
    hosts = list(config.hosts)
    full_logs: list[str] = []
    if ns.full_on_cheapest:
        cheapest = _cheapest(hosts, pricing.catalog)
        ran = _full_runs_on(cheapest, config, session, log_dir, prep, out)
        if ran is None:
            return 130
        full_logs = ran
        hosts = [h for h in hosts if h.name != cheapest.name]
    return _probe_and_rank(ns, config, session, hosts, log_dir, prep, full_logs, out,
                           ranking_out)


def _probe_and_rank(ns: argparse.Namespace, config: Config, session: Session,
                    hosts: list[Any], log_dir: Path, prep: Preparation | None,
                    full_logs: list[str], out: TextIO, ranking_out: TextIO) -> int:
    """Probe the hosts, then rank what was measured; the exit status says how it went."""
    settings, board = session.probe_settings, session.board
    plan = plan_probes(hosts, settings, log_dir, config.hosts, prep)
    where = f"{config.path}" if config.path else "this machine (no config)"
    out.write(f"probing {len(plan)} probe(s) on {len(hosts)} host(s) from {where}; "
              f"logs: {log_dir}/\n")
    interrupted = False
    try:
        if plan:
            run_interruptible(_with_progress(session, session.run(plan), out))
    except KeyboardInterrupt:
        interrupted = True
        out.write("\ninterrupted: probes stopped; ranking of what was measured:\n")
    logs = [str(p.log_path) for p in plan if p.log_path.exists()] + full_logs
    say_summary(session, out)
    out.write(f"\nlogs written to {log_dir}/\n\n")
    ok = [e for e in board.entries.values() if e.status == "done"]
    if not logs:
        return 130 if interrupted else 1
    # methodology 1: N_ep comes from the full runs, unless given on the command line
    epochs = ns.epochs if full_logs else (ns.epochs or settings.epochs)
    code = _rank_logs(logs, ns, config, epochs, ranking_out, epochs_from=full_logs or None)
    # exit status by convention: 130 after Ctrl-C, non-zero when no probe succeeded
    return 130 if interrupted else (code if ok else (code or 1))


def _full_runs_on(cheapest: Any, config: Config, session: Session, log_dir: Path,
                  prep: Preparation | None, out: TextIO) -> list[str] | None:
    """Methodology 1 (Malta 2021, ch. 4): full trainings on the cheapest host, one per batch
    size, give N_ep per batch size; the other hosts only need short probes. The full runs'
    logs, or None when interrupted."""
    full_plan = plan_probes([cheapest], session.probe_settings, log_dir / "full-runs",
                            config.hosts, prep)
    for p in full_plan:
        p.spec.full = True
    out.write(f"methodology 1: full runs of every batch size on the cheapest host, "
              f"{cheapest.name} ({cheapest.instance})\n")
    try:
        run_interruptible(_with_progress(session, session.run(full_plan), out))
    except KeyboardInterrupt:
        out.write("\ninterrupted\n")
        return None
    return [str(p.log_path) for p in full_plan if p.log_path.exists()]


def _check_project(settings: ProbeSettings, log_dir: Path, out: TextIO,
                   remote: bool) -> Preparation | None:
    """``--project`` / ``[probe] project``: what will be copied, said before anything starts;
    a project over its size limit is refused here, before any host is touched. Local probes use
    it in place: nothing to copy, no limit."""
    from ..run.project import ProjectError

    prep = Preparation.from_settings(settings, log_dir)
    if prep is None or settings.project is None:
        return prep
    if not remote:
        out.write(f"project {settings.project}: used in place (local probes)\n")
        return prep
    try:
        project = prep.scan()  # kept for the hosts: the files are read once
    except ProjectError as exc:
        raise CliError(str(exc)) from None
    out.write(f"{project.describe()}, limit {settings.project_limit_mb:g} MB; copied to each "
              f"SSH host ({'kept' if settings.keep_project else 'removed'} afterwards), "
              "used in place by local probes\n")
    return prep


def _log_to(log_dir: Path) -> None:
    """-v/--debug logging also goes to the session's directory, beside the probe logs."""
    logger = logging.getLogger("probecast")
    if logger.level > logging.INFO or logger.level == logging.NOTSET:
        return
    log_dir.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(log_dir / "probecast.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)


def _rank_logs(logs: list[str], ns: argparse.Namespace, config: Config, epochs: int | None,
               out: TextIO, epochs_from: list[str] | None = None) -> int:
    """The same ranking as `probecast rank` on the logs just written, with the config's prices."""
    options = RankOptions(epochs=epochs, steps=getattr(ns, "steps", None) or config.probe.steps,
                          by=ns.by,
                          epoch_plan=epoch_plan_from(epochs_from),
                          min_accuracy=getattr(ns, "min_accuracy", None),
                          with_setup=getattr(ns, "with_setup", False))
    pricing = pricing_for(config)
    return rank_and_print(load_records(logs), pricing, options, out,
                          fmt="json" if getattr(ns, "json", False) else "text")


def _probe_on_aws(ns: argparse.Namespace, config: Config, session: Session, log_dir: Path,
                  out: TextIO, ranking_out: TextIO) -> int:
    """[aws] in the config: launch the instance types, probe them, terminate them."""
    from ..cloud.client import AwsError, client
    from ..cloud.provision import quote
    from ..cloud.aws_run import run_provisioned
    aws = config.aws
    assert aws is not None
    catalog = price_catalog(config, region=aws.region)
    out.write(quote(aws, aws.instance_types, catalog).describe() + "\n")  # as the app's dialog
    if not confirm_launch(ns, "instances", out):
        return 1
    try:
        ec2 = client("ec2", aws.region, aws.endpoint_url)
        ssm = client("ssm", aws.region, aws.endpoint_url) if aws.ami_ssm_parameter else None
        prov = run_interruptible(_with_progress(
            session, run_provisioned(session, aws, ec2, catalog, log_dir, ssm=ssm), out))
    except AwsError as exc:
        print(f"probecast: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        out.write("\ninterrupted: instances terminated\n")
        return 130
    out.write(f"terminated {len(prov.launched)} instance(s) of session {prov.session}\n")
    say_summary(session, out)  # a type that could not be launched or reached: said
    logs = [str(p) for p in sorted(log_dir.glob("*.jsonl"))]
    if not logs:
        return 1
    return _rank_logs(logs, ns, config, ns.epochs or session.probe_settings.epochs, ranking_out)


def _cheapest(hosts: list[Any], catalog: Catalog) -> Any:
    def price(h: Any) -> float:
        if h.price_per_hour is not None:
            return float(h.price_per_hour)
        p, _ = catalog.price(h.instance)  # the one lookup's catalog: [prices], cache, embedded
        return p if p is not None else float("inf")

    return min(hosts, key=price)


def add_probe_parser(sub: Any) -> None:
    p = sub.add_parser("probe", help="run probes on the configured hosts (or --local) and save their logs")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--config", help="probecast.toml (default: ./probecast.toml, ~/.config/probecast/config.toml)")
    src.add_argument("--local", action="store_true", help="probe this machine only (needs probecast[agent])")
    p.add_argument("--headless", action="store_true", help="no app: progress, then the ranking")
    p.add_argument("--json", action="store_true",
                   help="print the final ranking as JSON on stdout (progress goes to stderr)")
    p.add_argument("--workload", default=None, choices=WORKLOADS,
                   help="built-in workload to probe (default: the config's)")
    p.add_argument("--batch-size", type=int, action="append", default=None,
                   help="batch size (repeatable; default: the config's)")
    p.add_argument("--out", help="directory for the logs (default ./probecast-logs/<timestamp>/)")
    p.add_argument("--project", metavar="PATH", default=None,
                   help="a local directory copied to each host (git: the files git would track); "
                        "the command and [probe] setup run in the copy")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--max-steps", type=int, default=None,
                   help="stop each probe after N training steps (default 30)")
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
    p.add_argument("--full-on-cheapest", action="store_true",
                   help="methodology 1: first train every batch size to the end on the cheapest "
                        "host to learn N_ep (and accuracy) per batch size, then probe the others")
    p.add_argument("--min-accuracy", type=float, default=None,
                   help="with --full-on-cheapest: leave out batch sizes that reach less")
    p.add_argument("--train-size", type=int, default=None, help="built-in workload: training samples")
    p.add_argument("--val-size", type=int, default=None, help="built-in workload: validation samples")
    p.add_argument("--threads", type=int, default=None, help="built-in workload: TensorFlow threads")
    from .find_batch import add_find_arguments

    add_find_arguments(p)
    p.set_defaults(func=cmd_probe)
