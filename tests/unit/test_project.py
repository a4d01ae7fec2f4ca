"""The project that ships itself, and the setup once per host: what goes, what is sent again, the
host's side of the copy (run here through a shell with a home of its own), secrets masked."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing
from probecast.core.run.board import Board
from probecast.core.run.config import ConfigError, FromEnv, Host, ProbeSettings, parse_config
from probecast.core.run.probe_plan import plan_probes, prepare_host, run_plan
from probecast.core.run.project import ProjectError, changes, excluded, scan_project
from probecast.core.run.project_copy import release, ship
from probecast.core.run.runners import ProbeSpec, RunnerStatus
from probecast.core.run.sinks import Mask, OutputSink
from probecast.core.run.ssh import ENV_PRELUDE, env_line


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                   check=True, capture_output=True)


def tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root


def test_in_a_git_work_tree_what_git_would_track_goes(tmp_path: Path) -> None:
    repo = tree(tmp_path / "job", {"train.py": "print(1)\n", "lib/a.py": "", ".gitignore":
                                   "*.ckpt\nruns/\n", "big.ckpt": b"x" * 1000,
                                   "runs/1.log": "x", "data/raw.npy": b"n" * 10})
    _git(repo, "init", "-q")
    _git(repo, "add", "train.py", ".gitignore", "lib/a.py")
    _git(repo, "commit", "-q", "-m", "c")
    (repo / "untracked.txt").write_text("goes\n")
    os.chmod(repo / "train.py", 0o755)
    os.symlink("lib/a.py", repo / "link.py")
    p = scan_project(repo, exclude=("*.npy",))
    assert p.source == "git" and p.name == "job"
    assert sorted(p.files) == [".gitignore", "lib/a.py", "link.py", "train.py", "untracked.txt"]
    assert p.files["train.py"].kind == "x" and p.files["link.py"].kind == "l"
    assert p.files["lib/a.py"].kind == "f"
    assert "5 files" in p.describe() and "git ls-files" in p.describe()


def test_a_plain_directory_goes_minus_the_excluded(tmp_path: Path) -> None:
    root = tree(tmp_path / "plain", {"train.py": "x", ".git/HEAD": "x", "pkg/__pycache__/m.pyc": "x",
                                     "pkg/m.py": "x", ".venv/bin/python": "x", "m.pyc": "x",
                                     "data/keep.csv": "1", "data/raw/huge.bin": "x",
                                     "probecast-logs/s/a.jsonl": "x"})
    p = scan_project(root, exclude=(".git", "__pycache__", "*.pyc", ".venv", "probecast-logs",
                                    "data/raw"))
    assert p.source == "directory"
    assert sorted(p.files) == ["data/keep.csv", "pkg/m.py", "train.py"]


def test_exclude_patterns_match_a_path_a_name_or_a_directory() -> None:
    assert excluded("a/b/c.pyc", ("*.pyc",)) and excluded("x/.venv/bin/py", (".venv",))
    assert excluded("data/raw/1.bin", ("data/raw",)) and excluded("data/raw/1.bin", ("data/*/1.bin",))
    assert not excluded("data/rawish.txt", ("data/raw",)) and not excluded("train.py", ("*.pyc",))


def test_the_digest_follows_the_content_and_changes_are_the_difference(tmp_path: Path) -> None:
    root = tree(tmp_path / "p", {"a.py": "1", "b.py": "2", "c.py": "3"})
    first = scan_project(root)
    assert scan_project(root).digest == first.digest  # same files, same name on the host
    (root / "b.py").write_text("2 changed")
    (root / "c.py").unlink()
    (root / "d.py").write_text("4")
    second = scan_project(root)
    assert second.digest != first.digest and second.origin == first.origin
    send, remove = changes(second, first.manifest()["files"])
    assert (sorted(send), remove) == (["b.py", "d.py"], ["c.py"])
    assert changes(second, second.manifest()["files"]) == ([], [])


@pytest.mark.faults("project over its size limit",
                    checks="refused before any file is read, naming the size, the limit and the "
                           "largest files")
def test_a_project_over_the_limit_is_refused_naming_its_largest_files(tmp_path: Path) -> None:
    root = tree(tmp_path / "p", {"train.py": "x", "weights.bin": b"w" * 1_500_000,
                                 "data.npy": b"d" * 600_000})
    with pytest.raises(ProjectError) as exc:
        scan_project(root, limit_mb=2)
    msg = str(exc.value)
    assert "2.1 MB in 3 files, over the limit of 2 MB (probe.project_limit_mb)" in msg
    assert "weights.bin 1.5 MB, data.npy 600.0 KB" in msg and "probe.exclude" in msg
    assert scan_project(root, limit_mb=3).total_bytes == 2_100_001


class ShellConn:
    """The host side without a server: commands run by /bin/sh here, with a home of their own
    (the helper script and the tar stream are exactly what goes over SSH)."""

    def __init__(self, home: Path) -> None:
        self.env = {**os.environ, "HOME": str(home)}
        self.env.pop("XDG_CACHE_HOME", None)
        self.commands: list[str] = []

    async def run(self, command: str, check: bool = False) -> Any:
        self.commands.append(command)
        proc = await asyncio.create_subprocess_exec(
            "/bin/sh", "-c", command, env=self.env, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE)
        out, err = await proc.communicate()
        return type("R", (), {"exit_status": proc.returncode, "stdout": out.decode(),
                              "stderr": err.decode()})()

    async def create_process(self, command: str, encoding: Any = None) -> Any:
        self.commands.append(command)
        proc = await asyncio.create_subprocess_exec(
            "/bin/sh", "-c", command, env=self.env, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        assert proc.stdin is not None

        class Stdin:
            def write(self, data: bytes) -> None:
                assert proc.stdin is not None
                proc.stdin.write(data)

            async def drain(self) -> None:
                assert proc.stdin is not None
                await proc.stdin.drain()

            def write_eof(self) -> None:
                assert proc.stdin is not None
                proc.stdin.close()

        class Process:
            stdin = Stdin()

            async def wait(self) -> Any:
                out, err = await proc.communicate()
                return type("R", (), {"exit_status": proc.returncode, "stdout": out,
                                      "stderr": err})()

        return Process()


def test_the_host_copy_is_sent_once_updated_with_changes_and_released(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    root = tree(tmp_path / "job", {"train.py": "print('v1')\n", "lib/util.py": "u = 1\n" * 5000,
                                   "old.txt": "going away\n"})
    os.chmod(root / "train.py", 0o755)
    conn = ShellConn(home)
    py = sys.executable

    async def go() -> None:
        v1 = scan_project(root)
        first = await ship(conn, py, v1, "s1")
        assert (first.sent_files, first.files) == (3, 3) and first.sent_bytes > 0
        copy = Path(first.remote_dir)
        assert copy == home / ".cache" / "probecast" / "projects" / f"job-{v1.digest}"
        assert (copy / "train.py").read_text() == "print('v1')\n"
        assert os.stat(copy / "train.py").st_mode & 0o100
        assert json.loads((copy / ".probecast-manifest.json").read_text())["digest"] == v1.digest
        # another session, same content: nothing sent, a second lease
        again = await ship(conn, py, v1, "s2")
        assert (again.sent_files, again.sent_bytes) == (0, 0) and "nothing sent" in again.describe()
        assert await release(conn, py, v1, "s2", keep=False) is False  # s1 still holds it
        assert await release(conn, py, v1, "s1", keep=True) is False  # kept for next time
        (copy / "made-by-setup").write_text("x")
        # a changed project: the kept copy is the seed; only the change goes
        (root / "train.py").write_text("print('v2')\n")
        (root / "old.txt").unlink()
        v2 = scan_project(root)
        delta = await ship(conn, py, v2, "s3")
        assert (delta.sent_files, delta.removed_files, delta.seeded_from) == (1, 1, str(copy))
        assert 0 < delta.sent_bytes < first.sent_bytes
        new = Path(delta.remote_dir)
        assert not copy.exists() and (new / "train.py").read_text() == "print('v2')\n"
        assert not (new / "old.txt").exists() and (new / "lib" / "util.py").exists()
        assert (new / "made-by-setup").exists()  # the copy moved with what setup made in it
        assert await release(conn, py, v2, "s3", keep=False) is True
        assert not new.exists()
        assert [p.name for p in new.parent.iterdir()] == []

    asyncio.run(go())


def test_a_seed_another_session_holds_is_copied_not_taken(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    root = tree(tmp_path / "job", {"a.py": "1"})
    conn = ShellConn(home)
    py = sys.executable

    async def go() -> None:
        v1 = scan_project(root)
        old = Path((await ship(conn, py, v1, "busy")).remote_dir)
        (root / "a.py").write_text("2")
        v2 = scan_project(root)
        new = await ship(conn, py, v2, "mine")
        assert new.seeded_from == str(old) and old.exists()  # "busy" still runs in it
        assert (Path(new.remote_dir) / "a.py").read_text() == "2"
        assert (old / "a.py").read_text() == "1"

    asyncio.run(go())


def test_the_mask_hides_secrets_split_between_chunks(tmp_path: Path) -> None:
    m = Mask(("hunter22", "ab"))  # too short to mask: "ab" is left alone
    text = "user ab, password hunter22; again hunter22."
    out = "".join(m.feed(text[i:i + 3]) for i in range(0, len(text), 3)) + m.flush()
    assert out == "user ab, password ***; again ***."
    sink = OutputSink(None, ("hunter22",), path=tmp_path / "x.output")
    for piece in ("line one\nthe pass is hun", "ter22 ok\nlast line with no e", "nd"):
        sink.write(piece)
    # the end of the stream is held back (it could be the start of a secret) until it ends
    assert sink.tail == ["line one", "the pass is *** ok", "last line with"]
    sink.finish()
    assert sink.tail[-1] == "last line with no end"
    sink.close()
    assert (tmp_path / "x.output").read_text() == (
        "line one\nthe pass is *** ok\nlast line with no end")


def test_env_travels_on_stdin_not_on_the_command_line() -> None:
    env = {"A": "x y", "TOKEN": "it's $HOME `id` %s\nline2 é"}
    cmd = ENV_PRELUDE + "exec \"$0\" -c 'import os,sys; print(repr((os.environ[\"A\"], " \
                        "os.environ[\"TOKEN\"], sys.stdin.read())))'"
    r = subprocess.run(["/bin/sh", "-c", cmd, sys.executable], capture_output=True,
                       input=env_line(env) + b"the agent's stdin\n", timeout=10)
    assert r.stdout.decode().strip() == repr(("x y", env["TOKEN"], "the agent's stdin\n"))
    assert "$HOME" not in cmd and b"$HOME" not in env_line(env)  # octal escapes, not text


def test_config_keys_and_their_errors_name_the_line(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "job").mkdir()
    cfg = tmp_path / "probecast.toml"
    monkeypatch.setenv("PC_UNIT_TOKEN", "secret-value")
    c = parse_config('[probe]\ncommand = "python train.py"\nproject = "job"\nsetup = "make"\n'
                     'exclude = ["*.npy"]\nkeep_project = true\nproject_limit_mb = 50\n'
                     '[probe.env]\nA = "1"\nT = {from_env = "PC_UNIT_TOKEN"}\n', cfg)
    s = c.probe
    assert s.project == str(tmp_path / "job")  # relative to the config file's directory
    assert (s.setup, s.exclude, s.keep_project, s.project_limit_mb) == ("make", ["*.npy"], True, 50)
    for text, needles in [
        ('[probe]\nproject = "nope"\n', ["x.toml:2:", "probe.project: no such directory"]),
        (f'[probe]\nproject = "{tmp_path}"\nworkdir = "/abs"\n', ["x.toml:3:", "inside the project"]),
        ('[probe]\nsetup = ""\n', ["x.toml:2:", "probe.setup must not be empty"]),
        ('[probe]\n[probe.env]\nA = 1\n', ["x.toml:3:", "probe.env.A must be a string or "
                                                         '{from_env = "LOCAL_VAR"}, got 1']),
        ('[probe]\nenv = {T = {from_env = "PC_UNSET_X"}}\n',
         ["x.toml:2:", "PC_UNSET_X is not set in this environment"]),
        ('[probe]\n[probe.env]\n"9X" = "1"\n', ["x.toml:3:", "'9X' is not a variable name"]),
        ('[probe]\nproject_limit_mb = 0\n', ["x.toml:2:", "probe.project_limit_mb"]),
    ]:
        with pytest.raises(ConfigError) as exc:
            parse_config(text, "x.toml")
        for n in needles:
            assert n in str(exc.value), str(exc.value)


class RecordingRunner:
    def __init__(self, spec: ProbeSpec) -> None:
        self.spec = spec

    async def stream(self):  # type: ignore[no-untyped-def]
        yield RunnerStatus("running", "fake")
        yield RunnerStatus("done", f"{self.spec.workdir} {self.spec.env.get('GREETING')}")

    async def cancel(self) -> None:
        pass


def test_setup_runs_once_per_host_and_a_failing_one_fails_only_its_host(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tree(tmp_path / "job", {"train.py": "x"})
    monkeypatch.setenv("PC_UNIT_SECRET", "very-secret")
    counter = tmp_path / "count"
    setup = f'echo ran >> {counter}; echo "in $(pwd) secret=$SECRET"'
    s = ProbeSettings(command="python train.py", project=str(project), setup=setup,
                      batch_sizes=[8, 16, 32],
                      env={"GREETING": "hi", "SECRET": FromEnv("PC_UNIT_SECRET")})
    good = Host(name="good", kind="local", python=sys.executable)
    logs = tmp_path / "logs"
    board = Board(Pricing(Catalog.embedded()))

    async def go() -> None:
        plan = plan_probes([good], s, logs)
        for p in plan:
            board.add(p.spec, p.log_path)
        # three probes of one host asking at once: one setup
        specs = await asyncio.gather(*(prepare_host(board, p) for p in plan))
        assert all(sp is not None and sp.workdir == str(project) for sp in specs)
        assert counter.read_text() == "ran\n"
        await run_plan(board, plan, factory=lambda h, sp, path: RecordingRunner(sp))
        assert counter.read_text() == "ran\n"  # the same session: not again

    asyncio.run(go())
    assert {e.detail for e in board.entries.values()} == {f"{project} hi"}
    record = json.loads((logs / "good.setup.json").read_text())
    assert record["exit_status"] == 0 and record["env"] == ["GREETING", "SECRET"]
    output = (logs / "good.setup.output").read_text()
    assert f"in {project} secret=***" in output and "very-secret" not in output
    local = json.loads((logs / "good.project.json").read_text())
    assert local["copied"] is False  # local probes use the project in place

    # a host whose setup fails: its probes fail with setup's last lines; the other goes on
    bad = Host(name="bad", kind="local", python=sys.executable)
    broken = ProbeSettings(command="python train.py", setup='echo "no GPU driver" >&2; exit 4',
                           batch_sizes=[8, 16, 32])
    board2 = Board(Pricing(Catalog.embedded()))
    plan = plan_probes([bad], broken, logs) + plan_probes([good], ProbeSettings(
        command="python train.py", batch_sizes=[8]), logs)
    asyncio.run(run_plan(board2, plan, factory=lambda h, sp, path: RecordingRunner(sp)))
    statuses = {k: (e.status, e.detail) for k, e in board2.entries.items()}
    assert statuses["good-b8"][0] == "done"
    for b in (8, 16, 32):
        status, detail = statuses[f"bad-b{b}"]
        assert status == "failed" and "setup failed on bad (exit 4" in detail
        assert "no GPU driver" in detail and "bad.setup.output" in detail
