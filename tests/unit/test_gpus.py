"""GPU facts and the reader of GPU names, on strings real tools and APIs write.

The MLPerf strings are every distinct ``accelerator_model_name`` of a GPU in the systems/*.json
of MLCommons' training_results_v3.1 and v4.0 (TPU systems and "N/A" ones read as no GPU); the
nvidia-smi, AWS, GCP and Azure strings are those the tools print or the APIs return.
"""

from __future__ import annotations

import pytest

from probecast.core.model.predict.gpus import SPECS, GpuSpec, gpu_spec, spec_of_key
from probecast.core.model.pricing import Catalog
from probecast.core.model.units import memory_gb, memory_mib

# (vendor string, memory beside it in GB or None, the row it names)
NVIDIA_SMI = [
    ("NVIDIA H100 80GB HBM3", None, "H100-SXM-80GB"),
    ("NVIDIA H100 PCIe", None, "H100-PCIE-80GB"),
    ("NVIDIA H100 NVL", None, "H100-NVL-94GB"),
    ("NVIDIA A100-SXM4-40GB", None, "A100-SXM-40GB"),
    ("NVIDIA A100-SXM4-80GB", None, "A100-SXM-80GB"),
    ("NVIDIA A100-PCIE-40GB", None, "A100-PCIE-40GB"),
    ("NVIDIA A100 80GB PCIe", None, "A100-PCIE-80GB"),
    ("Tesla V100-SXM2-16GB", None, "V100-SXM-16GB"),
    ("Tesla V100-SXM2-32GB", None, "V100-SXM-32GB"),
    ("Tesla V100-PCIE-16GB", None, "V100-PCIE-16GB"),
    ("Tesla K80", None, "K80-12GB"),
    ("Tesla M60", None, "M60-8GB"),
    ("Tesla T4", None, "T4-16GB"),
    ("NVIDIA A10G", None, "A10G-24GB"),
    ("NVIDIA A10", None, "A10-24GB"),
    ("NVIDIA L4", None, "L4-24GB"),
    ("NVIDIA L40S", None, "L40S-48GB"),
    ("NVIDIA H200", None, "H200-SXM-141GB"),
    ("NVIDIA H200 NVL", None, "H200-NVL-141GB"),
    ("NVIDIA B200", None, "B200-SXM-180GB"),
    ("NVIDIA GH200 480GB", None, "GH200-96GB"),
]
# AWS describe_instance_types GpuInfo: Manufacturer + " " + Name, MemoryInfo.SizeInMiB / 1024
AWS = [
    ("NVIDIA H100", 81920 / 1024, "H100-SXM-80GB"),
    ("NVIDIA H200", 144384 / 1024, "H200-SXM-141GB"),
    ("NVIDIA A100", 40960 / 1024, "A100-SXM-40GB"),
    ("NVIDIA A100", 81920 / 1024, "A100-SXM-80GB"),
    ("NVIDIA A10G", 24576 / 1024, "A10G-24GB"),
    ("NVIDIA L4", 23034 / 1024, "L4-24GB"),
    ("NVIDIA L40S", 45776 / 1024, "L40S-48GB"),
    ("NVIDIA T4", 16384 / 1024, "T4-16GB"),
    ("NVIDIA V100", 16384 / 1024, "V100-SXM-16GB"),
    ("NVIDIA V100", 32768 / 1024, "V100-SXM-32GB"),
    ("NVIDIA K80", 12288 / 1024, "K80-12GB"),
    ("NVIDIA M60", 8192 / 1024, "M60-8GB"),
    ("NVIDIA B200", 183359 / 1024, "B200-SXM-180GB"),
]
# GCP accelerator types, and Azure's VM size descriptions
CLOUDS = [
    ("nvidia-tesla-a100", None, "A100-SXM-40GB"),
    ("nvidia-a100-80gb", None, "A100-SXM-80GB"),
    ("nvidia-h100-80gb", None, "H100-SXM-80GB"),
    ("nvidia-h100-mega-80gb", None, "H100-SXM-80GB"),
    ("nvidia-h200-141gb", None, "H200-SXM-141GB"),
    ("nvidia-l4", None, "L4-24GB"),
    ("nvidia-tesla-t4", None, "T4-16GB"),
    ("nvidia-tesla-v100", None, "V100-SXM-16GB"),
    ("nvidia-b200", None, "B200-SXM-180GB"),
    ("8x NVIDIA H100 80GB", None, "H100-SXM-80GB"),
    ("8x NVIDIA A100 80GB", None, "A100-SXM-80GB"),
]
# MLPerf Training v3.1 / v4.0 systems/*.json accelerator_model_name, and the later release's
# forms the issue quotes (B300, B200, GH200, MI300X/MI325X, Gaudi 2, H200)
MLPERF = [
    ("NVIDIA H100-SXM5-80GB", None, "H100-SXM-80GB"),
    ("NVIDIA H100-SXM-80GB", None, "H100-SXM-80GB"),
    ("NVIDIA H100-SXM5-96GB", None, "H100-SXM-96GB"),
    ("NVIDIA H100-PCIe-80GB", None, "H100-PCIE-80GB"),
    ("NVIDIA H200-SXM5-141GB", None, "H200-SXM-141GB"),
    ("NVIDIA A100-SXM4-80GB", None, "A100-SXM-80GB"),
    ("NVIDIA A100-SXM-40GB", None, "A100-SXM-40GB"),
    ("NVIDIA A100-PCIe-80GB", None, "A100-PCIE-80GB"),
    ("NVIDIA A100 - PCIe - 80 GB", None, "A100-PCIE-80GB"),
    ("NVIDIA L40S", 46068 / 1024, "L40S-48GB"),
    ("NVIDIA L40", None, "L40-48GB"),
    ("NVIDIA L4", None, "L4-24GB"),
    ("NVIDIA A30", None, "A30-24GB"),
    ("NVIDIA A10G", 22.056640625, "A10G-24GB"),
    ("NVIDIA RTX A5000", None, "RTXA5000-24GB"),
    ("NVIDIA GeForce RTX 4090", None, "RTX4090-24GB"),
    ("AMD Radeon RX 7900 XTX", None, "RX7900XTX-24GB"),
    ("Intel Gaudi2", None, "Gaudi2-96GB"),
    ("Intel(R) Gaudi(R) 2 AI Accelerator", None, "Gaudi2-96GB"),
    ("Intel Gaudi 2", None, "Gaudi2-96GB"),
    ("NVIDIA H100 80GB HBM3", None, "H100-SXM-80GB"),
    ("NVIDIA Blackwell Ultra GPU (B300-SXM-270GB)", None, "B300-SXM-270GB"),
    ("NVIDIA B200-SXM-180GB", None, "B200-SXM-180GB"),
    ("NVIDIA GH200 Grace Hopper Superchip", None, "GH200-96GB"),
    ("AMD Instinct MI300X 192GB HBM3", None, "MI300X-192GB"),
    ("AMD Instinct MI325X 256GB HBM3E", None, "MI325X-256GB"),
    ("AMD MI300X", None, "MI300X-192GB"),
    ("H200-SXM-141GB", None, "H200-SXM-141GB"),
    ("AMD Instinct MI355X", None, "MI355X-288GB"),
    ("AMD Instinct MI355X 288GB HBM3e (x87)", None, "MI355X-288GB"),  # MLPerf Inference v6.0
]


