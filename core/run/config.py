"""probecast.toml: hosts to probe and how to probe them.

Searched at --config, ./probecast.toml, then ~/.config/probecast/config.toml. Errors name the
file, the key and what is allowed; unknown keys are errors too (a typo must not be ignored).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    import tomli as tomllib

from ..agent.workloads import WORKLOADS

SEARCH_PATHS = ("probecast.toml", "~/.config/probecast/config.toml")
LOCAL = "local"


class ConfigError(ValueError):
    """A config problem, phrased for the user: file, key, what is allowed."""


@dataclass
class Host:
    name: str
    instance: str = ""
    price_per_hour: float | None = None
    address: str = ""  # empty with kind "local"
    user: str | None = None
    port: int | None = None
    identity_file: str | None = None
    jump: str | None = None
    python: str = "python3"
    kind: str = "ssh"  # "ssh" or "local"
    known_hosts: str | None = None
    accept_new_host_key: bool = False
    keepalive_interval: float = 5.0
    connect_timeout: float = 15.0


@dataclass
class ProbeSettings:
    workload: str = "mnist-cnn"
    command: str | None = None
    workdir: str | None = None
    batch_sizes: list[int] = field(default_factory=lambda: [64, 256])
    epochs: int | None = None
    horizons: list[int] = field(default_factory=lambda: [5, 10, 20, 25])
    max_steps: int | None = None
    target_ci: float | None = None
    max_seconds: float | None = None
    boundary_budget: float | None = None
    timeout: float = 900.0  # seconds: a probe running longer is stopped (bounds its cost)
    concurrency: int = 8
    workload_args: list[str] = field(default_factory=list)
    epochs_from: list[str] = field(default_factory=list)  # full-run logs: N_ep per batch size


@dataclass
class Config:
    hosts: list[Host]
    probe: ProbeSettings
    prices: dict[str, float] = field(default_factory=dict)
    path: Path | None = None
    aws: Any = None  # core.aws.AwsSettings when [aws] is present

    def host(self, name: str) -> Host | None:
        return next((h for h in self.hosts if h.name == name), None)


def local_host() -> Host:
    return Host(name=LOCAL, instance=LOCAL, kind="local", python=sys.executable)


def default_config() -> Config:
    """No config file: this machine is the one probe host, with the built-in workload."""
    return Config(hosts=[local_host()], probe=ProbeSettings(max_steps=30), path=None)


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
    return parse_config(path.read_text(encoding="utf-8"), path)


_HOST_KEYS: dict[str, type | tuple[type, ...]] = {
    "name": str, "instance": str, "price_per_hour": (int, float), "address": str, "user": str,
    "port": int, "identity_file": str, "jump": str, "python": str, "kind": str,
    "known_hosts": str, "accept_new_host_key": bool, "keepalive_interval": (int, float),
    "connect_timeout": (int, float),
}
_PROBE_KEYS: dict[str, type | tuple[type, ...]] = {
    "workload": str, "command": str, "workdir": str, "batch_sizes": list, "epochs": int,
    "horizons": list, "max_steps": int, "target_ci": (int, float), "max_seconds": (int, float),
    "boundary_budget": (int, float), "timeout": (int, float), "concurrency": int,
    "workload_args": list, "epochs_from": list,
}
_TOP_KEYS = {"hosts", "probe", "prices", "aws"}
_AWS_KEYS: dict[str, type | tuple[type, ...]] = {
    "region": str, "ami": str, "ami_ssm_parameter": str, "key_name": str, "subnet_ids": list,
    "security_group_ids": list, "instance_types": list, "max_spend": (int, float),
    "deadman_minutes": int, "user": str, "identity_file": str, "python": str, "spot": bool,
    "endpoint_url": str,
}
_NAME = re.compile(r"^[A-Za-z0-9_.:@-]{1,64}$")


def _type_name(t: type | tuple[type, ...]) -> str:
    names = {int: "an integer", float: "a number", str: "a string", bool: "true or false",
             list: "a list"}
    if isinstance(t, tuple):
        return "a number" if set(t) == {int, float} else " or ".join(names[x] for x in t)
    return names[t]


def _line_of(text: str, needle: str) -> str:
    for i, line in enumerate(text.splitlines(), 1):
        if re.match(rf"\s*{re.escape(needle)}\s*=", line):
            return f":{i}"
    return ""


def _check(table: dict[str, Any], schema: dict[str, Any], where: str, src: str, text: str) -> None:
    for key, value in table.items():
        if key not in schema:
            allowed = ", ".join(sorted(schema))
            raise ConfigError(f"{src}{_line_of(text, key)}: unknown key {where}{key!r}; allowed: {allowed}")
        want = schema[key]
        if isinstance(value, bool) and want is not bool:
            ok = False
        else:
            ok = isinstance(value, want)
        if not ok:
            raise ConfigError(f"{src}{_line_of(text, key)}: {where}{key} must be {_type_name(want)}, "
                              f"got {value!r}")


def parse_config(text: str, path: Path | str = "<config>") -> Config:
    src = str(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{src}: not valid TOML: {exc}") from None
    for key in data:
        if key not in _TOP_KEYS:
            raise ConfigError(f"{src}{_line_of(text, key)}: unknown top-level key {key!r}; "
                              f"allowed: [[hosts]], [probe], [prices], [aws]")
    hosts_raw = data.get("hosts", [])
    if not isinstance(hosts_raw, list):
        raise ConfigError(f"{src}: hosts must be an array of tables: [[hosts]]")
    hosts = []
    for i, h in enumerate(hosts_raw):
        where = f"hosts[{i}]."
        _check(h, _HOST_KEYS, where, src, text)
        if "name" not in h:
            raise ConfigError(f"{src}: {where}name is required (a label such as \"g5-a\")")
        if not _NAME.match(h["name"]):
            raise ConfigError(f"{src}{_line_of(text, 'name')}: {where}name {h['name']!r} may use "
                              "letters, digits and _ . : @ - (up to 64)")
        kind = h.get("kind", "local" if h.get("address") is None and h["name"] == LOCAL else "ssh")
        if kind not in ("ssh", "local"):
            raise ConfigError(f"{src}{_line_of(text, 'kind')}: {where}kind must be \"ssh\" or \"local\", got {kind!r}")
        if kind == "ssh" and not h.get("address"):
            raise ConfigError(f"{src}: {where}address is required for host {h['name']!r} "
                              "(an IP, a DNS name or an ~/.ssh/config Host alias)")
        port = h.get("port")
        if port is not None and not 0 < port < 65536:
            raise ConfigError(f"{src}{_line_of(text, 'port')}: {where}port must be 1-65535, got {port}")
        price = h.get("price_per_hour")
        if price is not None and price < 0:
            raise ConfigError(f"{src}: {where}price_per_hour must be >= 0, got {price}")
        host = Host(**{**h, "kind": kind})
        if host.price_per_hour is not None:
            host.price_per_hour = float(host.price_per_hour)
        if kind == "local" and "python" not in h:
            host.python = sys.executable
        if not host.instance:
            host.instance = host.name
        hosts.append(host)
    names = [h.name for h in hosts]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise ConfigError(f"{src}: host names must be unique; repeated: {', '.join(sorted(dupes))}")
    for h in hosts:
        if h.jump and h.jump == h.name:
            raise ConfigError(f"{src}: host {h.name!r} cannot be its own jump host")
    probe_raw = data.get("probe", {})
    if not isinstance(probe_raw, dict):
        raise ConfigError(f"{src}: probe must be a table: [probe]")
    _check(probe_raw, _PROBE_KEYS, "probe.", src, text)
    settings = ProbeSettings(**probe_raw)
    _validate_settings(settings, src, text)
    prices_raw = data.get("prices", {})
    prices = {}
    for name, value in prices_raw.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ConfigError(f"{src}{_line_of(text, name)}: prices.{name} must be a price per hour "
                              f"in USD (a number >= 0), got {value!r}")
        prices[name] = float(value)
    aws = None
    if "aws" in data:
        from ..cloud.aws import AwsSettings

        aws_raw = data["aws"]
        _check(aws_raw, _AWS_KEYS, "aws.", src, text)
        aws = AwsSettings(**aws_raw)
        if not aws.instance_types:
            raise ConfigError(f"{src}: aws.instance_types must list the instance types to launch")
        if not (aws.ami or aws.ami_ssm_parameter):
            raise ConfigError(f"{src}: aws.ami or aws.ami_ssm_parameter is required "
                              "(e.g. a Deep Learning AMI's SSM parameter)")
        if aws.max_spend <= 0 or aws.deadman_minutes <= 0:
            raise ConfigError(f"{src}: aws.max_spend and aws.deadman_minutes must be positive")
    if not hosts and aws is None:
        hosts = [local_host()]
    return Config(hosts=hosts, probe=settings, prices=prices, path=Path(path), aws=aws)


def _validate_settings(s: ProbeSettings, src: str, text: str) -> None:
    def fail(key: str, msg: str) -> None:
        raise ConfigError(f"{src}{_line_of(text, key)}: probe.{key} {msg}")

    if s.command is None and s.workload not in WORKLOADS:
        fail("workload", f"must be one of {', '.join(WORKLOADS)} (or set probe.command), got {s.workload!r}")
    if s.command is not None and not s.command.strip():
        fail("command", "must not be empty")
    if not s.batch_sizes or not all(isinstance(b, int) and not isinstance(b, bool) and b > 0
                                    for b in s.batch_sizes):
        fail("batch_sizes", f"must be a list of positive integers, got {s.batch_sizes!r}")
    if not all(isinstance(h, int) and h > 0 for h in s.horizons):
        fail("horizons", f"must be a list of positive integers, got {s.horizons!r}")
    if s.epochs is not None and s.epochs <= 0:
        fail("epochs", f"must be positive, got {s.epochs}")
    if s.max_steps is not None and s.max_steps < 2:
        fail("max_steps", f"must be at least 2, got {s.max_steps}")
    if s.target_ci is not None and not 0 < s.target_ci < 1:
        fail("target_ci", f"must be a fraction between 0 and 1 (0.02 = 2 %), got {s.target_ci}")
    if s.concurrency < 1:
        fail("concurrency", f"must be at least 1, got {s.concurrency}")
    if s.timeout <= 0:
        fail("timeout", f"must be positive (seconds), got {s.timeout}")
    if not all(isinstance(a, str) for a in s.workload_args):
        fail("workload_args", "must be a list of strings")
    if s.max_steps is None and s.target_ci is None and s.max_seconds is None:
        s.max_steps = 30
