"""Probe only the contenders, live: `probecast probe --config CFG --contenders --json` on six
local hosts of this machine, each labelled as an instance that a `[[catalog]]` row gives a
different GPU. The probe really runs: a plain timed loop whose step takes longer on the hosts
labelled with slower GPUs (each host's python sets the step time, as a slower GPU would), so the
probes agree with the labels' GPU facts. The plan probes a few diverse candidates, predicts the
rest, and probes only those whose predicted bounds overlap the leader's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

TRAINER = """
import argparse, os, time
from probecast_agent import StepTimer
parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int, required=True)
args = parser.parse_args()
step_s = float(os.environ["CONTENDER_STEP_S"])
probe = StepTimer(steps_per_epoch=50, val_steps=2, batch_size=args.batch_size, epochs=40,
                  framework="plain")
for epoch in range(40):
    for _ in probe.steps(range(50), epoch):
        time.sleep(step_s)
    if probe.stopped:
        break
    with probe.validation(epoch, steps=2):
        time.sleep(step_s)
    probe.epoch_end(epoch, {"val_accuracy": 0.5})
probe.finish()
"""

# (instance, GPU as nvidia-smi writes it, GPUs, the step time its host's loop takes): the step
# time falls with the GPUs' compute, as the job would
HOSTS = [
    ("lab-h100x8", "NVIDIA H100 80GB HBM3", 8, 0.002),
    ("lab-a100", "NVIDIA A100-SXM4-40GB", 1, 0.012),
    ("lab-v100", "Tesla V100-SXM2-16GB", 1, 0.03),
    ("lab-a10g", "NVIDIA A10G", 1, 0.05),
    ("lab-t4", "Tesla T4", 1, 0.06),
    ("lab-k80", "Tesla K80", 1, 0.15),
]


def config(tmp: Path) -> Path:
    """Six local hosts, each with a python that sets its loop's step time, and their
    instances as [[catalog]] rows."""
    lines = ['[probe]', 'command = "python3 train.py --batch-size {batch_size}"',
             'batch_sizes = [8]', 'max_steps = 8', 'adaptive_budget = 0', 'boundary_budget = 0',
             'contenders = true', '']
    for name, gpu, count, step_s in HOSTS:
        python = tmp / f"python-{name}"
        python.write_text(f'#!/bin/sh\nexec env CONTENDER_STEP_S={step_s} {sys.executable} "$@"\n')
        python.chmod(0o755)
        lines += ['[[hosts]]', f'name = "{name}"', 'kind = "local"', f'instance = "{name}"',
                  f'python = "{python}"', '', '[[catalog]]', f'name = "{name}"', f'gpu = "{gpu}"',
                  f'gpus = {count}', '']
    path = tmp / "probecast.toml"
    path.write_text("\n".join(lines))
    return path


def probecast(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(cwd), "XDG_CONFIG_HOME": str(cwd / ".config")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return subprocess.run([sys.executable, "-m", "probecast.tui", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=540)


def test_probe_contenders_probes_fewer_and_predicts_the_rest(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(TRAINER)
    cfg = config(tmp_path)
    r = probecast(["probe", "--config", str(cfg), "--contenders", "--json",
                   "--out", str(tmp_path / "logs")], tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    rows: list[dict[str, Any]] = json.loads(r.stdout)
    by_instance = {row["instance"]: row for row in rows}
    # every candidate is ranked, probed or predicted
    assert set(by_instance) == {name for name, *_ in HOSTS}, rows
    probed = {n for n, row in by_instance.items() if not row["predicted"]}
    predicted = {n for n, row in by_instance.items() if row["predicted"]}
    logs = sorted(p.name for p in (tmp_path / "logs").glob("*.jsonl"))
    # fewer probes ran than candidates: one log per probe that ran, none for the predicted
    assert len(logs) == len(probed) < len(HOSTS), (logs, r.stderr[-3000:])
    assert logs == sorted(f"{n}-b8.jsonl" for n in probed)
    # the first round: the most GPU compute, the least and the median
    assert {"lab-h100x8", "lab-k80", "lab-v100"} <= probed
    for name in predicted:
        row = by_instance[name]
        assert row["status"] == "predicted" and row["equation"] == "predicted", row
        assert row["runtime_low_s"] <= row["runtime_s"] <= row["runtime_high_s"], row
        # predicted only where its bounds lie behind the leader's
        assert row["runtime_low_s"] >= by_instance["lab-h100x8"]["runtime_high_s"], row
    assert min(rows, key=lambda row: row["runtime_s"])["instance"] == "lab-h100x8"
    assert f"probing up to {len(HOSTS)} probe(s)" in r.stderr
    assert "(only the contenders: the rest predicted)" in r.stderr
    saved = len(HOSTS) - len(probed)
    assert (f"contenders: probed {len(probed)} of {len(HOSTS)} candidate(s)" in r.stderr
            and f"{saved} probe(s) saved" in r.stderr), r.stderr[-3000:]


def test_a_host_without_gpu_facts_is_probed_and_said(tmp_path: Path) -> None:
    """A host whose instance no catalog row names cannot be predicted: it is probed, and the
    summary says why."""
    (tmp_path / "train.py").write_text(TRAINER)
    cfg = config(tmp_path)
    python = tmp_path / "python-lab-a100"
    cfg.write_text(cfg.read_text() + "\n".join([
        '[[hosts]]', 'name = "mystery"', 'kind = "local"', 'instance = "mystery-box"',
        f'python = "{python}"', '']))
    r = probecast(["probe", "--config", str(cfg), "--contenders", "--json",
                   "--out", str(tmp_path / "logs")], tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    rows = json.loads(r.stdout)
    mystery = [row for row in rows if row["instance"] == "mystery-box"]
    assert len(mystery) == 1 and not mystery[0]["predicted"]
    assert "contenders: probed mystery-b8 (mystery-box): no GPU facts" in r.stderr
    assert len(rows) == len(HOSTS) + 1
