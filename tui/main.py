"""Build the app for `probecast` (embedded default / config) and `probecast replay`."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from probecast.core.run.board import Board
from probecast.core.run.config import Config, ConfigError, default_config, load_config
from probecast.core.model.logstore import discover_logs, log_name
from probecast.core.cloud.price_lookup import pricing_for
from probecast.core.run.job import load_epoch_plan
from probecast.core.run.runners import ProbeSpec, ReplayRunner
from probecast.core.run.session import Session

from .app import ProbecastApp

if TYPE_CHECKING:
    from probecast.core.cloud.aws_launch import AwsProvider
    from probecast.core.cloud.sky_launch import SkyProvider


def _warn(line: str) -> None:
    print(f"probecast: {line}", file=sys.stderr)


def make_replay_app(paths: list[str], speed: float, epochs_from: list[str] | None = None,
                    config_path: str | None = None) -> ProbecastApp:
    """Saved logs through the live path, priced as `rank` and the app price them (the config's
    hosts and [prices], the refreshed cache, the catalog, then the log's own price)."""
    files, errors = discover_logs(paths)
    for e in errors:
        print(f"probecast: {e}", file=sys.stderr)
    if not files:
        raise SystemExit("probecast: nothing to replay - give probe logs or a directory of them "
                         "(try: probecast replay sample_logs/)")
    config = load_config(config_path)
    pricing = pricing_for(config)
    board = Board(pricing, epoch_plan=load_epoch_plan(epochs_from or [], warn=_warn))
    runners = []
    seen: set[str] = set()
    for f in files:
        key = name = log_name(f)
        while key in seen:
            key += "'"
        seen.add(key)
        runners.append(ReplayRunner(ProbeSpec(key=key, label=name), f, speed=speed))
    where = paths[0] if len(paths) == 1 else f"{len(files)} logs"
    session = Session.replay(board, runners, title=f"replay of {where}")
    if config.catalog:  # its own instances nobody probed are predicted in the ranking, as rank does
        session.config = config
    return ProbecastApp(session)


def make_live_app(config_path: str | None, provider: AwsProvider | None = None,
                  memory_from: list[str] | None = None, sky: SkyProvider | None = None,
                  config: Config | None = None) -> ProbecastApp:
    """The app on a config: the session and the launch providers as `probe` makes them
    (core/cloud/providers.py). With [aws], picked types that have no host are launched; with
    [skypilot], its candidates are. Tests hand in their own providers (instances and clusters
    that are loopback sshd servers). ``config``: one made already (the command line's own
    command, core/cli/own_command.py) instead of the file at ``config_path``."""
    from probecast.core.cloud.providers import aws_provider, live_session, sky_provider

    config = config or load_config(config_path)
    where = (str(config.path) if config.path else f"your command: {config.probe.command}"
             if config.probe.command else "no config: this machine, built-in workload")
    session = live_session(config, title=where, memory_from=memory_from, warn=_warn)
    aws = provider or aws_provider(config)
    sky = sky or sky_provider(config)
    return ProbecastApp(session, setup=True, providers=[p for p in (aws, sky) if p is not None])


def make_app(ns: argparse.Namespace) -> ProbecastApp:
    """The app for a parsed command line: ``probecast [--config F]``, ``probecast [--host H]
    [-b N] -- COMMAND`` (the setup filled in) or ``probecast replay ...``. Raises ConfigError
    or CliError, phrased for the user."""
    from probecast.core.cli.own_command import own_command_config

    if ns.cmd == "replay":
        return make_replay_app(ns.logs, ns.speed, ns.epochs_from, getattr(ns, "config", None))
    config = own_command_config(ns, _warn)
    if config is None and getattr(ns, "local", False):
        config = default_config()  # `probecast --local`: this machine, whatever config is near
    return make_live_app(ns.config, memory_from=getattr(ns, "memory_from", None), config=config)


def run_app(ns: argparse.Namespace) -> int:
    """Run the app a parsed command line asks for (the console script's launcher)."""
    from probecast.core.cli.common import CliError

    try:
        app = make_app(ns)
    except (ConfigError, CliError) as exc:
        print(f"probecast: {exc}", file=sys.stderr)
        return 2
    app.run()
    return app.return_code or 0


def main(argv: list[str] | None = None) -> int:
    """The ``probecast`` console script: headless commands in core, the app here."""
    from probecast.core.cli.main import main as cli_main

    return cli_main(argv, launch_app=run_app)
