"""The own-command form of the command line, as the config it stands for.

``probecast probe --host gpu1 -b 32 -b 64 -- python train.py --batch-size {batch_size}`` names
what a probecast.toml would: [[hosts]], and [probe] command, batch_sizes, max_steps. This module
turns those values into that TOML document and hands it to the config's own checks
(``config_from_data``), so a probe job started from the command line is the one a config file
would start; ``config_toml`` writes any checked config back out (``--save-config``).
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ..agent.policy import DEFAULT_MAX_STEPS, DEFAULT_MIN_STEADY_S
from .config import LOCAL, Config, Host, ProbeSettings, config_from_data

PLACEHOLDER = "{batch_size}"
SOURCE = "the command line"
HOST_FORM = "[user@]HOST[:PORT]"

# user@ (optional), then a name, an address or an ~/.ssh/config alias, or an IPv6 address in
# brackets, then :PORT (optional). Neither part may start with "-": it would read as an option.
_HOST_SPEC = re.compile(
    r"^(?:(?P<user>[A-Za-z0-9_.][A-Za-z0-9_.$-]*)@)?"
    r"(?:\[(?P<v6>[0-9A-Fa-f:.]+(?:%[A-Za-z0-9_.-]+)?)\]|(?P<host>[A-Za-z0-9_][A-Za-z0-9_.-]*))"
    r"(?::(?P<port>[0-9]+))?$")
_NAME_MAX = 64  # config.Name's bound


class HostSpecError(ValueError):
    """A --host value that is not [user@]HOST[:PORT], phrased for the user."""


@dataclass(frozen=True)
class HostSpec:
    """One ``--host`` value, split as OpenSSH reads ``ssh [user@]host -p port``; what is left out
    (user, port, key, the real host name of an alias) comes from ~/.ssh/config at connect time."""

    address: str
    user: str | None = None
    port: int | None = None

    @property
    def name(self) -> str:
        """The host's name in rankings and log file names: the address, and the port when one
        is given (two servers on one address differ by port)."""
        address = self.address.replace("%", "_")  # an IPv6 zone: config names have no "%"
        return (f"{address}:{self.port}" if self.port else address)[:_NAME_MAX]

    @property
    def name_with_user(self) -> str:
        return (f"{self.user}@{self.name}" if self.user else self.name)[:_NAME_MAX]


def parse_host_spec(text: str) -> HostSpec:
    """``[user@]HOST[:PORT]``: ``gpu1``, ``ubuntu@10.0.0.5``, ``gpu1:2222``,
    ``ubuntu@[fe80::1]:22``, or an ~/.ssh/config ``Host`` alias."""
    spec = text.strip()
    m = _HOST_SPEC.match(spec)
    if m is None:
        raise HostSpecError(_why_not_a_host(text))
    port = m.group("port")
    if port is not None and not 1 <= int(port) <= 65535:
        raise HostSpecError(f"--host {text!r}: port {port} is not 1-65535")
    address = m.group("v6") or m.group("host")
    return HostSpec(address=address, user=m.group("user"), port=int(port) if port else None)


def _why_not_a_host(text: str) -> str:
    head = f"--host {text!r}: not {HOST_FORM}"
    if not text.strip():
        return f"--host needs a host: {HOST_FORM}, e.g. ubuntu@gpu1:22 or an ~/.ssh/config alias"
    if text.count(":") > 1 and "[" not in text:
        return f"{head} (write an IPv6 address in brackets: [{text.rpartition('@')[2]}]:22)"
    if text.count("@") > 1:
        return f"{head} (one @ at most, between the user and the host)"
    if text.lstrip().startswith("-") or "@-" in text:
        return f"{head} (a host or user cannot start with -)"
    if "/" in text or "://" in text:
        return f"{head} (a host, not a URL or a path)"
    return f"{head} (letters, digits and _ . - in names; e.g. ubuntu@gpu1:22)"


def host_entries(specs: list[HostSpec]) -> list[dict[str, Any]]:
    """[[hosts]] tables for the specs, each named once: by address (and port), by user@address
    where two share it; the same host given twice is an error."""
    names = [s.name for s in specs]
    entries: list[dict[str, Any]] = []
    seen: set[str] = set()
    for spec in specs:
        name = spec.name_with_user if names.count(spec.name) > 1 else spec.name
        if name in seen:
            raise HostSpecError(f"--host {name} is given twice")
        seen.add(name)
        entry: dict[str, Any] = {"name": name, "address": spec.address}
        if spec.user:
            entry["user"] = spec.user
        if spec.port:
            entry["port"] = spec.port
        entries.append(entry)
    return entries


def command_string(argv: list[str]) -> str:
    """The words after ``--`` as the config's ``command`` string, which probecast splits again
    as a shell would (no shell runs it). Each word is quoted where it needs it; the placeholder
    stays readable (``--batch-size {batch_size}``, not ``'{batch_size}'``). One word holding
    spaces is a command given whole, in quotes: it is taken as written."""
    if len(argv) == 1 and any(c.isspace() for c in argv[0]):
        return argv[0].strip()
    marker = "PROBECASTBATCHSIZE"  # shell-safe, so quote() leaves it; put back after quoting
    return " ".join(shlex.quote(w.replace(PLACEHOLDER, marker)).replace(marker, PLACEHOLDER)
                    for w in argv)


@dataclass
class CommandLine:
    """What the command line says about the probe, as config values (None: not given)."""

    hosts: list[HostSpec] = field(default_factory=list)  # empty: this machine
    command: str | None = None
    workload: str | None = None
    batch_sizes: list[int] | None = None
    max_steps: int | None = None
    target_ci: float | None = None
    max_seconds: float | None = None
    epochs: int | None = None
    steps: int | None = None
    project: str | None = None

    def document(self) -> dict[str, Any]:
        """The TOML document a config file saying the same would hold."""
        probe: dict[str, Any] = {}
        if self.command is not None:
            probe["command"] = self.command
        elif self.workload is not None:
            probe["workload"] = self.workload
        for key in ("batch_sizes", "max_steps", "target_ci", "max_seconds", "epochs", "steps",
                    "project"):
            value = getattr(self, key)
            if value is not None:
                probe[key] = value
        hosts = host_entries(self.hosts) if self.hosts else [{"name": LOCAL, "kind": "local"}]
        return {"hosts": hosts, "probe": probe}

    def config(self) -> Config:
        return config_from_data(self.document(), SOURCE)


def same_probe_everywhere(settings: ProbeSettings) -> bool:
    """Several batch sizes and a command that cannot tell them apart: each probe would run the
    very same thing."""
    return (settings.command is not None and PLACEHOLDER not in settings.command
            and len(set(settings.batch_sizes)) > 1)


def apply_to_settings(cl: CommandLine, settings: ProbeSettings) -> ProbeSettings:
    """A config file's [probe], with what the command line gives winning (``--config FILE --
    COMMAND``): the command replaces the file's command or workload."""
    s = settings.copy()
    if cl.command is not None:
        s.command = cl.command
    elif cl.workload is not None:
        s.workload, s.command = cl.workload, None
    if cl.batch_sizes:
        s.batch_sizes = list(cl.batch_sizes)
    if cl.max_steps is not None:
        s.max_steps, s.min_steady_seconds = cl.max_steps, None  # a given count is kept exactly
    return s


