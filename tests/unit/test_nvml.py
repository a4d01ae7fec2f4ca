"""NVML's memory as nvidia-smi shows it (v2: the driver's own reservation left out), and v1 where
the binding or driver has nothing newer. On an H200 the two differed by the same 615 MiB in
every sample (benchmarks/corpus/runs-gpu-h200, RESULTS §9)."""

from __future__ import annotations

from types import SimpleNamespace as NS

from probecast.core.agent.sampler import Nvml

GIB = 2**30
RESERVED = 615 * 2**20


class _Binding:
    """pynvml's shape: module-level functions taking a handle, and nvmlMemory_v2 in new ones."""

    def __init__(self, v2: bool) -> None:
        self.calls: list[object] = []
        if v2:
            self.nvmlMemory_v2 = 0x02000028

    def nvmlDeviceGetCount(self) -> int:
        return 1

    def nvmlDeviceGetHandleByIndex(self, i: int) -> int:
        return i

    def nvmlDeviceGetUtilizationRates(self, h: int) -> NS:
        return NS(gpu=71, memory=10)

    def nvmlDeviceGetName(self, h: int) -> bytes:
        return b"NVIDIA H200"

    def nvmlDeviceGetMemoryInfo(self, h: int, version: int | None = None) -> NS:
        self.calls.append(version)
        used = 2 * GIB
        if version is None:  # v1: the driver's reservation counted as used
            return NS(used=used + RESERVED, total=140 * GIB, free=0)
        return NS(used=used, reserved=RESERVED, total=140 * GIB, free=0)


class _OldBinding(_Binding):
    def nvmlDeviceGetMemoryInfo(self, h: int) -> NS:  # type: ignore[override]
        self.calls.append(None)
        return NS(used=2 * GIB + RESERVED, total=140 * GIB, free=0)


def test_memory_used_is_v2_where_the_binding_has_it() -> None:
    nv = _Binding(v2=True)
    rows = Nvml(nv).read()
    assert rows is not None
    assert rows[0]["mem_used"] == 2048.0  # MiB, as nvidia-smi's memory.used
    assert nv.calls == [nv.nvmlMemory_v2]


def test_an_old_binding_falls_back_to_v1() -> None:
    for nv in (_Binding(v2=False), _OldBinding(v2=True)):
        rows = Nvml(nv).read()
        assert rows is not None
        assert rows[0]["mem_used"] == 2048.0 + 615.0
