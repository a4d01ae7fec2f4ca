"""`u` in the app: each host's measured setup added to runtime and cost, and taken out again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import SAMPLE_LOGS
from probecast.tui.main import make_replay_app


async def test_u_adds_the_hosts_setup_to_the_ranking_and_says_so(tmp_path: Path) -> None:
    for name, host in (("probe-torch_mnist-b64-e3-c2", "gpu-a-b64"),
                       ("probe-torch_mnist-b256-e5-c2", "gpu-a-b256")):
        shutil.copy(SAMPLE_LOGS / "cpu-torch" / f"{name}.jsonl", tmp_path / f"{host}.jsonl")
    (tmp_path / "gpu-a.setup.json").write_text(json.dumps({"exit_status": 0, "seconds": 120.0}))
    app = make_replay_app([str(tmp_path)], 0)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        screen = pilot.app.screen
        screen.refresh_view(force=True)
        before = {k: r.runtime_s for k, r in screen._rows.items()}
        assert before
        await pilot.press("u")
        await pilot.pause()
        after = {k: r.runtime_s for k, r in screen._rows.items()}
        assert all(after[k] == pytest.approx(before[k] + 120.0) for k in before)
        assert "+ setup" in str(screen.query_one("#ranking-box").border_title)
        await pilot.press("u")
        await pilot.pause()
        assert {k: r.runtime_s for k, r in screen._rows.items()} == pytest.approx(before)