# ---- writing a config back out (--save-config) ------------------------------------------------

def config_toml(config: Config, header: str = "") -> str:
    """The config as a probecast.toml, with the config reference's key names and only the keys
    that differ from their defaults (so the file reads as what was chosen). What the checks
    derive (a host's kind and instance, this machine's Python) is left out: loading the file
    derives it again."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    for host in config.hosts:
        lines += ["", "[[hosts]]", *_pairs(_host_table(host))]
    lines += ["", "[probe]", *_pairs(_length_derived(_changed(config.probe, ProbeSettings())))]
    if config.prices:
        lines += ["", "[prices]", *_pairs(dict(config.prices))]
    for section in ("aws", "skypilot"):
        value = getattr(config, section)
        if value is not None:
            lines += ["", f"[{section}]", *_pairs(_changed(value, type(value)()))]
    for own in getattr(config, "catalog", None) or []:  # [[catalog]]: config_catalog.py
        lines += ["", "[[catalog]]", *_pairs(_catalog_table(own))]
    return "\n".join(lines).lstrip("\n") + "\n"


def _catalog_table(own: Any) -> dict[str, Any]:
    """A checked [[catalog]] row as it was written: the GPU memory only where the user gave it
    (else the GPU table's is derived again)."""
    table: dict[str, Any] = {"name": own.name, "gpu": own.gpu, "gpus": own.gpus}
    if own.nodes != 1:
        table["nodes"] = own.nodes
    if own.memory_from == "config":
        table["gpu_memory"] = f"{own.gpu_memory_gb * 1024:.10g} MiB"
    if own.price_per_hour is not None:
        table["price_per_hour"] = own.price_per_hour
    return table


def _host_table(host: Host) -> dict[str, Any]:
    table = _changed(host, Host(name=host.name))
    table = {"name": host.name, **table}
    inferred = "local" if not host.address and host.name == LOCAL else "ssh"
    if table.get("kind") == inferred:
        del table["kind"]
    if table.get("instance") == host.name:
        del table["instance"]  # the checks name the instance after the host
    if host.kind == "local" and table.get("python") == sys.executable:
        del table["python"]  # this machine's own Python: derived again where the file is read
    return table


def _length_derived(probe: dict[str, Any]) -> dict[str, Any]:
    """[probe] without what the length rule derives again on loading: the default 30 steps and
    their steady second, or no steady floor beside a given length."""
    floor = probe.get("min_steady_seconds")
    if floor == DEFAULT_MIN_STEADY_S and probe.get("max_steps") == DEFAULT_MAX_STEPS \
            and "target_ci" not in probe and "max_seconds" not in probe:
        return {k: v for k, v in probe.items() if k not in ("max_steps", "min_steady_seconds")}
    if floor == 0.0 and any(k in probe for k in ("max_steps", "target_ci", "max_seconds")):
        return {k: v for k, v in probe.items() if k != "min_steady_seconds"}
    return probe


def _changed(value: msgspec.Struct, default: msgspec.Struct) -> dict[str, Any]:
    now = msgspec.to_builtins(value)
    was = msgspec.to_builtins(default)
    return {k: v for k, v in now.items() if v is not None and was.get(k) != v}


def _pairs(table: dict[str, Any]) -> list[str]:
    return [f"{_key(k)} = {_value(v)}" for k, v in table.items()]


def _key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _string(key)


def _string(text: str) -> str:
    # JSON's escapes are TOML's basic-string escapes; TOML also wants DEL escaped
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"no TOML for {type(v).__name__}")
