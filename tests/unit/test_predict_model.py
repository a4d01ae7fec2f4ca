"""The prediction model (core/model/predict/model.py) on recorded data: per-system times of real
MLPerf Training v3.1/v4.0 runs (tests/data/predict/mlperf_systems.json, written by
benchmarks/predict.py --fixture from the results repositories), each system predicted from its
hardware and the other systems' runs."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest

from probecast.core.model.predict.gpus import gpu_spec
from probecast.core.model.predict.model import (Hardware, Observed, Prediction, family, predict,
                                                speed)

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "predict" / "mlperf_systems.json"


def systems(release: str, benchmark: str) -> list[Observed]:
    doc = json.loads(FIXTURE.read_text())
    out = []
    for s in doc["systems"]:
        if (s["release"], s["benchmark"]) != (release, benchmark):
            continue
        gpu = gpu_spec(s["accelerator"], (s["memory_mb"] or 0) / 1024 or None)
        if gpu is not None and s["per_node"]:
            out.append(Observed(s["name"], Hardware(gpu, s["per_node"], s["nodes"]),
                                s["total_s"], s["init_s"]))
    return out


def leave_one_out(obs: list[Observed], same=lambda a, b: a.name == b.name
                  ) -> list[tuple[Observed, Prediction]]:
    out = []
    for o in obs:
        p = predict(o.hardware, [x for x in obs if not same(o, x)])
        assert p is not None
        out.append((o, p))
    return out


@pytest.mark.parametrize("release,benchmark", [("v3.1", "bert"), ("v4.0", "llama2_70b_lora"),
                                               ("v4.0", "resnet")])
def test_each_system_predicted_from_the_others(release: str, benchmark: str) -> None:
    obs = systems(release, benchmark)
    assert len(obs) >= 20
    rows = leave_one_out(obs)
    errors = [abs(p.runtime_s - o.runtime_s) / o.runtime_s for o, p in rows]
    inside = sum(p.low_s <= o.runtime_s <= p.high_s for o, p in rows) / len(rows)
    assert statistics.median(errors) <= 0.15
    assert inside >= 0.85
    assert all(p.low_s < p.runtime_s < p.high_s for _, p in rows)


def test_a_gpu_model_nobody_ran_predicted_from_the_others() -> None:
    """llama2_70b_lora v4.0: the H200 system from H100, A100, L40S and Gaudi 2 runs alone."""
    obs = systems("v4.0", "llama2_70b_lora")
    h200 = [o for o in obs if family(o.hardware.gpu) == "H200"]
    assert h200
    for o in h200:
        p = predict(o.hardware, [x for x in obs if family(x.hardware.gpu) != "H200"])
        assert p is not None
        assert p.low_s <= o.runtime_s <= p.high_s
        assert abs(p.runtime_s - o.runtime_s) / o.runtime_s < 0.25


def test_one_observed_system_answers_from_the_priors() -> None:
    h100 = gpu_spec("NVIDIA H100 80GB HBM3")
    b200 = gpu_spec("NVIDIA B200")
    a100 = gpu_spec("NVIDIA A100-SXM4-80GB")
    assert h100 and b200 and a100
    obs = [Observed("h100x8", Hardware(h100, 8), 1000.0)]
    more = predict(Hardware(h100, 8, 2), obs)
    faster = predict(Hardware(b200, 8), obs)
    slower = predict(Hardware(a100, 8), obs)
    assert more and faster and slower
    assert 500 < more.runtime_s < 1000  # twice the GPUs: faster, by less than twice
    assert faster.runtime_s < 1000 < slower.runtime_s
    assert "1 system' runs: H100-SXM-80GBx8" in faster.basis
    assert "bf16 2250 TFLOP/s" in faster.basis


def test_a_vendor_nobody_ran_widens_the_bounds() -> None:
    obs = systems("v3.1", "bert")
    nvidia = [o for o in obs if o.hardware.gpu.vendor == "NVIDIA"]
    mi300x = gpu_spec("AMD Instinct MI300X 192GB HBM3")
    h100 = gpu_spec("NVIDIA H100 80GB HBM3")
    assert mi300x and h100
    amd = predict(Hardware(mi300x, 8), nvidia)
    same_facts = predict(Hardware(h100, 8), nvidia)
    assert amd and same_facts
    assert math.log(amd.high_s / amd.low_s) > math.log(same_facts.high_s / same_facts.low_s)


def test_the_roofline_mix_lies_between_compute_and_bandwidth() -> None:
    l40s = gpu_spec("NVIDIA L40S")  # much compute, little bandwidth against an H100
    assert l40s
    compute, bandwidth = speed(l40s, 1.0), speed(l40s, 0.0)
    assert bandwidth < speed(l40s, 0.5) < compute


def test_nothing_observed_predicts_nothing() -> None:
    h100 = gpu_spec("NVIDIA H100 80GB HBM3")
    assert h100
    assert predict(Hardware(h100, 8), []) is None
