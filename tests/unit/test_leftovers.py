"""What a stopped probe says it left in the program's folder (core/agent/leftovers.py): the files
written since the agent started, on a real folder - caches, version control and probecast's
own files left out, the likeliest checkpoints named first, the walk bounded."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from probecast.core.agent import leftovers


def _old(path: Path) -> None:
    os.utime(path, (1_000_000_000, 1_000_000_000))


def test_only_what_was_written_since_is_named_and_not_caches_or_probecasts_own(
        tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("print()")
    _old(tmp_path / "train.py")
    since = time.time() - 1
    for rel in ("runs/exp/metrics.csv", "model_best.pth", "__pycache__/train.cpython-311.pyc",
                ".git/index", ".cache/probecast/agent.pyz", "probecast-logs/2026/p.jsonl", ".probecast-reserve", "out.log"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    paths, whole = leftovers.written_since(str(tmp_path), since, (str(tmp_path / "out.log"), None))
    assert whole and paths == ["model_best.pth", os.path.join("runs", "exp", "metrics.csv")]


def test_the_message_names_checkpoints_first_and_counts_the_rest() -> None:
    paths = [f"samples/img_{i}.png" for i in range(7)] + ["ckpt/epoch=1.ckpt"]
    msg = leftovers.describe(paths, whole=True)
    assert "8 file(s)" in msg and msg.index("ckpt/epoch=1.ckpt") < msg.index("samples/img_0.png")
    assert "(+3 more)" in msg and "too large" not in msg and "resume from a checkpoint" in msg
    assert "too large" in leftovers.describe(paths, whole=False)
    logs = leftovers.describe(["logs/train/runs/1/train.log", "logs/train/runs/1/tags.log"], True)
    assert "resume" not in logs and "none looks like a checkpoint" in logs  # a Hydra run's logs


def test_a_folder_too_large_is_looked_through_only_so_far(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    since = time.time() - 1
    for i in range(30):
        (tmp_path / f"f{i}.npy").write_text("x")
    monkeypatch.setattr(leftovers, "MAX_ENTRIES", 10)
    paths, whole = leftovers.written_since(str(tmp_path), since)
    assert not whole and len(paths) == 10


def test_a_probes_own_copy_of_the_project_is_no_users_folder(tmp_path: Path) -> None:
    own = tmp_path / "probecast-abc"
    (own / "src").mkdir(parents=True)
    assert leftovers.inside(str(own / "src"), str(own)) and leftovers.inside(str(own), str(own))
    assert not leftovers.inside(str(tmp_path), str(own))
    assert not leftovers.inside(str(tmp_path / "probecast-abcd"), str(own))
    assert not leftovers.inside(str(own), None)


def test_the_warning_comes_just_before_the_end_and_a_failing_look_costs_no_end() -> None:
    import io
    import json

    from probecast.core.agent.emit import Emitter

    out = io.StringIO()
    e = Emitter(out=out, strict=False)
    e.start("p", steps_per_epoch=0, val_steps=0, framework="plain", devices=[])
    e.before_end = lambda status: (leftovers.LEFT_FILES, f"left after {status}")
    e.end("probe-done")
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [x["ev"] for x in lines[-2:]] == ["log", "end"]
    assert lines[-2]["code"] == "left-files" and lines[-2]["t"] == lines[-1]["t"]

    def broken(status: str) -> tuple[str, str]:
        raise PermissionError("a folder it may not read")

    out = io.StringIO()
    e = Emitter(out=out, strict=False)
    e.before_end = broken
    e.end("stopped")
    assert json.loads(out.getvalue().splitlines()[-1])["ev"] == "end"
