"""The host memory limits a program runs under, and the kernel's OOM-kill counters: what the
agent can read of them from /proc and /sys (stdlib only). memory.py says what they mean.

An address-space limit (``RLIMIT_AS``: ``ulimit -v``, ``prlimit --as``) counts virtual memory; a
cgroup's ``memory.max`` (v2) or ``memory.limit_in_bytes`` (v1) counts resident memory; without
either, the machine's RAM (``MemTotal``) is the limit.
"""

from __future__ import annotations

import os
import resource

MB = float(2**20)
ADDRESS_SPACE = "address-space"
MEMORY = "memory"
NO_LIMIT = 1 << 60  # cgroup v1 writes ~2**63 for "no limit"


def _read(path: str) -> str | None:
    try:
        with open(path) as fh:
            return fh.read()
    except OSError:
        return None


def _int(text: str | None) -> int | None:
    try:
        return int(text.strip()) if text is not None else None
    except ValueError:
        return None  # "max": no limit


def cgroup_dirs() -> list[tuple[int, str]]:
    """(version, directory) of this process's memory cgroup and each of its ancestors (their
    limits apply too), innermost first. Empty where no cgroup filesystem is visible."""
    text = _read("/proc/self/cgroup") or ""
    out: list[tuple[int, str]] = []
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "" and os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
            version, root = 2, "/sys/fs/cgroup"  # unified hierarchy
        elif "memory" in controllers.split(","):
            version, root = 1, "/sys/fs/cgroup/memory"
        else:
            continue
        here = os.path.join(root, path.lstrip("/"))
        if not os.path.isdir(here):  # a cgroup namespace: our cgroup is the mount's root
            here = root
        while True:
            out.append((version, here))
            if os.path.normpath(here) == os.path.normpath(root):
                break
            here = os.path.dirname(here)
    return out


def cgroup_limit_mb() -> tuple[float | None, str]:
    """The tightest memory limit of this process's cgroups, and where it was read."""
    best: tuple[float | None, str] = (None, "")
    for version, d in cgroup_dirs():
        name = "memory.max" if version == 2 else "memory.limit_in_bytes"
        value = _int(_read(os.path.join(d, name)))
        if value is None or value <= 0 or value >= NO_LIMIT:
            continue
        if best[0] is None or value / MB < best[0]:
            best = (value / MB, f"cgroup v{version} {name}")
    return best


def ram_mb() -> float | None:
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemTotal:"):
            try:
                return float(line.split()[1]) / 1024
            except (IndexError, ValueError):
                return None
    return None


def host_limit() -> tuple[float | None, str, str]:
    """(MB, what it counts, where it was read) of the host memory limit the program runs under:
    an address-space limit (RLIMIT_AS) or a cgroup's, the tighter of the two, else the RAM."""
    found: list[tuple[float, str, str]] = []
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY and soft > 0:
            found.append((soft / MB, ADDRESS_SPACE, "RLIMIT_AS"))
    except (OSError, ValueError):
        pass
    limit, where = cgroup_limit_mb()
    if limit is not None:
        found.append((limit, MEMORY, where))
    if found:
        return min(found)
    ram = ram_mb()
    return (ram, MEMORY, "MemTotal") if ram is not None else (None, "", "")


def oom_kills() -> dict[str, int]:
    """The kernel's OOM-kill counters this process can see: its cgroups' (v2 memory.events, v1
    memory.oom_control) and the system's (/proc/vmstat). Compared before and after a run."""
    out: dict[str, int] = {}
    for version, d in cgroup_dirs():
        name = "memory.events" if version == 2 else "memory.oom_control"
        for line in (_read(os.path.join(d, name)) or "").splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                out[os.path.join(d, name)] = int(value)
        if version == 1:  # v1 also counts every time usage hit the limit
            fails = _int(_read(os.path.join(d, "memory.failcnt")))
            if fails is not None:
                out[os.path.join(d, "memory.failcnt")] = fails
    for line in (_read("/proc/vmstat") or "").splitlines():
        key, _, value = line.partition(" ")
        if key == "oom_kill" and value.strip().isdigit():
            out["/proc/vmstat oom_kill"] = int(value)
    return out


def counter_name(key: str) -> str:
    """A counter's name for people: which OOM-kill count rose, without the cgroup's path."""
    if key.startswith("/proc/vmstat"):
        return "the system's oom_kill count"
    return f"its cgroup's {os.path.basename(key)} oom_kill count"


