"""The user's project, shipped to probe hosts: what goes, its manifest, the stream of changes.

What goes: in a git work tree the files git would track (``git ls-files --cached --others
--exclude-standard``: .gitignore is respected); elsewhere every file under the directory. Either
way minus the ``exclude`` patterns. Each file is hashed (sha256): the list of (path, hash, kind)
is the project's *manifest*, and its hash names the copy on the host.

The copy on a host, and sending it only what changed: ``project_copy``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import socket
import stat
import subprocess
import tarfile
import tempfile
import time
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import IO, Any

DEFAULT_EXCLUDE = (".git", "__pycache__", "*.pyc", "*.pyo", ".venv", "venv", ".mypy_cache",
                   ".pytest_cache", ".ipynb_checkpoints", ".DS_Store", "probecast-logs")
CONTROL = ".probecast-control.json"  # first member of every stream: removals and the manifest
CHUNK = 256 * 1024


class ProjectError(Exception):
    """A project that cannot be shipped, phrased for the user."""


@dataclass(frozen=True, slots=True)
class FileEntry:
    path: str  # relative, "/"-separated
    size: int
    sha256: str
    kind: str  # "f" file, "x" executable file, "l" symlink (sha256 of its target)

    def manifest_value(self) -> list[Any]:
        return [self.sha256, self.size, self.kind]


@dataclass
class LocalProject:
    root: Path
    name: str
    source: str  # "git" or "directory"
    files: dict[str, FileEntry]
    digest: str  # names the copy on the host: same files, same digest
    origin: str  # this machine and directory: copies of one project share it
    scan_s: float = 0.0

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files.values())

    def manifest(self) -> dict[str, Any]:
        return {"name": self.name, "digest": self.digest, "origin": self.origin,
                "files": {p: f.manifest_value() for p, f in self.files.items()}}

    def describe(self) -> str:
        return (f"project {self.root}: {len(self.files)} files, {fmt_bytes(self.total_bytes)} "
                f"({'git ls-files' if self.source == 'git' else 'directory'})")


def fmt_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"  # pragma: no cover - the loop returns


def excluded(rel: str, patterns: tuple[str, ...]) -> bool:
    """A pattern matches a file's path from the project root, its name or any directory on its
    path (fnmatch: ``*.npy``, ``data``, ``data/raw/*``)."""
    parts = rel.split("/")
    for pat in patterns:
        pat = pat.strip("/")
        if not pat:
            continue
        if fnmatchcase(rel, pat) or rel.startswith(pat + "/") \
                or any(fnmatchcase(part, pat) for part in parts):
            return True
    return False


def _git_files(root: Path) -> list[str] | None:
    """The files git would track under root (None: not a git work tree, or no git)."""
    try:
        inside = subprocess.run(["git", "-C", str(root), "rev-parse", "--is-inside-work-tree"],
                                capture_output=True, text=True, timeout=30)
        if inside.returncode != 0 or inside.stdout.strip() != "true":
            return None
        listed = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
                                 "--exclude-standard"], capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    if listed.returncode != 0:
        raise ProjectError(f"git ls-files in {root} failed: "
                           f"{listed.stderr.decode('utf-8', 'replace').strip()}")
    return sorted({p for p in listed.stdout.decode("utf-8", "surrogateescape").split("\0") if p})


def _walk_files(root: Path, patterns: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for here, dirs, names in os.walk(root):
        rel_here = os.path.relpath(here, root)
        prefix = "" if rel_here == "." else rel_here.replace(os.sep, "/") + "/"
        keep_dirs = []
        for d in dirs:
            rel = prefix + d
            if excluded(rel, patterns):
                continue
            if os.path.islink(os.path.join(here, d)):
                out.append(rel)  # a link to a directory goes as a link
            else:
                keep_dirs.append(d)
        dirs[:] = keep_dirs
        out.extend(prefix + n for n in names)
    return sorted(out)


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def scan_project(root: Path, exclude: tuple[str, ...] = DEFAULT_EXCLUDE,
                 limit_mb: float | None = None) -> LocalProject:
    """List, size-check and hash the project. Refuses a project over ``limit_mb``, naming its
    largest files, before any of it is read."""
    started = time.monotonic()
    root = root.expanduser().resolve()
    if not root.is_dir():
        raise ProjectError(f"project {root}: no such directory")
    listed = _git_files(root)
    source = "git" if listed is not None else "directory"
    paths = [p for p in (listed if listed is not None else _walk_files(root, exclude))
             if not excluded(p, exclude)]
    stats: list[tuple[str, os.stat_result]] = []
    for rel in paths:
        try:
            st = os.lstat(root / rel)
        except OSError:
            continue  # tracked by git but deleted in the work tree: it does not go
        if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
            stats.append((rel, st))  # directories (git submodules), sockets, fifos do not go
    total = sum(st.st_size for _, st in stats if stat.S_ISREG(st.st_mode))
    if limit_mb is not None and total > limit_mb * 1e6:
        biggest = sorted(stats, key=lambda rs: rs[1].st_size, reverse=True)[:3]
        raise ProjectError(
            f"project {root} is {fmt_bytes(total)} in {len(stats)} files, over the limit of "
            f"{limit_mb:g} MB (probe.project_limit_mb); largest: "
            + ", ".join(f"{rel} {fmt_bytes(st.st_size)}" for rel, st in biggest)
            + " - leave them out (.gitignore or probe.exclude) or raise the limit")
    files: dict[str, FileEntry] = {}
    for rel, st in stats:
        path = root / rel
        try:
            if stat.S_ISLNK(st.st_mode):
                target = os.readlink(path)
                files[rel] = FileEntry(rel, len(target), hashlib.sha256(
                    target.encode("utf-8", "surrogateescape")).hexdigest(), "l")
            else:
                kind = "x" if st.st_mode & stat.S_IXUSR else "f"
                files[rel] = FileEntry(rel, st.st_size, _sha256_file(path), kind)
        except OSError as exc:
            raise ProjectError(f"project {root}: cannot read {rel}: {exc.strerror or exc}") \
                from None
    h = hashlib.sha256()
    for rel in sorted(files):
        f = files[rel]
        h.update(f"{rel}\0{f.kind}\0{f.sha256}\n".encode("utf-8", "surrogateescape"))
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", root.name)[:40].strip(".") or "project"
    origin = hashlib.sha256(f"{socket.gethostname()}:{root}".encode()).hexdigest()[:16]
    return LocalProject(root, name, source, files, h.hexdigest()[:16], origin,
                        time.monotonic() - started)


def changes(project: LocalProject, remote: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(files to send, files to remove there) to turn a copy with manifest ``remote`` into
    this project."""
    send = [p for p, f in project.files.items() if remote.get(p) != f.manifest_value()]
    remove = sorted(p for p in remote if p not in project.files)
    return send, remove


def build_stream(project: LocalProject, send: list[str], remove: list[str]) -> IO[bytes]:
    """A tar stream (rewound) of the control member then the files to send."""
    spool: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=16 << 20)  # noqa: SIM115
    control = json.dumps({"remove": remove, "manifest": project.manifest()}).encode()

    def owner(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        if info.isreg():
            info.mode = 0o755 if project.files[info.name].kind == "x" else 0o644
        return info

    with tarfile.open(fileobj=spool, mode="w", format=tarfile.PAX_FORMAT) as tar:
        head = tarfile.TarInfo(CONTROL)
        head.size = len(control)
        head.mtime = int(time.time())
        tar.addfile(head, io.BytesIO(control))
        for rel in send:
            tar.add(project.root / rel, arcname=rel, recursive=False, filter=owner)
    spool.seek(0)
    return spool
