"""GPU facts from vendor datasheets, and GPU names read as vendors write them.

``SPECS`` holds one row per GPU product (model, form factor, memory size). ``source`` is the
page the figures were read on (``date``): a vendor page where one was found, otherwise a page
that reproduces the vendor's datasheet table, which ``note`` says. Where a figure could not be
found in a source this project could cite, the row says so: ``verified`` is False and ``note``
names what is missing; rows with no source at all carry NVIDIA's/AMD's published figures as
known to the authors, unchecked - never a guessed source.

Conventions, the same in every row:
- ``bf16_tflops`` is dense (NVIDIA's datasheets print "with sparsity" figures, twice the dense
  ones); GPUs without BF16 give their fastest dense 16-bit (FP16) tensor rate, and GPUs without
  16-bit tensor math (K80, M60) their FP32 rate: what a mixed-precision job can use.
- ``fp32_tflops`` is the non-tensor (vector) FP32 rate.
- ``memory_gb`` is the vendor's figure (binary: an "80 GB" GPU holds 80 GiB).
- ``interconnect_gbs`` is GPU-to-GPU bandwidth per GPU **in one direction**: vendors print the
  sum of both directions for NVLink (900 GB/s on H100 SXM = 450 each way), PCIe ("64 GB/s" for
  Gen4 x16) and Infinity Fabric, so those figures are halved here. For Gaudi it is the on-chip
  RoCE Ethernet ports together (24 x 100 Gb/s = 300 GB/s each way on Gaudi 2).
- Boards that show up as two GPUs (K80, M60; MI250X shows as two GCDs to ROCm) are described per
  GPU as nvidia-smi and the clouds count them (K80: 12 GB each).

``gpu_spec(name, memory_gb)`` reads nvidia-smi names ("NVIDIA H100 80GB HBM3",
"Tesla V100-SXM2-16GB"), AWS ``describe_instance_types`` GpuInfo ("NVIDIA" + "H100", with the
memory in MiB converted by the caller), GCP accelerator types ("nvidia-tesla-a100",
"nvidia-h100-mega-80gb"), Azure ("8x NVIDIA H100 80GB") and MLPerf ``accelerator_model_name``
("NVIDIA Blackwell Ultra GPU (B300-SXM-270GB)", "AMD Instinct MI325X 256GB HBM3E").
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class GpuSpec:
    key: str             # canonical, e.g. "H100-SXM-80GB"
    vendor: str          # "NVIDIA" | "AMD" | "Intel"
    name: str            # e.g. "NVIDIA H100 SXM5 80GB"
    year: int            # launch year: the generation order
    bf16_tflops: float   # dense (see the module's conventions for GPUs without BF16)
    fp32_tflops: float   # non-tensor FP32
    memory_gb: float
    memory_bw_gbs: float  # GB/s
    interconnect: str    # e.g. "NVLink 4", "PCIe 4.0", "Infinity Fabric"
    interconnect_gbs: float  # per GPU, GB/s, one direction (datasheets print both directions)
    source: str          # URL of the datasheet
    date: str            # ISO date of the source (its own date, or the day it was read)
    model: str = ""      # the model as names say it ("H100"): what gpu_spec matches on
    form: str = ""       # "SXM" | "PCIe" | "NVL" | "" (one form only)
    verified: bool = True  # every figure above was read in ``source``
    note: str = ""       # what is not from the source, or how a figure was derived


_READ = "2026-11-26"  # the day the datasheets below were read for this table


def _row(model: str, form: str, memory_gb: float, vendor: str, name: str, year: int,
         bf16: float, fp32: float, bw: float, link: str, link_gbs: float,
         source: str = "", date: str = _READ, note: str = "") -> GpuSpec:
    size = f"{memory_gb:g}GB"
    key = "-".join(p for p in (model.replace(" ", ""), form.upper() if form else "", size) if p)
    return GpuSpec(key=key, vendor=vendor, name=name, year=year, bf16_tflops=bf16,
                   fp32_tflops=fp32, memory_gb=memory_gb, memory_bw_gbs=bw, interconnect=link,
                   interconnect_gbs=link_gbs, source=source, date=date if source else "",
                   model=model, form=form,
                   verified=bool(source) and not note.startswith("unverified"),
                   note=note if source else (note or "unverified: no datasheet found to cite"))


_P100 = ("https://tech4gamers.com/nvidia-tesla-p100-will-be-available-in-two-variants-of-"
         "16gb-12gb-hbm2/")
_V100_SXM = "https://developer.nvidia.com/programming-tensor-cores-cuda-9-0"
_V100_PCIE = ("https://www.io-tech.fi/uutinen/nvidia-esitteli-tesla-v100-pci-express-kiihdyttimen-"
              "tieteelliseen-laskentaan/")
_T4 = "https://sysrqmts.com/en/gpus/nvidia/tesla/t4"
_A100 = "https://glennklockwood.com/garden/processors/A100"
_A100_NOTE = ("the source quotes NVIDIA's A100 datasheet "
              "(nvidia-a100-datasheet-us-nvidia-1758950-r4); "
              "each variant's bandwidth and NVLink 600 GB/s (both ways) from "
              "https://www.thundercompute.com/blog/nvidia-a100-specs-full-guide")
_L40 = "https://www.mullet.se/product.html?product_id=355414"
_H100 = "https://archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html"
_H100_NOTE = ("the source reproduces NVIDIA's H100 datasheet table (sparse figures, halved here; "
              "NVLink 900/600 GB/s and PCIe Gen5 128 GB/s both ways)")
_BLACKWELL = "https://zdszero.github.io/Computer/Artificial_Intelligence/Hardware.html"
_BLACKWELL_NOTE = ("the source reproduces NVIDIA's GB200 NVL72 / HGX B200 table (sparse BF16, "
                   "halved here; NVLink 5 1.8 TB/s both ways)")
_BLACKWELL_ULTRA = "https://verda.com/blog/gb300-nvl72-architecture"
_MI325X = "https://awesomeagents.ai/hardware/amd-mi325x"
_GAUDI = "https://www.sgpjbg.com/baogao/465025.html"

# The first row of each model is what a name without form factor or memory means: the form the
# clouds rent (AWS p4d, GCP a2 are A100 SXM4 40GB; p5 and a3 are H100 SXM; p3 is V100 SXM2 16GB).
SPECS: tuple[GpuSpec, ...] = (
    # --- NVIDIA: Kepler .. Turing
    _row("K80", "", 12, "NVIDIA", "NVIDIA Tesla K80 (one of the board's two GK210)", 2014,
         4.37, 4.37, 240, "PCIe 3.0", 16),
    _row("M60", "", 8, "NVIDIA", "NVIDIA Tesla M60 (one of the board's two GM204)", 2015,
         4.82, 4.82, 160, "PCIe 3.0", 16),
    _row("P100", "SXM", 16, "NVIDIA", "NVIDIA Tesla P100 SXM2 16GB", 2016,
         21.2, 10.6, 720, "NVLink 1", 80, _P100,
         note="unverified: NVLink bandwidth (160 GB/s both ways) not in the source"),
    _row("P100", "PCIe", 16, "NVIDIA", "NVIDIA Tesla P100 PCIe 16GB", 2016,
         18.7, 9.3, 720, "PCIe 3.0", 16, _P100),
    _row("P100", "PCIe", 12, "NVIDIA", "NVIDIA Tesla P100 PCIe 12GB", 2016,
         18.7, 9.3, 540, "PCIe 3.0", 16, _P100),
    _row("V100", "SXM", 16, "NVIDIA", "NVIDIA Tesla V100 SXM2 16GB", 2017,
         125, 15.7, 900, "NVLink 2", 150, _V100_SXM,
         note="unverified: NVLink 300 GB/s (both ways) not found in a source here; 125 tensor "
              "TFLOPS from the source, FP32 15.7 and up to 32 GB from "
              "https://grokipedia.opelly.me/articles/nvidia-tesla-v100, 900 GB/s from "
              "https://m.leiphone.com/category/iot/45VPDfmdFFzqdOxR.html"),
    _row("V100", "SXM", 32, "NVIDIA", "NVIDIA Tesla V100 SXM2 32GB", 2018,
         125, 15.7, 900, "NVLink 2", 150, _V100_SXM,
         note="unverified: as the 16GB row (the 32GB variant: 'up to 32 GB' in its FP32 source)"),
    _row("V100", "PCIe", 16, "NVIDIA", "NVIDIA Tesla V100 PCIe 16GB", 2017,
         112, 14, 900, "PCIe 3.0", 16, _V100_PCIE),
    _row("V100", "PCIe", 32, "NVIDIA", "NVIDIA Tesla V100 PCIe 32GB", 2018,
         112, 14, 900, "PCIe 3.0", 16, _V100_PCIE,
         note="unverified: the 32GB variant is not in the source (16GB figures)"),
    _row("T4", "", 16, "NVIDIA", "NVIDIA T4", 2018, 65.13, 8.141, 320, "PCIe 3.0", 16, _T4),
    # --- NVIDIA: Ampere, Ada
    _row("A100", "SXM", 40, "NVIDIA", "NVIDIA A100 SXM4 40GB", 2020,
         312, 19.5, 1555, "NVLink 3", 300, _A100, note=_A100_NOTE),
    _row("A100", "SXM", 80, "NVIDIA", "NVIDIA A100 SXM4 80GB", 2020,
         312, 19.5, 2039, "NVLink 3", 300, _A100, note=_A100_NOTE),
    _row("A100", "PCIe", 40, "NVIDIA", "NVIDIA A100 PCIe 40GB", 2020,
         312, 19.5, 1555, "PCIe 4.0", 32, _A100, note=_A100_NOTE),
    _row("A100", "PCIe", 80, "NVIDIA", "NVIDIA A100 PCIe 80GB", 2021,
         312, 19.5, 1935, "PCIe 4.0", 32, _A100, note=_A100_NOTE),
    _row("A10G", "", 24, "NVIDIA", "NVIDIA A10G (AWS)", 2021,
         70, 31.2, 600, "PCIe 4.0", 32,
         "https://www.baseten.co/blog/nvidia-a10-vs-a10g-for-ml-model-inference/",
         note="unverified: only memory (24 GB) and bandwidth (600 GB/s) read in the source; "
              "NVIDIA publishes no A10G datasheet, tensor and FP32 rates are not from a source"),
    _row("A10", "", 24, "NVIDIA", "NVIDIA A10", 2021, 125, 31.24, 600.2, "PCIe 4.0", 32,
         "https://sysrqmts.com/ru/gpus/compare/nvidia-a10-pcie-vs-nvidia-quadro-rtx-4000",
         note="unverified: BF16 tensor 125 not in the source (FP32, memory, bandwidth are)"),
    _row("A30", "", 24, "NVIDIA", "NVIDIA A30", 2021, 165, 10.32, 933.1, "PCIe 4.0", 32,
         "https://sysrqmts.com/vi/gpus/compare/nvidia-a30-pcie-vs-nvidia-jetson-tx2-gpu",
         note="unverified: BF16 tensor 165 not in the source (FP32, memory, bandwidth are)"),
    _row("RTX A5000", "", 24, "NVIDIA", "NVIDIA RTX A5000", 2021,
         111.1, 27.8, 768, "NVLink 3 bridge", 56.25),
    _row("L4", "", 24, "NVIDIA", "NVIDIA L4", 2023, 121, 30.29, 300, "PCIe 4.0", 32,
         "https://grokipedia.com/page/NVIDIA_L4_vs_L40S",
         note="FP16 tensor 242 with sparsity halved; FP32 30.29 from "
              "https://fpsbench.com/compare/gpu/nvidia-l4-vs-nvidia-tesla-m40"),
    _row("L40S", "", 48, "NVIDIA", "NVIDIA L40S", 2023, 362.05, 91.6, 864, "PCIe 4.0", 32,
         _L40, note="the source reproduces NVIDIA's L40/L40S datasheet table"),
    _row("L40", "", 48, "NVIDIA", "NVIDIA L40", 2022, 181.05, 90.5, 864, "PCIe 4.0", 32,
         _L40, note="the source reproduces NVIDIA's L40/L40S datasheet table"),
    _row("RTX 4090", "", 24, "NVIDIA", "NVIDIA GeForce RTX 4090", 2022,
         165.2, 82.6, 1008, "PCIe 4.0", 32),
    # --- NVIDIA: Hopper
    _row("H100", "SXM", 80, "NVIDIA", "NVIDIA H100 SXM5 80GB", 2022,
         989.5, 67, 3350, "NVLink 4", 450, _H100, note=_H100_NOTE),
    _row("H100", "SXM", 96, "NVIDIA", "NVIDIA H100 SXM5 96GB", 2023,
         989.5, 67, 3350, "NVLink 4", 450, _H100,
         note="unverified: a 96GB SXM5 variant (in MLPerf v4.0) is not in the source; "
              "figures of the 80GB SXM5"),
    _row("H100", "PCIe", 80, "NVIDIA", "NVIDIA H100 PCIe 80GB", 2022,
         756.5, 51, 2000, "PCIe 5.0", 64, _H100, note=_H100_NOTE),
    _row("H100", "NVL", 94, "NVIDIA", "NVIDIA H100 NVL 94GB", 2023,
         835.5, 60, 3930, "NVLink 4 bridge", 300, "https://grokipedia.com/page/210100120",
         note="unverified: only memory (94 GB), bandwidth (3.93 TB/s) and PCIe 5.0 read in the "
              "source; BF16, FP32 and NVLink 600 GB/s are NVIDIA's figures not found here"),
    _row("H200", "SXM", 141, "NVIDIA", "NVIDIA H200 SXM 141GB", 2024,
         989, 67, 4800, "NVLink 4", 450,
         "https://itkb.uw.cz/2026/06/nvidia-h200-vs-b300-precisions-cores.html",
         note="dense BF16 ~989 and NVLink 900 GB/s (both ways) from the source; FP32 as H100 "
              "SXM (same GH100 silicon, per the source)"),
    _row("H200", "NVL", 141, "NVIDIA", "NVIDIA H200 NVL 141GB", 2024,
         835.5, 60, 4800, "NVLink 4 bridge", 450),
    _row("GH200", "", 96, "NVIDIA", "NVIDIA GH200 Grace Hopper Superchip (96GB HBM3)", 2023,
         989.5, 67, 4000, "NVLink 4", 450, "https://spheron.network/blog/nvidia-gh200-guide",
         note="unverified: the source gives 96 GB HBM3 beside 480 GB LPDDR5X and NVLink-C2C "
              "900 GB/s; BF16, FP32 (H100 SXM's) and 4 TB/s are not from it"),
    _row("GH200", "", 144, "NVIDIA", "NVIDIA GH200 Grace Hopper Superchip (144GB HBM3e)", 2024,
         989.5, 67, 4900, "NVLink 4", 450),
    # --- NVIDIA: Blackwell
    _row("B200", "SXM", 180, "NVIDIA", "NVIDIA B200 SXM 180GB (HGX B200)", 2024,
         2250, 75, 7700, "NVLink 5", 900, _BLACKWELL, note=_BLACKWELL_NOTE),
    _row("B300", "SXM", 270, "NVIDIA", "NVIDIA B300 SXM 270GB (HGX B300, Blackwell Ultra)", 2025,
         2250, 75, 7700, "NVLink 5", 900, _BLACKWELL_ULTRA,
         note="per-GPU dense figures of the source's table (it gives 270 GB usable of the "
              "288 GB product, as MLPerf's 'B300-SXM-270GB' does)"),
    _row("GB200", "", 186, "NVIDIA", "NVIDIA GB200 (one Blackwell GPU of GB200 NVL72)", 2024,
         2500, 80, 8000, "NVLink 5", 900, _BLACKWELL, note=_BLACKWELL_NOTE),
    _row("GB300", "", 279, "NVIDIA", "NVIDIA GB300 (one Blackwell Ultra GPU of GB300 NVL72)",
         2025, 2500, 80, 8000, "NVLink 5", 900, _BLACKWELL_ULTRA,
         note="per-GPU dense figures of the source's table"),
    # --- AMD
    _row("MI250X", "", 128, "AMD", "AMD Instinct MI250X (OAM, two GCDs)", 2021,
         383, 47.9, 3200, "Infinity Fabric 3", 400,
         "https://zexron.com/amd-mi250-x-aldebaran-as-mcm-with-up-to-479-teraflop-s-and-560-"
         "watt-tdp",
         note="unverified: the source reproduces AMD's table (FP16/BF16 383, FP32 vector 47.9, "
              "3.2 TB/s, 8 Infinity Fabric links); 800 GB/s for the links is not in it"),
    _row("MI300X", "", 192, "AMD", "AMD Instinct MI300X", 2023,
         1307.4, 163.4, 5300, "Infinity Fabric 4", 448, _MI325X,
         note="the source gives MI325X's rates as MI300X's (same CDNA 3 compute) and MI300X's "
              "192 GB at 5.3 TB/s; 7 links x 128 GB/s both ways from "
              "https://www.emergentmind.com/topics/amd-mi300x-gpu"),
    _row("MI325X", "", 256, "AMD", "AMD Instinct MI325X", 2024,
         1307.4, 163.4, 6000, "Infinity Fabric 4", 448, _MI325X,
         note="Infinity Fabric as MI300X's (a drop-in replacement, per the source)"),
    _row("MI355X", "", 288, "AMD", "AMD Instinct MI355X", 2025,
         2516.6, 157.3, 8000, "Infinity Fabric 4", 537.6,
         "https://www.tomshardware.com/pc-components/gpus/amds-instinct-mi355x-accelerator-will-"
         "consume-1-400-watts",
         note="unverified: only memory (288 GB) and bandwidth (8 TB/s) read in the source; "
              "BF16 is half the 5 PFLOPS FP8 AMD gave at ISSCC 2026 "
              "(https://www.world-today-news.com/?p=7253162), as BF16 is half FP8 on CDNA 3; "
              "FP32 and Infinity Fabric are AMD's figures not found here"),
    _row("RX 7900 XTX", "", 24, "AMD", "AMD Radeon RX 7900 XTX", 2022,
         122.8, 61.4, 960, "PCIe 4.0", 32),
    # --- Intel
    _row("Gaudi 2", "", 96, "Intel", "Intel Gaudi 2 AI Accelerator", 2022,
         432, 11, 2460, "RoCE 24x100GbE", 300, _GAUDI,
         note="unverified: FP32 not in the source (Intel's Hot Chips 2024 slides: BF16 432, "
              "96 GB, 2.46 TB/s, NIC 4.8 Tb/s both ways)"),
    _row("Gaudi 3", "", 128, "Intel", "Intel Gaudi 3 AI Accelerator (OAM)", 2024,
         1835, 28.7, 3670, "RoCE 24x200GbE", 600, _GAUDI,
         note="unverified: FP32 not in the source; 28.7 is its BF16 vector rate (BF16 matrix "
              "1835, 128 GB, 3.67 TB/s, NIC 1200 GB/s both ways)"),
)

# Model names as they appear in vendor strings, most specific first (GB200 before B200,
# L40S before L40, A100 before A10G before A10: word boundaries keep them apart).
_MODELS: tuple[tuple[str, str], ...] = (
    ("GB300", r"GB300"), ("GB200", r"GB200"), ("GH200", r"GH200"),
    ("B300", r"B300"), ("B200", r"B200"), ("H200", r"H200"), ("H100", r"H100"),
    ("A100", r"A100"), ("A10G", r"A10G"), ("A10", r"A10"), ("A30", r"A30"),
    ("L40S", r"L40S"), ("L40", r"L40"), ("L4", r"L4"), ("T4", r"T4"),
    ("V100", r"V100S?"), ("P100", r"P100"), ("K80", r"K80"), ("M60", r"M60"),
    ("RTX A5000", r"RTX A5000"), ("RTX 4090", r"RTX 4090"), ("RX 7900 XTX", r"RX 7900 XTX"),
    ("MI355X", r"MI355X"), ("MI325X", r"MI325X"), ("MI300X", r"MI300X"), ("MI250X", r"MI250X"),
    ("Gaudi 3", r"GAUDI ?3"), ("Gaudi 2", r"GAUDI ?2"),
)
_MODEL_RES = tuple((model, re.compile(rf"\b{pattern}\b")) for model, pattern in _MODELS)
_FORMS = (("PCIe", re.compile(r"\bPCIE\b")), ("NVL", re.compile(r"\bNVL\b")),
          ("SXM", re.compile(r"\b(SXM\d?|MEGA|HGX)\b")))
# a size in the name: "80GB", "80 GB", "80G", "141GB"; a Grace superchip's "480GB" is the CPU's
_NAME_MEMORY = re.compile(r"\b(\d{2,3})\s*(?:GB|G|GIB)\b")
_GRACE_CPU_MEMORY_GB = 480.0


def _normal(name: str) -> str:
    """Upper case, (R)/(TM) marks dropped, punctuation as spaces: "Intel(R) Gaudi(R) 2" ->
    "INTEL GAUDI 2", "nvidia-tesla-a100" -> "NVIDIA TESLA A100"."""
    text = re.sub(r"\((?:R|TM)\)|[®™]", " ", name, flags=re.I)
    return " ".join(re.sub(r"[^A-Za-z0-9.]+", " ", text).upper().split())


def _model_of(text: str) -> str | None:
    return next((model for model, pattern in _MODEL_RES if pattern.search(text)), None)


def _memory_in_name(text: str, model: str) -> float | None:
    sizes = [float(m) for m in _NAME_MEMORY.findall(text)]
    if model in ("GH200", "GB200", "GB300"):
        sizes = [s for s in sizes if s != _GRACE_CPU_MEMORY_GB]
    return sizes[0] if sizes else None


def _closest(rows: list[GpuSpec], memory_gb: float) -> GpuSpec:
    """The row whose memory is nearest (in ratio) to what the name or API says: usable memory
    is a little under the product's (an 80 GB H100 shows 79.6 GiB, a 141 GB H200 140.4)."""
    return min(rows, key=lambda r: abs(math.log(r.memory_gb / memory_gb)))


def gpu_spec(name: str, memory_gb: float | None = None) -> GpuSpec | None:
    """The GPU a vendor string names, or None. ``memory_gb`` (from an API beside the name, e.g.
    AWS's SizeInMiB / 1024) picks between memory variants when the name does not say."""
    text = _normal(name or "")
    model = _model_of(text)
    if model is None:
        return None
    rows = [r for r in SPECS if r.model == model]
    form = next((f for f, pattern in _FORMS if pattern.search(text)), None)
    if form is not None and any(r.form == form for r in rows):
        rows = [r for r in rows if r.form == form]
    memory = _memory_in_name(text, model) or memory_gb
    if memory is not None and memory > 0:
        return _closest(rows, memory)
    return rows[0]


def spec_of_key(key: str) -> GpuSpec | None:
    """The row of a canonical key ("H100-SXM-80GB", as GpuSpec.key and [[catalog]] rows hold)."""
    return next((s for s in SPECS if s.key == key), None)
