"""The project's copy on a host: sent once, then only what changed, and released at the end.

The copy lives in ``~/.cache/probecast/projects/<name>-<hash>/`` with its manifest inside. A copy
with the same hash is used as it is (nothing sent); else the newest copy of the same project is
the seed - renamed (or copied, while another session uses it) and brought up to date with a tar
stream of the changed files only, over the SSH connection probecast already has (an exec
channel: no SFTP, no rsync on the host; the host's Python unpacks it). Sessions hold a lease on
the copy they use; the last one out removes it unless it is kept (``keep_project``).
"""

from __future__ import annotations

import asyncio
import json
import shlex
import time
from dataclasses import dataclass, field
from typing import Any

from .project import CHUNK, LocalProject, ProjectError, build_stream, changes, fmt_bytes

# The host's side, run by the host's Python (3.6+, stdlib): acquire (is this copy there? else
# the newest copy of the project and its manifest), apply (seed + tar stream on stdin -> the
# copy, renamed into place whole), release (drop our lease; the last one out removes it).
REMOTE = r'''
import json, os, shutil, sys, tarfile, time
STALE = 7 * 86400
MANIFEST = ".probecast-manifest.json"
cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
base = os.path.join(cache, "probecast", "projects")
cmd, name, digest, origin, token = sys.argv[1:6]
final = os.path.join(base, name + "-" + digest)
now = time.time()
def leases(d):
    return d + ".leases"
def live(d):
    out = []
    ld = leases(d)
    for n in (os.listdir(ld) if os.path.isdir(ld) else []):
        p = os.path.join(ld, n)
        try:
            if now - os.path.getmtime(p) > STALE:
                os.remove(p)
                continue
        except OSError:
            continue
        out.append(n)
    return out
def lease(d):
    if not os.path.isdir(leases(d)):
        os.makedirs(leases(d))
    open(os.path.join(leases(d), token), "w").close()
def manifest(d):
    try:
        with open(os.path.join(d, MANIFEST)) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None
def drop(path):
    if os.path.islink(path) or os.path.isfile(path):
        os.remove(path)
    elif os.path.isdir(path):
        shutil.rmtree(path)
if not os.path.isdir(base):
    os.makedirs(base, 0o700)
if cmd == "acquire":
    m = manifest(final)
    if m is not None and m.get("digest") == digest:
        lease(final)
        os.utime(os.path.join(final, MANIFEST), None)
        print(json.dumps({"dir": final, "ready": True}))
        sys.exit(0)
    seeds = []
    for n in os.listdir(base):
        d = os.path.join(base, n)
        if n.startswith(name + "-") and not n.endswith(".leases") and os.path.isdir(d):
            sm = manifest(d)
            if sm is not None and sm.get("origin") == origin:
                seeds.append((os.path.getmtime(os.path.join(d, MANIFEST)), d, sm))
    seeds.sort(key=lambda s: s[0])
    seed = seeds[-1] if seeds else None
    print(json.dumps({"dir": final, "ready": False, "seed": seed and seed[1],
                      "files": seed[2].get("files", {}) if seed else {}}))
elif cmd == "apply":
    seed = sys.argv[6] if sys.argv[6] != "-" else None
    part = os.path.join(base, ".%s-%s.partial-%d" % (name, digest, os.getpid()))
    if seed is not None and manifest(seed) is None:
        sys.stderr.write("the copy to update is gone\n")
        sys.exit(3)
    try:
        if seed is None:
            os.makedirs(part)
        elif live(seed):
            shutil.copytree(seed, part, symlinks=True)
        else:
            os.rename(seed, part)
            shutil.rmtree(leases(seed), ignore_errors=True)
        tar = tarfile.open(fileobj=sys.stdin.buffer, mode="r|")
        control = None
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        for member in tar:
            if control is None:
                control = json.loads(tar.extractfile(member).read().decode())
                for rel in control["remove"]:
                    drop(os.path.join(part, rel))
                continue
            target = os.path.join(part, member.name)
            if os.path.islink(target) or os.path.isfile(target):
                os.remove(target)
            elif os.path.isdir(target) and not member.isdir():
                shutil.rmtree(target)
            tar.extract(member, part, **safe)
        with open(os.path.join(part, MANIFEST), "w") as fh:
            json.dump(control["manifest"], fh)
        try:
            os.rename(part, final)
        except OSError:
            shutil.rmtree(part)
            if manifest(final) is None:
                raise
        lease(final)
        print(json.dumps({"dir": final}))
    except BaseException:
        shutil.rmtree(part, ignore_errors=True)
        raise
elif cmd == "release":
    try:
        os.remove(os.path.join(leases(final), token))
    except OSError:
        pass
    gone = sys.argv[6] != "keep" and not live(final)
    if gone:
        shutil.rmtree(final, ignore_errors=True)
        shutil.rmtree(leases(final), ignore_errors=True)
    print(json.dumps({"removed": gone}))
'''


