"""Your own command on the command line, no config file needed:

    probecast probe [--local | --host [user@]HOST[:PORT] ...] [-b N ...] [--max-steps N ...] -- COMMAND ARGS...
    probecast [--local | --host ...] [-b N ...] -- COMMAND ARGS...      the app's setup, filled in

The words after ``--`` are the command (``{batch_size}`` in it becomes each probe's batch size);
the options before it name what a probecast.toml would (core/run/command_line.py turns them into
that config, through the config's own checks). ``--save-config FILE`` writes that config out.
"""

from __future__ import annotations

import argparse
import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..run.command_line import (HOST_FORM, PLACEHOLDER, CommandLine, HostSpecError, apply_to_settings,
                                command_string, config_toml, parse_host_spec,
                                same_probe_everywhere)
from ..run.config import Config, ConfigError, ProbeSettings, load_config
from .common import CliError

FORM = ("probecast probe [--local | --host [user@]HOST[:PORT] ...] [-b N ...] [--max-steps N ...] "
        "-- COMMAND ARGS...")
EXAMPLE = "probecast probe --local -b 32 -b 64 -- python train.py --batch-size {batch_size}"
SEPARATOR_HINT = f"the command to probe goes after --, e.g. {EXAMPLE}"


def split_argv(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """(probecast's own arguments, the command after the first ``--``, or None without one).
    The command's own options (``--batch-size``, ``-b``, even ``--``) never reach argparse."""
    if "--" not in argv:
        return list(argv), None
    at = argv.index("--")
    return list(argv[:at]), list(argv[at + 1:])


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        hint = f" ({SEPARATOR_HINT})" if PLACEHOLDER in text else ""
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}{hint}")
    return value


def add_host_options(p: Any) -> None:
    """``--host`` (repeatable) and ``--save-config``: the own-command options both the app's
    parser and ``probe`` take (``--local``, ``-b`` and ``--max-steps`` each parser places in its
    own groups)."""
    p.add_argument("--host", action="append", default=None, metavar=HOST_FORM,
                   help="probe this SSH host (repeatable): an address, a name or an ~/.ssh/config "
                        "alias; user, port, key and host key as ssh finds them (~/.ssh/config, "
                        "the agent, ~/.ssh/known_hosts)")


def add_batch_size_option(p: Any, default_from: str) -> None:
    p.add_argument("-b", "--batch-size", type=positive_int, action="append", default=None,
                   metavar="N", help=f"batch size (repeatable; default: {default_from}); "
                                     "{batch_size} in the command becomes it")


def add_save_option(p: Any, then: str) -> None:
    p.add_argument("--save-config", metavar="FILE", default=None,
                   help="write the equivalent probecast.toml to FILE (never over an existing "
                        f"file), {then}; later: --config FILE")


def command_line(ns: argparse.Namespace) -> CommandLine:
    """The own-command values of a parsed command line (``ns.command``: the words after --)."""
    words = getattr(ns, "command", None)
    if words is not None and not any(w.strip() for w in words):
        raise CliError(f"nothing after --: {SEPARATOR_HINT}")
    try:
        hosts = [parse_host_spec(h) for h in getattr(ns, "host", None) or []]
    except HostSpecError as exc:
        raise CliError(str(exc)) from None
    return CommandLine(
        hosts=hosts, command=command_string(words) if words else None,
        workload=getattr(ns, "workload", None), batch_sizes=getattr(ns, "batch_size", None),
        max_steps=getattr(ns, "max_steps", None), target_ci=getattr(ns, "target_ci", None),
        max_seconds=getattr(ns, "max_seconds", None), epochs=getattr(ns, "epochs", None),
        steps=getattr(ns, "steps", None), project=getattr(ns, "project", None))


def own_command_config(ns: argparse.Namespace, warn: Callable[[str], None]) -> Config | None:
    """The config the command line stands for when it uses the own-command form (a command
    after --, or --host); None when it does not, and the config file is read as before.

    A command after -- with --config FILE: the file gives the hosts and the rest, the command
    line's command (and -b, --max-steps) wins over the file's, and that is said on stderr.
    Without --config, no config file is looked for: the command line says it all."""
    cl = command_line(ns)
    config_path = getattr(ns, "config", None)
    if not cl.hosts and cl.command is None:
        return None
    if cl.hosts and getattr(ns, "local", False):
        raise CliError("--local and --host: probe this machine or SSH hosts (for both, list them "
                       "in a config's [[hosts]]: --save-config writes one to start from)")
    if cl.hosts and config_path:
        raise CliError(f"--host and --config: the hosts come from one place - the config's "
                       f"[[hosts]] ({config_path}) or --host, not both")
    if cl.command is not None and getattr(ns, "workload", None):
        raise CliError("--workload and a command after --: probe one of them")
    if cl.project is not None and not Path(cl.project).expanduser().is_dir():
        raise CliError(f"--project {cl.project}: no such directory")
    if not config_path:
        _default_batch_sizes(cl, warn)
    try:
        config = _file_with_command(cl, config_path, warn) if config_path else cl.config()
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    if same_probe_everywhere(config.probe):
        warn(f"the command has no {PLACEHOLDER}: every probe would run the same command, so the "
             f"batch sizes {', '.join(map(str, config.probe.batch_sizes))} would differ in name "
             f"only (put {PLACEHOLDER} where the command takes its batch size, e.g. --batch-size "
             f"{PLACEHOLDER})")
    return config


def _default_batch_sizes(cl: CommandLine, warn: Callable[[str], None]) -> None:
    """No -b: the config's default batch sizes where the command takes {batch_size}; one probe
    where it does not (more would run the very same thing)."""
    if cl.batch_sizes or cl.command is None:
        return
    default = ProbeSettings().batch_sizes
    if PLACEHOLDER in cl.command:
        cl.batch_sizes = list(default)
        warn(f"no -b: probing batch sizes {' and '.join(map(str, default))} (-b N, repeatable, "
             "chooses)")
    else:
        cl.batch_sizes = default[:1]
        warn(f"the command has no {PLACEHOLDER} and no -b was given: one probe per host; its "
             "batch size is the program's own, read from its DataLoader or fit() (where it says "
             f"none, recorded as {default[0]}: -b N says the batch size it uses)")


def _file_with_command(cl: CommandLine, config_path: str, warn: Callable[[str], None]) -> Config:
    config = load_config(config_path)
    s = config.probe
    was = f"probe.command ({s.command!r})" if s.command else f"probe.workload ({s.workload})"
    warn(f"the command after -- replaces {was} of {config.path}; its hosts and other settings "
         "still apply")
    config.probe = apply_to_settings(cl, s)
    return config


def save_config(path_text: str, config: Config, out: Callable[[str], object]) -> Path:
    """Write ``config`` as a probecast.toml at ``path_text``; an existing file is never
    overwritten (it may hold a user's edits)."""
    path = Path(path_text).expanduser()
    header = (f"probecast config, written by --save-config on {dt.date.today().isoformat()}.\n"
              f"Probe with it: probecast probe --config {path_text}  (the app: probecast --config "
              f"{path_text})")
    try:
        with open(path, "x", encoding="utf-8") as fh:
            fh.write(config_toml(config, header))
    except FileExistsError:
        raise CliError(f"--save-config {path_text}: the file exists and is left as it is (remove "
                       "it, or name another file)") from None
    except OSError as exc:
        raise CliError(f"--save-config {path_text}: cannot write it ({exc.strerror or exc})") \
            from None
    out(f"config written to {path_text}")
    return path