@pytest.mark.parametrize("name, memory, key", NVIDIA_SMI + AWS + CLOUDS + MLPERF)
def test_vendor_strings_name_their_gpu(name: str, memory: float | None, key: str) -> None:
    spec = gpu_spec(name, memory)
    assert spec is not None, name
    assert spec.key == key


@pytest.mark.parametrize("name", ["TPU-v5p", "TPU-v5e", "N/A", "", "Intel Xeon Platinum 8480C",
                                  "NVIDIA", "AMD EPYC 9654"])
def test_names_of_no_known_gpu_are_none(name: str) -> None:
    assert gpu_spec(name) is None


def test_memory_variants_differ_where_the_product_does() -> None:
    a40, a80 = gpu_spec("NVIDIA A100-SXM4-40GB"), gpu_spec("NVIDIA A100-SXM4-80GB")
    assert a40 is not None and a80 is not None
    assert (a40.memory_gb, a80.memory_gb) == (40, 80)
    assert a80.memory_bw_gbs > a40.memory_bw_gbs
    pcie, sxm = gpu_spec("NVIDIA H100 PCIe"), gpu_spec("NVIDIA H100 80GB HBM3")
    assert pcie is not None and sxm is not None
    assert pcie.bf16_tflops < sxm.bf16_tflops and pcie.interconnect_gbs < sxm.interconnect_gbs
    h200 = gpu_spec("NVIDIA H200")
    assert h200 is not None and h200.memory_gb == 141 and h200.memory_bw_gbs > sxm.memory_bw_gbs


