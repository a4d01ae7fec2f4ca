"""The host's measured setup in the ranking: off by default, added to runtime, bounds and cost
when asked (a fresh instance pays it), read from <host>.setup.json beside the logs."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from conftest import SAMPLE_LOGS
from probecast.core.cli.main import main
from probecast.core.model.logstore import load_probe, setup_seconds
from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing, RankOptions, build_ranking


def _logs(tmp: Path) -> Path:
    for name, host in (("probe-torch_mnist-b64-e3-c2", "gpu-a-b64"),
                       ("probe-torch_mnist-b256-e5-c2", "gpu-a-b256")):
        shutil.copy(SAMPLE_LOGS / "cpu-torch" / f"{name}.jsonl", tmp / f"{host}.jsonl")
    (tmp / "gpu-a.setup.json").write_text(json.dumps(
        {"host": "gpu-a", "command": "pip install -r requirements.txt", "exit_status": 0,
         "seconds": 95.5, "timed_out": False, "env": [], "output": "gpu-a.setup.output"}))
    return tmp


def test_setup_seconds_is_found_beside_the_log_and_only_when_it_succeeded(tmp_path: Path) -> None:
    logs = _logs(tmp_path)
    assert setup_seconds(logs / "gpu-a-b64.jsonl") == 95.5
    assert setup_seconds(logs / "other-b64.jsonl") is None
    (logs / "gpu-a.setup.json").write_text(json.dumps({"exit_status": 1, "seconds": 3.0}))
    assert setup_seconds(logs / "gpu-a-b64.jsonl") is None
    (logs / "gpu-a.setup.json").write_text("{not json")
    assert setup_seconds(logs / "gpu-a-b64.jsonl") is None


def test_the_ranking_adds_setup_only_when_asked(tmp_path: Path) -> None:
    logs = _logs(tmp_path)
    candidates = [load_probe(p).candidate() for p in sorted(logs.glob("*.jsonl"))]
    pricing = Pricing(Catalog.embedded(), {"cpu-2core": 3.6})
    plain = build_ranking(candidates, pricing, RankOptions(epochs=10)).rows
    setup = build_ranking(candidates, pricing, RankOptions(epochs=10, with_setup=True)).rows
    for a, b in zip(sorted(plain, key=lambda r: r.key), sorted(setup, key=lambda r: r.key)):
        assert a.setup_s == b.setup_s == 95.5 and not a.with_setup and b.with_setup
        assert b.runtime_s == pytest.approx(a.runtime_s + 95.5)
        assert b.runtime_low_s == pytest.approx(a.runtime_low_s + 95.5)
        assert b.runtime_high_s == pytest.approx(a.runtime_high_s + 95.5)
        assert b.cost_usd is not None and a.cost_usd is not None and b.cost_usd > a.cost_usd
        assert any("setup" in n for n in b.notes)


def test_rank_with_setup_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logs = _logs(tmp_path)
    assert main(["rank", str(logs), "--epochs", "10", "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(["rank", str(logs), "--epochs", "10", "--json", "--with-setup"]) == 0
    setup = json.loads(capsys.readouterr().out)

    def rows(data):  # type: ignore[no-untyped-def]
        found = data["rows"] if isinstance(data, dict) and "rows" in data else data
        return sorted(found, key=lambda r: r["key"])

    for a, b in zip(rows(plain), rows(setup)):
        assert b["with_setup"] and not a["with_setup"] and a["setup_s"] == 95.5
        assert b["runtime_s"] == pytest.approx(a["runtime_s"] + 95.5)
