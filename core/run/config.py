"""probecast.toml: hosts to probe and how to probe them.

Searched at --config, ./probecast.toml, then ~/.config/probecast/config.toml. Errors name the
file, the key and what is allowed; unknown keys are errors too (a typo must not be ignored).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable
from typing import Annotated, Any, Literal

import msgspec

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    import tomli as tomllib

from ..agent.policy import DEFAULT_MAX_STEPS, DEFAULT_MIN_STEADY_S, probe_length, steady_floor
from ..agent.workloads import WORKLOADS
from .sky_settings import SkyPilotSettings, check_skypilot
from .config_catalog import CatalogRow, OwnInstance, checked_catalog
from .config_words import explain, value_at
from .tomlpos import TomlPositions, dotted, parse_error_path

SEARCH_PATHS = ("probecast.toml", "~/.config/probecast/config.toml")
LOCAL = "local"


Name = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9_.:@-]{1,64}$",
                                      description="letters, digits and _ . : @ - (up to 64)")]
Seconds = Annotated[float, msgspec.Meta(gt=0, le=1e7)]  # also refuses nan and inf
Price = Annotated[float, msgspec.Meta(ge=0, le=1e6)]
PositiveInt = Annotated[int, msgspec.Meta(gt=0)]


class AwsSettings(msgspec.Struct, forbid_unknown_fields=True):
    region: str = "us-east-1"
    ami: str | None = None
    ami_ssm_parameter: str | None = None  # e.g. a Deep Learning AMI's public SSM parameter
    key_name: str | None = None
    subnet_ids: list[str] = msgspec.field(default_factory=list)
    security_group_ids: list[str] = msgspec.field(default_factory=list)
    instance_types: list[str] = msgspec.field(default_factory=list)
    max_spend: Annotated[float, msgspec.Meta(gt=0, le=1e6)] = 5.0  # USD, whole session, worst case
    deadman_minutes: Annotated[int, msgspec.Meta(gt=0, le=24 * 60)] = 45
    user: str = "ubuntu"
    identity_file: str | None = None
    python: str = "python3"
    spot: bool = False
    endpoint_url: str | None = None


class ConfigError(ValueError):
    """A config problem, phrased for the user: file, line, key, what is allowed."""


class Host(msgspec.Struct, forbid_unknown_fields=True):
    name: Name
    instance: str = ""
    price_per_hour: Price | None = None
    address: str = ""  # empty with kind "local"
    user: str | None = None
    port: Annotated[int, msgspec.Meta(ge=1, le=65535)] | None = None
    identity_file: str | None = None
    jump: str | None = None
    python: str = "python3"
    kind: Literal["ssh", "local"] | None = None  # None: "local" for a host named local, else ssh
    known_hosts: str | None = None
    accept_new_host_key: bool = False
    keepalive_interval: Seconds = 5.0
    connect_timeout: Seconds = 15.0


class FromEnv(msgspec.Struct, forbid_unknown_fields=True):
    """``TOKEN = {from_env = "LOCAL_VAR"}``: the value is read from this machine's environment
    when the probes start - the config file never holds it."""

    from_env: str


ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ProbeSettings(msgspec.Struct, forbid_unknown_fields=True):
    workload: str = "mnist-cnn"
    command: str | None = None
    workdir: str | None = None  # with a project: a directory inside its copy (relative)
    # a local directory copied to each host before its probes; the command and setup run in it
    project: str | None = None
    exclude: list[str] = msgspec.field(default_factory=list)  # added to project.DEFAULT_EXCLUDE
    project_limit_mb: Annotated[float, msgspec.Meta(gt=0, le=1e6)] = 200.0
    keep_project: bool = False  # leave the host's copy for the next session (which sends less)
    setup: str | None = None  # once per host per session, before its first probe
    setup_timeout: Seconds = 1800.0
    env: dict[str, str | FromEnv] = msgspec.field(default_factory=dict)  # setup and command
    batch_sizes: Annotated[list[PositiveInt], msgspec.Meta(min_length=1)] = msgspec.field(
        default_factory=lambda: [64, 256])
    epochs: PositiveInt | None = None
    steps: PositiveInt | None = None  # the job's total training steps (wins over epochs)
    horizons: list[PositiveInt] = msgspec.field(default_factory=lambda: [5, 10, 20, 25])
    max_steps: Annotated[int, msgspec.Meta(ge=2)] | None = None
    target_ci: Annotated[float, msgspec.Meta(gt=0, lt=1)] | None = None
    max_seconds: Seconds | None = None
    # past max_steps, steady steps adding up to this (None: the rule, policy.steady_floor)
    min_steady_seconds: Annotated[float, msgspec.Meta(ge=0, le=3600)] | None = None
    boundary_budget: Annotated[float, msgspec.Meta(ge=0, le=1e7)] | None = None
    timeout: Seconds = 900.0  # seconds: a probe running longer is stopped (bounds its cost)
    # seconds of extra probing for undecided contenders (None: 5 % of the leader's predicted job;
    # 0: never probe again)
    adaptive_budget: Annotated[float, msgspec.Meta(ge=0, le=1e7)] | None = None
    concurrency: PositiveInt = 8
    # probe only the contenders: a few diverse candidates first, the rest predicted from them
    # and probed only while their predicted bounds overlap the leader's (core/run/contenders.py)
    contenders: bool = False
    workload_args: list[str] = msgspec.field(default_factory=list)
    epochs_from: list[str] = msgspec.field(default_factory=list)  # full runs: N_ep per batch

    def copy(self) -> ProbeSettings:
        return msgspec.structs.replace(self)


class ConfigFile(msgspec.Struct, forbid_unknown_fields=True):
    """The TOML document as written (decoded and checked by msgspec)."""

    hosts: list[Host] = msgspec.field(default_factory=list)
    probe: ProbeSettings = msgspec.field(default_factory=ProbeSettings)
    prices: dict[str, Price] = msgspec.field(default_factory=dict)
    aws: AwsSettings | None = None
    skypilot: SkyPilotSettings | None = None
    catalog: list[CatalogRow] = msgspec.field(default_factory=list)  # config_catalog.py


@dataclass
class Config:
    hosts: list[Host]
    probe: ProbeSettings
    prices: dict[str, float] = field(default_factory=dict)
    path: Path | None = None
    aws: AwsSettings | None = None
    skypilot: SkyPilotSettings | None = None
    catalog: list[OwnInstance] = field(default_factory=list)  # [[catalog]]: instances of one's own

    def host(self, name: str) -> Host | None:
        return next((h for h in self.hosts if h.name == name), None)


def local_host() -> Host:
    return Host(name=LOCAL, instance=LOCAL, kind="local", python=sys.executable)


def default_config() -> Config:
    """No config file: this machine is the one probe host, with the built-in workload."""
    return Config(hosts=[local_host()], probe=ProbeSettings(max_steps=DEFAULT_MAX_STEPS,
                                                                min_steady_seconds=DEFAULT_MIN_STEADY_S),
                  path=None)


def find_config(explicit: str | None = None) -> Path | None:
    if explicit:
        p = Path(os.path.expanduser(explicit))
        if not p.is_file():
            raise ConfigError(f"{explicit}: no such config file")
        return p
    for candidate in SEARCH_PATHS:
        p = Path(os.path.expanduser(candidate))
        if p.is_file():
            return p
    return None


def load_config(explicit: str | None = None) -> Config:
    path = find_config(explicit)
    if path is None:
        return default_config()
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}): save the file as UTF-8") \
            from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror or exc})") from None
    return parse_config(text, path)


_SECTIONS = {f.name for f in msgspec.structs.fields(ConfigFile)}


def _allowed(path: tuple[str | int, ...]) -> str:
    """The keys allowed where an unknown key was found."""
    kinds: dict[str, type[msgspec.Struct]] = {"hosts": Host, "probe": ProbeSettings,
                                              "aws": AwsSettings, "skypilot": SkyPilotSettings,
                                              "catalog": CatalogRow}
    struct = kinds.get(str(path[0])) if path else ConfigFile
    if struct is None:
        return ""
    return "; allowed: " + ", ".join(f.name for f in msgspec.structs.fields(struct))


def parse_config(text: str, path: Path | str = "<config>") -> Config:
    src = str(path)
    pos = TomlPositions(text)

    def fail(where: tuple[str | int, ...], msg: str) -> ConfigError:
        line = pos.line(where)
        return ConfigError(f"{src}{f':{line}' if line else ''}: {msg}")

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{src}: not valid TOML: {exc}") from None
    return _config_from_data(data, fail, Path(path), Path(path).parent if path != "<config>" else None)


def config_from_data(data: dict[str, Any], source: str) -> Config:
    """A config from the document a TOML file would hold, made elsewhere (the command line's
    own-command form): the same checks, errors naming ``source`` and the key. No file, so
    ``path`` is None and a relative project is taken from the working directory."""
    def fail(where: tuple[str | int, ...], msg: str) -> ConfigError:
        return ConfigError(f"{source}: {msg}")

    return _config_from_data(data, fail, None, None)


def _config_from_data(data: dict[str, Any], fail: Fail, path: Path | None,
                      base: Path | None) -> Config:
    _check_dict_values(data, fail)
    doc = _convert(data, fail)
    hosts = _checked_hosts(doc, fail)
    settings = doc.probe
    _check_settings(settings, fail, base)
    aws = doc.aws
    if aws is not None:
        if not aws.instance_types:
            raise fail(("aws", "instance_types"), "aws.instance_types must list the instance types "
                                                  "to launch")
        if not (aws.ami or aws.ami_ssm_parameter):
            raise fail(("aws",), "aws.ami or aws.ami_ssm_parameter is required "
                                 "(e.g. a Deep Learning AMI's SSM parameter)")
    if doc.skypilot is not None:
        problem = check_skypilot(doc.skypilot)
        if problem:
            raise fail(("skypilot", "accelerators"), problem)
    if not hosts and aws is None and doc.skypilot is None:
        hosts = [local_host()]
    return Config(hosts=hosts, probe=settings, prices=dict(doc.prices), path=path, aws=aws,
                  skypilot=doc.skypilot, catalog=checked_catalog(doc.catalog, fail))


Fail = Callable[[tuple[str | int, ...], str], ConfigError]


def _check_dict_values(data: dict[str, Any], fail: Fail) -> None:
    """msgspec does not name the key of a bad value in a free-form table: [prices], probe.env."""
    prices = data.get("prices")
    if isinstance(prices, dict):
        for name, value in prices.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not 0 <= value < 1e6:
                raise fail(("prices", name), f"prices.{name} must be a price per hour in USD "
                                             f"(a number >= 0), got {value!r}")
    probe = data.get("probe")
    env = probe.get("env") if isinstance(probe, dict) else None
    if isinstance(env, dict):
        for name, value in env.items():
            if not (isinstance(value, str) or (isinstance(value, dict) and list(value) == ["from_env"]
                                               and isinstance(value["from_env"], str))):
                raise fail(("probe", "env", name), f"probe.env.{name} must be a string or "
                                                   f'{{from_env = "LOCAL_VAR"}}, got {value!r}')


def _convert(data: dict[str, Any], fail: Fail) -> ConfigFile:
    """The typed config, or the first problem with its file, line and key."""
    try:
        return msgspec.convert(data, ConfigFile)
    except msgspec.ValidationError as exc:
        what, _, at = str(exc).partition(" - at `$")
        where = parse_error_path(at.rstrip("`"))
        unknown = re.match(r"Object contains unknown field `(.+)`", what)
        if unknown:
            key = unknown.group(1)
            if not where:
                raise fail((key,), f"unknown top-level key {key!r}; allowed: [[hosts]], [probe], "
                                   "[prices], [aws], [skypilot], [[catalog]]") from None
            raise fail((*where, key), f"unknown key {dotted(where)}.{key!r}{_allowed(where)}") \
                from None
        explained = explain(what, where)
        if ", got" not in explained:
            value = value_at(data, where)
            explained += f", got {value!r}" if value is not None else ""
        raise fail(where, f"{dotted(where)} {explained}") from None


def _checked_hosts(doc: ConfigFile, fail: Fail) -> list[Host]:
    hosts = [_check_host(h, i, fail) for i, h in enumerate(doc.hosts)]
    names = [h.name for h in hosts]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise fail(("hosts", names.index(dupes[0], names.index(dupes[0]) + 1), "name"),
                   f"hosts: names must be unique; repeated: {', '.join(dupes)}")
    for i, h in enumerate(hosts):
        if h.jump and h.jump == h.name:
            raise fail(("hosts", i, "jump"), f"hosts[{i}].jump: host {h.name!r} cannot be its own "
                                             "jump host")
    return hosts


def _check_host(h: Host, i: int, fail: Any) -> Host:
    where = ("hosts", i)
    kind = h.kind or ("local" if not h.address and h.name == LOCAL else "ssh")
    if kind == "ssh" and not h.address:
        raise fail((*where, "name"), f"hosts[{i}].address is required for host {h.name!r} "
                                     "(an IP, a DNS name or an ~/.ssh/config Host alias)")
    h.kind = kind
    if kind == "local" and h.python == "python3":
        h.python = sys.executable
    if not h.instance:
        h.instance = h.name
    return h


def _check_settings(s: ProbeSettings, fail: Any, base: Path | None = None) -> None:
    """Values that msgspec cannot check alone. ``base``: the config file's directory, which a
    relative ``project`` is taken from."""
    if s.command is None and s.workload not in WORKLOADS:
        raise fail(("probe", "workload"), f"probe.workload must be one of {', '.join(WORKLOADS)} (or set "
                                          f"probe.command), got {s.workload!r}")
    if s.command is not None and not s.command.strip():
        raise fail(("probe", "command"), "probe.command must not be empty")
    s.min_steady_seconds = steady_floor(s.max_steps, s.target_ci, s.max_seconds,
                                        given=s.min_steady_seconds)
    s.max_steps = probe_length(s.max_steps, s.target_ci, s.max_seconds)
    if s.project is not None:
        given = Path(os.path.expanduser(s.project))
        project = (base / given if base is not None and not given.is_absolute() else given)
        if not project.is_dir():
            raise fail(("probe", "project"), f"probe.project: no such directory {str(project)!r} "
                                             "(a relative path is taken from the config file's "
                                             "directory)")
        s.project = str(project.resolve())
        if s.workdir is not None and (s.workdir.startswith(("/", "~")) or ".." in
                                      Path(s.workdir).parts):
            raise fail(("probe", "workdir"), "probe.workdir must be a directory inside the project "
                                             f"(a relative path) when probe.project is set, got "
                                             f"{s.workdir!r}")
    if s.setup is not None and not s.setup.strip():
        raise fail(("probe", "setup"), "probe.setup must not be empty")
    for name, value in s.env.items():
        if not ENV_NAME.match(name):
            raise fail(("probe", "env", name), f"probe.env: {name!r} is not a variable name "
                                               "(letters, digits and _, not starting with a digit)")
        if isinstance(value, FromEnv):
            if not ENV_NAME.match(value.from_env):
                raise fail(("probe", "env", name), f"probe.env.{name}.from_env must name a "
                                                   f"variable, got {value.from_env!r}")
            if value.from_env not in os.environ:
                raise fail(("probe", "env", name),
                           f"probe.env.{name}: {value.from_env} is not set in this environment "
                           f"(export {value.from_env}=... before starting probecast)")
        elif "\0" in value:
            raise fail(("probe", "env", name), f"probe.env.{name} must not contain a NUL byte")


def resolve_env(env: dict[str, str | FromEnv]) -> tuple[dict[str, str], tuple[str, ...]]:
    """(the values to pass, the secret ones among them): values read from this machine's
    environment are secrets, masked wherever a program prints them."""
    values: dict[str, str] = {}
    secrets: list[str] = []
    for name, value in env.items():
        if isinstance(value, FromEnv):
            values[name] = os.environ.get(value.from_env, "")
            secrets.append(values[name])
        else:
            values[name] = value
    return values, tuple(secrets)
