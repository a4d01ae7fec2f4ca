"""Re-make the MLPerf excerpts in this folder from a checkout of the results repositories.

    python tests/data/mlperf/make_excerpts.py /path/to/results

where /path/to/results holds v3.1/ and v4.0/ laid out as mlcommons/training_results_v3.1 and
training_results_v4.0 (<submitter>/results/<system>/<benchmark>/result_N.txt,
<submitter>/systems/<system>.json). Each excerpt is the source file with whole lines removed
(KEEP lists the 1-based line ranges kept, inclusive); no line is edited. The systems JSON is
copied whole. README.md says where each came from and why its lines were cut where they were.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# release, path under the release, kept line ranges (inclusive, 1-based)
KEEP: list[tuple[str, str, list[tuple[int, int]]]] = [
    ("v4.0", "Oracle/results/1xBM.GPU.H100.8/llama2_70b_lora/result_1.txt",
     [(1, 4), (703, 729), (763, 802), (817, 820)]),
    ("v3.1", "Azure/results/ND_H100_v5_pytorch/bert/result_0.txt",
     [(1, 2), (10, 10), (17, 20), (49, 75), (78, 79), (477, 489), (526, 529), (532, 578)]),
    ("v4.0", "ASUSTeK/results/ESC_N8A-E12/gnn/result_4.txt", [(1, 10**6)]),
    ("v4.0", "JuniperNetworks/results/a100_n8_ngc23.09_merlin_hugectr/dlrm_dcnv2/result_9.txt",
     [(1, 10**6)]),
    ("v4.0", "Oracle/results/9xBM.GPU.H100.8/unet3d/result_11.txt",
     [(248, 254), (400, 412), (462, 478), (812, 843), (1112, 1115)]),
    ("v4.0", "Oracle/results/1xBM.GPU.H100.8/ssd/result_1.txt",
     [(1, 4), (16, 16), (60, 78), (195, 200), (242, 247), (480, 482), (507, 507), (521, 522),
      (750, 752), (761, 761), (765, 766), (996, 998), (1007, 1007), (1019, 1020),
      (1250, 1252), (1261, 1261), (1265, 1278), (1363, 1364)]),
    ("v3.1", "NVIDIA/results/eos_ngc23.09_mxnet/resnet/result_2.txt",
     [(1, 9), (171, 208), (328, 352)]),
    ("v4.0", "tinycorp/results/tinybox_green/resnet/result_0.txt", [(1, 43), (110, 136)]),
    ("v4.0", "Quanta_Cloud_Technology/results/D74H-7U/stable_diffusion/result_3.txt",
     [(1, 49), (120, 125), (140, 156)]),
    ("v3.1", "Dell/results/XE9680x8H100-SXM-80GB/stable_diffusion/result_2.txt",
     [(1, 18), (26, 49), (185, 193), (222, 250)]),
    ("v4.0", "NVIDIA/results/l40s_n2_ngc24.04_pytorch/ssd/result_0.txt", [(1, 22), (112, 157)]),
    ("v4.0", "HPE/results/HPE-Cray-XD670-Gen11-H100-SXM5-80GB_n1_pytorch_24.04/ssd/result_2.txt",
     [(11, 11), (62, 73), (77, 82), (181, 186), (228, 231), (233, 233), (420, 422), (446, 446),
      (459, 460), (643, 645), (653, 653), (664, 665), (850, 852), (867, 867), (871, 872),
      (1057, 1059), (1067, 1067), (1078, 1082), (1084, 1091)]),
]


def excerpt(text: str, ranges: list[tuple[int, int]]) -> str:
    lines = text.split("\n")  # only newlines: some logs hold carriage returns (progress bars)
    lines = [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    return "".join(line for n, line in enumerate(lines, 1)
                   if any(a <= n <= b for a, b in ranges))


def main(root: Path, only: str = "") -> None:
    for release, rel, ranges in KEEP:
        if only and only not in f"{release}/{rel}":
            continue
        src = root / release / rel
        dst = HERE / release / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(excerpt(src.read_bytes().decode("utf-8"), ranges).encode("utf-8"))
        parts = Path(rel).parts  # submitter/results/system/benchmark/result_N.txt
        system = Path(release, parts[0], "systems", f"{parts[2]}.json")
        (HERE / system).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / system, HERE / system)
        print(f"{dst.stat().st_size:7d} {release}/{rel}")


if __name__ == "__main__":
    # an optional second argument re-makes only the excerpts whose path holds it
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/mlp"), *sys.argv[2:3])
