"""``[[catalog]]`` in probecast.toml: instances of the user's own (on-prem boxes, other clouds)
added to the catalog that the ranking, the memory forecast and the prediction read.

    [[catalog]]
    name = "lab-dgx"                # the instance name logs and --predict use
    gpu = "NVIDIA H100 80GB HBM3"   # as a vendor writes it (nvidia-smi, a cloud API, MLPerf)
    gpus = 8                        # per node
    nodes = 2                       # default 1
    gpu_memory = "81559 MiB"        # with its unit: "80 GB", "183359 MiB" (default: the GPU's)
    price_per_hour = 40.0           # USD for all the nodes together; optional

Each row is checked here (config.py calls ``checked_catalog``); a bad value names the file, the
line and the key like every config error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

import msgspec

from ..model.predict.gpus import SPECS, gpu_spec
from ..model.pricing import Catalog, InstanceType
from ..model.units import memory_mib

Fail = Callable[[tuple[str | int, ...], str], Exception]
_NAME = r"^[A-Za-z0-9_.:@-]{1,64}$"
_MAX_GPU_MEMORY_MIB = 4 * 1024 * 1024  # 4 TiB: a size past it is a unit mistake


class CatalogRow(msgspec.Struct, forbid_unknown_fields=True):
    """One ``[[catalog]]`` table as written."""

    name: Annotated[str, msgspec.Meta(pattern=_NAME,
                                      description="letters, digits and _ . : @ - (up to 64)")]
    gpu: str
    gpus: Annotated[int, msgspec.Meta(gt=0, le=1024)]
    nodes: Annotated[int, msgspec.Meta(gt=0, le=100_000)] = 1
    gpu_memory: str | float | None = None  # a number is taken to say it lacks its unit
    price_per_hour: Annotated[float, msgspec.Meta(ge=0, le=1e6)] | None = None


@dataclass(frozen=True)
class OwnInstance:
    """A checked ``[[catalog]]`` row: the GPU resolved against the GPU table."""

    name: str
    gpu: str  # as the user wrote it
    gpu_key: str  # the GPU table's row (predict/gpus.py)
    gpus: int  # per node
    nodes: int
    gpu_memory_gb: float  # per GPU (1 GB = 1024 MiB, as GPU memory is written)
    price_per_hour: float | None
    memory_from: str  # "config" or "GPU table"

    @property
    def gpu_count(self) -> int:
        return self.gpus * self.nodes


def checked_catalog(rows: list[CatalogRow], fail: Fail) -> list[OwnInstance]:
    """The rows checked in order: the first problem raises with its key."""
    out = [_checked_row(row, i, fail) for i, row in enumerate(rows)]
    names = [o.name for o in out]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise fail(("catalog", i, "name"), f"catalog[{i}].name: {name!r} is already the name "
                                               "of another [[catalog]] row")
    return out


def _checked_row(row: CatalogRow, i: int, fail: Fail) -> OwnInstance:
    spec = gpu_spec(row.gpu)
    if spec is None:
        known = ", ".join(sorted({s.model for s in SPECS}))
        raise fail(("catalog", i, "gpu"), f"catalog[{i}].gpu: no GPU known as {row.gpu!r} "
                                          f"(write it as nvidia-smi or the cloud does; known: "
                                          f"{known})")
    if row.gpu_memory is None:
        memory_gb, memory_from = spec.memory_gb, "GPU table"
    else:
        mib = memory_mib(row.gpu_memory)
        if mib is None or not 0 < mib <= _MAX_GPU_MEMORY_MIB:
            raise fail(("catalog", i, "gpu_memory"),
                       f"catalog[{i}].gpu_memory must be one GPU's memory with its unit "
                       f"(\"80 GB\", \"183359 MiB\", \"24 GiB\"), got {row.gpu_memory!r}")
        memory_gb, memory_from = mib / 1024.0, "config"
        spec = gpu_spec(row.gpu, memory_gb) or spec  # the memory picks the variant (A100 40/80)
    return OwnInstance(row.name, row.gpu, spec.key, row.gpus, row.nodes, memory_gb,
                       row.price_per_hour, memory_from)


def with_own_instances(catalog: Catalog, own: list[OwnInstance], where: str) -> Catalog:
    """``catalog`` with the user's instances added (one of the same name is replaced: the user
    describes their own machine best)."""
    if not own:
        return catalog
    rows = {i.instance: i for i in catalog}
    for o in own:
        rows[o.name] = InstanceType(
            instance=o.name, provider="own", gpu_model=o.gpu, gpu_count=o.gpu_count,
            gpu_memory_gb=o.gpu_memory_gb, price_per_hour=o.price_per_hour,
            source=f"[[catalog]]{where}" if o.price_per_hour is not None else "",
            billing="exact",
            note=f"{o.nodes} node(s) x {o.gpus} {o.gpu} ({o.gpu_key}); GPU memory from the "
                 f"{o.memory_from}")
    return Catalog(list(rows.values()), catalog.date, catalog.source)
