"""`probecast rank LOGS --config CFG --predict NAME[,NAME] --json` end to end: real MLPerf
excerpts imported as a user would (`probecast import mlperf`), ranked with instances nobody
probed - a [[catalog]] row of the config and an instance of the embedded catalog."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXCERPTS = ROOT / "tests" / "data" / "mlperf"

CONFIG = """
[[catalog]]
name = "lab-b200"
gpu = "NVIDIA B200"
gpus = 8
gpu_memory = "183359 MiB"
price_per_hour = 60.0

[[catalog]]
name = "lab-mi300x"
gpu = "AMD Instinct MI300X 192GB HBM3"
gpus = 8
nodes = 2
"""


def probecast(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "probecast.tui", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def imported(tmp_path: Path) -> Path:
    out = tmp_path / "logs"
    r = probecast("import", "mlperf", str(EXCERPTS), "--out", str(out))
    assert r.returncode == 0, r.stderr
    return out / "ssd"


def test_rank_predicts_the_named_instances(tmp_path: Path) -> None:
    logs = imported(tmp_path)
    config = tmp_path / "probecast.toml"
    config.write_text(CONFIG)
    r = probecast("rank", str(logs), "--config", str(config), "--predict",
                  "lab-b200,lab-mi300x", "--predict", "p4d.24xlarge", "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    probed = [row for row in rows if not row["predicted"]]
    predicted = {row["instance"]: row for row in rows if row["predicted"]}
    assert len(probed) == 3  # the three ssd runs, each measured whole
    assert set(predicted) == {"lab-b200", "lab-mi300x", "p4d.24xlarge"}
    for name, row in predicted.items():
        assert row["status"] == "predicted" and row["equation"] == "predicted"
        assert row["runtime_low_s"] < row["runtime_s"] < row["runtime_high_s"], name
        assert row["predicted_from"].startswith("predicted from 3 systems' runs")
        assert "GPU facts: bf16" in row["predicted_from"]
    # the [[catalog]] row's own price prices the prediction; B200s beat the runs' H100s
    assert predicted["lab-b200"]["cost_usd"] == \
        predicted["lab-b200"]["runtime_s"] * 60.0 / 3600
    fastest_probed = min(row["runtime_s"] for row in probed)
    assert predicted["lab-b200"]["runtime_s"] < fastest_probed
    assert predicted["p4d.24xlarge"]["runtime_s"] > fastest_probed  # A100s are slower


def test_the_summary_says_the_probes_saved_and_unknown_names(tmp_path: Path) -> None:
    logs = imported(tmp_path)
    config = tmp_path / "probecast.toml"
    config.write_text(CONFIG)
    r = probecast("rank", str(logs), "--config", str(config), "--predict", "lab-b200,no-such")
    assert r.returncode == 0, r.stderr
    assert "lab-b200~" in r.stdout
    assert "predicted, not probed: 1 candidate(s) (lab-b200) from 3 probed - 1 probe(s) saved" \
        in r.stdout
    # B200s are predicted faster than the leader: the one candidate worth a probe
    assert "worth a probe (bounds overlap the leader" in r.stdout
    assert r.stdout.rstrip().endswith("lab-b200 b256")
    assert "--predict no-such: no such instance" in r.stderr
