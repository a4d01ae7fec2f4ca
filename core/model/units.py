"""Quantities as people and vendors write them: GPU memory sizes with their unit.

Memory capacities are binary even where vendors write "GB": an "80 GB" H100 holds 80 GiB
(nvidia-smi shows 81559 MiB of it usable), so GB and GiB both count 1024 MiB here, as NVML,
nvidia-smi and probecast's ``memory_mb`` fields do. MiB/MB are taken as MiB.
"""

from __future__ import annotations

import re

_MIB_PER_UNIT = {"": None, "M": 1.0, "MB": 1.0, "MIB": 1.0, "G": 1024.0, "GB": 1024.0,
                 "GIB": 1024.0, "T": 1024.0 ** 2, "TB": 1024.0 ** 2, "TIB": 1024.0 ** 2}
# "183359 MiB", "80 GB", "80G", "24 GiB", "1.5 TB", "2x 24 GB" (a count of GPUs, then each one's),
# "141 GB (x8)", "80 GB HBM3": what follows the unit is not read
_MEMORY = re.compile(r"^\s*(?:\d+\s*[x×]\s*)?(\d+(?:\.\d+)?)\s*([a-z]*)(?![a-z0-9])", re.I)


def memory_mib(text: object) -> float | None:
    """MiB in a memory size written with its unit ("183359 MiB", "80 GB", "24 GiB", "1 TB");
    None for text that is no size (empty, "N/A") or has no unit this knows: a bare number is
    ambiguous (MLPerf systems write both MiB and GB), so it is not guessed."""
    match = _MEMORY.match(str(text if text is not None else ""))
    if not match:
        return None
    scale = _MIB_PER_UNIT.get(match.group(2).upper())
    return None if scale is None else float(match.group(1)) * scale


def memory_gb(text: object) -> float | None:
    """The same size in GB as vendors write it (1 GB = 1024 MiB; "183359 MiB" -> 179.06)."""
    mib = memory_mib(text)
    return None if mib is None else mib / 1024.0