def test_similar_model_names_stay_apart() -> None:
    keys = {n: getattr(gpu_spec(n), "key", None)
            for n in ("NVIDIA A10", "NVIDIA A10G", "NVIDIA A100", "NVIDIA L4", "NVIDIA L40",
                      "NVIDIA L40S", "NVIDIA B200", "NVIDIA GB200", "NVIDIA H100", "NVIDIA GH200")}
    assert len(set(keys.values())) == len(keys), keys


def test_every_row_is_sourced_or_says_it_is_not() -> None:
    assert len({s.key for s in SPECS}) == len(SPECS)
    for spec in SPECS:
        if spec.verified:
            assert spec.source.startswith("https://") and spec.date, spec.key
        else:
            assert spec.note, f"{spec.key}: unverified without saying what is missing"
        if not spec.source:
            assert not spec.verified and not spec.date, spec.key


def test_figures_are_physical_and_generations_order() -> None:
    for spec in SPECS:
        assert isinstance(spec, GpuSpec)
        assert spec.vendor in ("NVIDIA", "AMD", "Intel")
        assert spec.bf16_tflops >= spec.fp32_tflops > 0, spec.key
        assert spec.memory_gb > 0 and spec.memory_bw_gbs > 0 and spec.interconnect_gbs > 0
        assert 2014 <= spec.year <= 2026
    by = {s.key: s for s in SPECS}
    chain = ["V100-SXM-16GB", "A100-SXM-80GB", "H100-SXM-80GB", "B200-SXM-180GB"]
    assert [by[k].year for k in chain] == sorted(by[k].year for k in chain)
    assert [by[k].bf16_tflops for k in chain] == sorted(by[k].bf16_tflops for k in chain)


@pytest.mark.parametrize("text, mib", [
    ("183359 MiB", 183359.0),     # B200 as nvidia-smi and MLPerf systems write it
    ("81559 MiB", 81559.0),
    ("143771 MiB", 143771.0),
    ("46068 MiB", 46068.0),
    ("80 GB", 80 * 1024.0),
    ("80GB", 80 * 1024.0),
    ("80G", 80 * 1024.0),
    ("24 GiB", 24 * 1024.0),
    ("22.056640625 GB", 22.056640625 * 1024),
    ("95GB", 95 * 1024.0),
    ("2x 24 GB", 24 * 1024.0),    # two GPUs of 24 GB each
    ("1.5 TB", 1.5 * 1024 * 1024),
    ("80 GB HBM3", 80 * 1024.0),
    ("141 GB (x8)", 141 * 1024.0),
    ("24GB per GPU", 24 * 1024.0),
])
def test_memory_sizes_are_read_with_their_unit(text: str, mib: float) -> None:
    assert memory_mib(text) == pytest.approx(mib)


@pytest.mark.parametrize("text", ["", "N/A", None, "183359", "lots", "80 parsecs"])
def test_memory_without_a_known_unit_is_not_guessed(text: object) -> None:
    assert memory_mib(text) is None


def test_mib_is_not_read_as_gb() -> None:
    gb = memory_gb("183359 MiB")
    assert gb is not None and 170 < gb < 190   # the B200's 180 GB, not 1024 times more


def test_every_gpu_of_the_embedded_catalog_is_in_the_table() -> None:
    for inst in Catalog.embedded():
        if not inst.gpu_count or inst.gpu_model.upper().startswith("TPU"):
            continue  # TPUs are no GPU: predictions leave them out
        spec = gpu_spec(inst.gpu_model, inst.gpu_memory_gb)
        assert spec is not None, f"{inst.instance}: {inst.gpu_model!r}"
        if inst.gpu_memory_gb:
            assert abs(spec.memory_gb - inst.gpu_memory_gb) / spec.memory_gb < 0.1, inst.instance


def test_keys_find_their_rows() -> None:
    assert all(spec_of_key(s.key) is s for s in SPECS)
    assert spec_of_key("H100") is None
