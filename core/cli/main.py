"""The `probecast` command line.

    probecast                       the app (TUI) on its embedded default
    probecast [--host H] -b N -- CMD  the app's setup filled in with your command (own_command.py)
    probecast estimate LOG...       runtime/cost estimate per probe log
    probecast rank LOG_OR_DIR...    ranking of (instance, batch size) by time or cost
    probecast probe --local ...     run a probe on this machine and save its log
    probecast probe [--local | --host H ...] [-b N ...] -- COMMAND ARGS...   your own command
    probecast replay LOG_OR_DIR...  replay saved logs in the app
    probecast prices                the price catalog
    probecast import mlperf PATH... MLPerf Training results as probecast logs

Headless commands never import the TUI. Errors name the file and what to do; the exit status is
non-zero only when nothing could be estimated.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any, NoReturn
from collections.abc import Callable

from .analyze import cmd_estimate, cmd_plot, cmd_rank, cmd_stabilize
from .cloud import cmd_cleanup, cmd_prices
from ..run.config import ConfigError, load_config
from .common import CliError, add_estimate_options, add_predict_option, warn
from .importer import add_import_parser
from .own_command import (EXAMPLE, SEPARATOR_HINT, add_batch_size_option, add_host_options,
                          add_save_option, own_command_config, save_config, split_argv)
from .probe import add_probe_parser


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("probecast")
    except Exception:  # noqa: BLE001 - running from a source tree that is not installed
        from .. import __version__

        return __version__


class Parser(argparse.ArgumentParser):
    """argparse, whose errors about words it did not expect say where the command to probe
    goes (``probecast probe --local -b 32 python train.py`` forgot the ``--``)."""

    own_command_hint = False  # set by main() for the app's and probe's command lines

    def error(self, message: str) -> NoReturn:
        if Parser.own_command_hint and message.startswith(("unrecognized arguments",
                                                           "argument COMMAND: invalid choice")):
            message += f"\n  ({SEPARATOR_HINT})"
        super().error(message)


APP_USAGE = """probecast [--local | --host [user@]HOST[:PORT] ...] [-b N ...] [--max-steps N]
                 [--config FILE] [--save-config FILE] [-- COMMAND ARGS...]
       probecast COMMAND ...  (probe, replay, rank, prices, ...: probecast COMMAND --help)"""


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="probecast",
        usage=APP_USAGE,
        description="Find where to train: probe a few iterations of your job on each candidate "
                    "host, estimate full-training time and cost, rank them. Without a command: "
                    "the app (setup screen); with your own command after --, the setup screen "
                    "filled in with it, its hosts and batch sizes.",
        epilog=f"Probe without the app: {EXAMPLE}",
    )
    parser.add_argument("--version", action="version", version=f"probecast {_version()}")
    parser.add_argument("--config", default=None, metavar="FILE",
                        help="the app with this config (default: ./probecast.toml, then "
                             "~/.config/probecast/config.toml, else this machine; with a command "
                             "after --, no file unless named here, and the command wins over "
                             "its probe.command)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--local", action="store_true",
                       help="the app on this machine (the default without --host)")
    add_host_options(where)
    add_batch_size_option(parser, "the config's, else 64 and 256")
    parser.add_argument("--max-steps", type=int, default=None, metavar="N",
                        help="stop each probe after N training steps")
    add_save_option(parser, "then exit without opening the app")
    parser.add_argument("--memory-from", nargs="+", default=None, metavar="LOG_OR_DIR",
                        help="the app: forecast memory from these probe logs too (the setup "
                             "screen marks batch sizes that cannot fit; default: the logs of "
                             "earlier sessions in ./probecast-logs)")
    add_logging_options(parser)
    sub = parser.add_subparsers(dest="cmd", metavar="COMMAND", prog="probecast")

    _add_replay_parser(sub)
    _add_analysis_parsers(sub)
    _add_cloud_parsers(sub)
    add_probe_parser(sub)
    add_import_parser(sub)
    for action in sub.choices.values():
        if action is not None and not any(a.dest == "verbose" for a in action._actions):
            add_logging_options(action)
    return parser


def _add_replay_parser(sub: Any) -> None:
    """`replay`: saved logs through the app."""
    p = sub.add_parser("replay", help="replay saved probe logs in the app")
    p.add_argument("logs", nargs="+", metavar="LOG_OR_DIR", help="probe logs or directories of them")
    p.add_argument("--speed", type=float, default=1.0,
                   help="recorded pace x SPEED (0: as fast as possible; default 1)")
    p.add_argument("--epochs-from", nargs="+", default=None, metavar="FULL_RUN",
                   help="N_ep per batch size from full-run logs (methodology 1)")
    p.add_argument("--config", default=argparse.SUPPRESS, metavar="FILE",
                   help="prices from this config's [[hosts]] and [prices] (default: the app's)")
    add_logging_options(p)


def _add_analysis_parsers(sub: Any) -> None:
    """`estimate`, `rank`, `plot`, `stabilize`: answers from saved logs."""
    p = sub.add_parser("estimate", help="estimate runtime and cost from probe logs")
    p.add_argument("logs", nargs="+", metavar="LOG", help="probe logs")
    p.add_argument("--horizons", default=None, help="epoch horizons, e.g. 5,10,20,25")
    add_estimate_options(p)
    p.add_argument("--json", action="store_true", help="JSON list, one object per log")
    p.set_defaults(func=cmd_estimate)

    p = sub.add_parser("rank", help="rank (instance, batch size) by time or cost")
    p.add_argument("logs", nargs="+", metavar="LOG_OR_DIR", help="probe logs or directories of them")
    p.add_argument("--by", choices=("time", "cost", "weighted"), default="time",
                   help="order: fastest, cheapest or a weighted score (default time)")
    p.add_argument("--weight", type=float, default=0.5,
                   help="with --by weighted: score = w*rel_time + (1-w)*rel_cost (default 0.5)")
    add_estimate_options(p)
    add_predict_option(p)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--json", action="store_true", help="JSON list of ranked rows")
    g.add_argument("--csv", action="store_true", help="CSV, one ranked row per line")
    p.set_defaults(func=cmd_rank)

    p = sub.add_parser("plot", help="figures for reports: scatter, crossover, batch (PNG/SVG)")
    p.add_argument("logs", nargs="+", metavar="LOG_OR_DIR", help="probe logs or directories of them")
    p.add_argument("--kind", choices=("scatter", "crossover", "batch"), default="scatter",
                   help="time-cost scatter, runtime vs planned epochs, or runtime vs batch size")
    p.add_argument("--out", required=True, help="FILE.png or FILE.svg")
    p.add_argument("--workload", default=None,
                   help="which workload, when logs of several are given (default: the one with "
                        "the most priced probes)")
    p.add_argument("--max-epochs", type=int, default=30, help="crossover: epochs on the x axis")
    p.add_argument("--title", default=None, help="figure title (default: probecast: KIND)")
    add_estimate_options(p)
    p.set_defaults(func=cmd_plot)

    p = sub.add_parser("stabilize", help="find (and predict) the epoch where validation stabilises")
    p.add_argument("logs", nargs="+", metavar="LOG", help="full-run logs with epoch metrics")
    p.add_argument("--metric", default="val_accuracy",
                   help="the epoch metric to follow (default val_accuracy)")
    p.add_argument("--patience", type=int, default=3, help="patience rule: epochs without improvement")
    p.add_argument("--min-delta", type=float, default=0.005, help="patience rule: smallest improvement")
    p.add_argument("--window", type=int, default=3, help="plateau rule: epochs in the window")
    p.add_argument("--threshold", type=float, default=0.02, help="plateau rule: max change in the window")
    p.add_argument("--predict-from", type=int, default=None,
                   help="predict from the first K epochs only (default: all seen)")
    p.add_argument("--json", action="store_true", help="JSON, one object per log")
    p.set_defaults(func=cmd_stabilize)


def _add_cloud_parsers(sub: Any) -> None:
    """`prices` and `cleanup`."""
    p = sub.add_parser("prices", help="show the price catalog (--refresh: live from AWS)")
    p.add_argument("--family", default=None, help="comma-separated families, e.g. p3,g5")
    p.add_argument("--refresh", action="store_true",
                   help="read on-demand prices from the AWS Pricing API and cache them")
    p.add_argument("--region", default="us-east-1", help="AWS region (default us-east-1)")
    p.add_argument("--spot", action="store_true", help="also latest spot prices (cheapest AZ)")
    p.add_argument("--provider", default=None, metavar="gpuhunt[:P,...]",
                   help="other clouds' GPU offers through gpuhunt (probecast[gpuhunt]), e.g. "
                        "gpuhunt:lambdalabs,runpod; with --refresh: read and cache them")
    p.add_argument("--json", action="store_true", help="JSON list of catalog rows")
    p.set_defaults(func=cmd_prices)

    p = sub.add_parser("cleanup", help="terminate instances probecast launched (any session of yours)")
    p.add_argument("--region", default="us-east-1", help="AWS region (default us-east-1)")
    p.add_argument("--owner", default=None, help="probecast:owner tag (default: user@host)")
    p.add_argument("--skypilot", action="store_true",
                   help="SkyPilot clusters named probecast-<owner>-... instead (sky down)")
    p.add_argument("--dry-run", action="store_true", help="list them, terminate nothing")
    p.add_argument("--yes", action="store_true", help="do not ask")
    p.set_defaults(func=cmd_cleanup)


def add_logging_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS,
                   help="say more on stderr (-v: what probecast does; -vv: debug)")
    p.add_argument("--debug", action="store_const", const=2, dest="verbose",
                   default=argparse.SUPPRESS, help="debug logging (same as -vv)")


def setup_logging(verbosity: int) -> None:
    """Standard logging on stderr: warnings by default, -v info, -vv/--debug debug."""
    level = {0: logging.WARNING, 1: logging.INFO}.get(verbosity, logging.DEBUG)
    root = logging.getLogger("probecast")
    root.setLevel(level)
    if not any(getattr(h, "probecast", False) for h in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("probecast %(levelname)s %(name)s: %(message)s"))
        handler.probecast = True  # type: ignore[attr-defined]
        root.addHandler(handler)


AppLauncher = Callable[[argparse.Namespace], int]


def main(argv: list[str] | None = None, launch_app: AppLauncher | None = None) -> int:
    """Headless commands run here; the app (no command, or ``replay``) is started through
    ``launch_app``, which the console script in ``probecast.tui`` passes in, so core never imports
    the TUI."""
    args = sys.argv[1:] if argv is None else argv
    ns = parse_command_line(args)
    setup_logging(getattr(ns, "verbose", 0))
    if ns.cmd is None and ns.save_config:
        return _save_app_config(ns)
    if ns.cmd in (None, "replay"):
        if launch_app is None:
            warn("the app is not available here; headless commands still work: probecast --help")
            return 2
        return launch_app(ns)
    try:
        return int(ns.func(ns, sys.stdout))
    except CliError as exc:
        warn(str(exc))
        return 2
    except ValueError as exc:
        warn(str(exc))
        return 2
    except BrokenPipeError:  # `probecast rank ... | head`
        return 0


def parse_command_line(args: list[str]) -> argparse.Namespace:
    """The parsed arguments, with ``command``: the words after ``--`` (None without one) for the
    app and ``probe``; other commands get their ``--`` back (``rank -- -odd-name.jsonl``)."""
    head, words = split_argv(args)
    parser = build_parser()
    commands = next(a.choices for a in parser._actions
                    if isinstance(a, argparse._SubParsersAction))
    own = "probe" in head or not any(w in commands for w in head)
    if not own:  # `rank -- -odd-name.jsonl`: their `--`, argparse's meaning
        head, words = list(args), None
    Parser.own_command_hint = own and words is None
    try:
        ns = parser.parse_args(head)
    finally:
        Parser.own_command_hint = False
    ns.command = words
    return ns


def _save_app_config(ns: argparse.Namespace) -> int:
    """``probecast ... --save-config FILE`` (no command): the config the app would open with,
    written, and nothing opened."""
    try:
        config = own_command_config(ns, warn) or load_config(ns.config)
        save_config(ns.save_config, config, lambda line: print(line, file=sys.stderr))
    except (CliError, ConfigError) as exc:
        warn(str(exc))
        return 2
    return 0