def remote_helper(python: str, *args: str) -> str:
    return " ".join(shlex.quote(a) for a in (python, "-c", REMOTE, *args))


@dataclass
class Shipped:
    """What shipping the project to one host did (written as ``<host>.project.json``)."""

    remote_dir: str
    files: int
    bytes: int
    sent_files: int = 0
    sent_bytes: int = 0  # the tar stream, as it went over the connection
    removed_files: int = 0
    seeded_from: str | None = None
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def describe(self) -> str:
        if not self.sent_files and not self.removed_files and self.seeded_from is None:
            return f"project already there ({self.files} files, nothing sent)"
        what = f"sent {self.sent_files} of {self.files} files, {fmt_bytes(self.sent_bytes)}"
        if self.removed_files:
            what += f", removed {self.removed_files}"
        return what + f" in {self.seconds:.1f}s"


async def _helper(conn: Any, python: str, *args: str) -> dict[str, Any]:
    r = await conn.run(remote_helper(python, *args), check=False)
    if r.exit_status != 0:
        lines = (r.stderr or "").strip().splitlines()
        raise ProjectError(f"project copy on the host failed ({args[0]}, exit {r.exit_status}): "
                           f"{lines[-1] if lines else 'no message'}")
    out: dict[str, Any] = json.loads((r.stdout or "").strip().splitlines()[-1])
    return out


async def ship(conn: Any, python: str, project: LocalProject, token: str) -> Shipped:
    """Bring the host's copy of ``project`` up to date; hold a lease on it for this session."""
    started = time.monotonic()
    ids = (project.name, project.digest, project.origin, token)
    state = await _helper(conn, python, "acquire", *ids)
    shipped = Shipped(str(state["dir"]), len(project.files), project.total_bytes)
    if state["ready"]:
        shipped.seconds = time.monotonic() - started
        return shipped
    seed: str | None = state.get("seed")
    for attempt in range(2):
        send, remove = changes(project, (state.get("files") or {}) if seed else {})
        stream = await asyncio.to_thread(build_stream, project, send, remove)
        try:
            proc = await conn.create_process(
                remote_helper(python, "apply", *ids, seed or "-"), encoding=None)
            sent = 0
            try:
                while chunk := stream.read(CHUNK):
                    proc.stdin.write(chunk)
                    await proc.stdin.drain()
                    sent += len(chunk)
                proc.stdin.write_eof()
            except (BrokenPipeError, ConnectionError, OSError):
                pass  # the helper stopped reading: its exit status and stderr say why
            result = await proc.wait()
        finally:
            stream.close()
        if result.exit_status == 3 and seed is not None and attempt == 0:
            shipped.notes.append(f"the copy {seed} went away meanwhile: sent the whole project")
            seed = None  # another session took it: send everything
            continue
        if result.exit_status != 0:
            err = (result.stderr or b"").decode("utf-8", "replace").strip().splitlines()
            raise ProjectError(f"unpacking the project on the host failed (exit "
                               f"{result.exit_status}): {err[-1] if err else 'no message'}")
        shipped.sent_files, shipped.sent_bytes, shipped.removed_files = len(send), sent, len(remove)
        shipped.seeded_from = seed
        break
    shipped.seconds = time.monotonic() - started
    return shipped


async def release(conn: Any, python: str, project: LocalProject, token: str, keep: bool) -> bool:
    """Drop this session's lease; True when the copy was removed (no one else holds it)."""
    out = await _helper(conn, python, "release", project.name, project.digest, project.origin,
                        token, "keep" if keep else "remove")
    return bool(out.get("removed"))
