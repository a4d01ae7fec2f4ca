"""What a stopped probe leaves in the program's folder.

A probe runs the program for real and stops its training early, so what the program wrote as it
trained - a checkpoint, a snapshot it resumes from, a results folder - stays as the stopped run
left it, and the cleanup the program does at its end may not run. A later run in the same folder
may resume from it (the PyTorch DDP tutorial resumes from its own snapshot: a full run recorded
after its probe trained 8 epochs of 10). The agent cannot tell a checkpoint from a result and
deletes nothing; it names, in a `log` event (code ``left-files``), the files in the program's
folder written since the agent started - their modification time says so, no listing beforehand
is needed - the likeliest checkpoints first.

The walk is bounded (``MAX_ENTRIES``, ``MAX_DEPTH``, ``MAX_SECONDS``) and skips what is no
program's output (hidden folders - version control, caches, a home's .cache -, virtual
environments, probecast's own logs); the
agent's own files (its log, the program's output copy) are left out.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable

LEFT_FILES = "left-files"
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", "venv",
                       "site-packages", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox",
                       ".ipynb_checkpoints", "probecast-logs"})
OWN_PREFIX = ".probecast-"  # probecast's own files beside the program's (a write test, a reserve)
CHECKPOINT_HINTS = (".pt", ".pth", ".ckpt", ".h5", ".hdf5", ".keras", ".safetensors", ".bin",
                    ".pkl", ".npz", ".index", ".msgpack", "checkpoint", "ckpt", "snapshot")
MAX_ENTRIES = 20_000  # directory entries looked at, at most
MAX_DEPTH = 4  # folders below the program's
MAX_SECONDS = 0.5  # a folder on a slow disk is not walked past this
SHOWN = 5  # paths named in the message; the rest are counted


def written_since(root: str, since: float, exclude: Iterable[str | None] = ()) -> tuple[list[str], bool]:
    """Paths under ``root`` (relative) of files modified at or after ``since`` (``time.time()``),
    and whether the walk covered the folder whole."""
    skip = {os.path.realpath(p) for p in exclude if p}
    found: list[str] = []
    seen = 0
    deadline = time.monotonic() + MAX_SECONDS
    stack = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > MAX_ENTRIES or time.monotonic() > deadline:
                return sorted(found), False
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIP_DIRS and not entry.name.startswith(".") \
                            and depth < MAX_DEPTH:
                        stack.append((entry.path, depth + 1))
                elif entry.is_file(follow_symlinks=False) and entry.stat().st_mtime >= since \
                        and not entry.name.startswith(OWN_PREFIX) \
                        and os.path.realpath(entry.path) not in skip:
                    found.append(os.path.relpath(entry.path, root))
            except OSError:
                continue
    return sorted(found), True


def looks_like_checkpoint(path: str) -> bool:
    low = path.lower()
    return any(h in low for h in CHECKPOINT_HINTS)


def describe(paths: list[str], whole: bool) -> str:
    """The warning: how many files, the likeliest checkpoints first."""
    ordered = sorted(paths, key=lambda p: (not looks_like_checkpoint(p), p))
    named = ", ".join(ordered[:SHOWN]) + (f" (+{len(ordered) - SHOWN} more)" if len(ordered) > SHOWN
                                          else "")
    partly = "" if whole else " (the folder was too large to look through whole)"
    if any(map(looks_like_checkpoint, paths)):
        risk = ("a later run there may resume from a checkpoint among them (delete it first, or "
                "give the probe another checkpoint path)")
    else:
        risk = ("none looks like a checkpoint (logs and outputs: delete them if a later run must "
                "not find them)")
    return (f"the probe stopped the program before its end: it left {len(paths)} file(s) it "
            f"wrote in its folder{partly}: {named} - as the stopped run left them; {risk}")


def inside(path: str, folder: str | None) -> bool:
    """Whether ``path`` lies in ``folder`` (a probe's own copy of the project, removed after)."""
    if not folder:
        return False
    a, b = os.path.realpath(path), os.path.realpath(folder)
    return a == b or a.startswith(b.rstrip(os.sep) + os.sep)
