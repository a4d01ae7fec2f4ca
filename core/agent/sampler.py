"""Hardware sampler: GPU (NVML where nvidia-ml-py is installed, else nvidia-smi), CPU, RSS and swap,
about once a second. Stdlib only otherwise.

Nothing here runs on the program's way to its first step or in its steps: NVML is opened on the
sampler's own thread, and the devices `start` names are read on a thread of their own while the
program starts (``prefetch_devices``, from the hook).

Two switches, internal (benchmarks/overhead.py turns the agent's parts off one at a time to
measure what each costs the job): PROBECAST_SAMPLER=0 no sampler thread (hook.py),
PROBECAST_NVML=0 no NVML and no nvidia-smi, here and for `start`'s devices.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from typing import Any

from .emit import Emitter

NVIDIA_QUERY = "utilization.gpu,memory.used,memory.total,name"
ENV_SAMPLER = "PROBECAST_SAMPLER"
ENV_NVML = "PROBECAST_NVML"


def switched_off(name: str) -> bool:
    return os.environ.get(name, "") == "0"


def gpu_tool() -> str | None:
    """nvidia-smi where the GPU may be read (not switched off) and it is installed."""
    return None if switched_off(ENV_NVML) else shutil.which("nvidia-smi")


def read_nvidia_smi(binary: str = "nvidia-smi") -> list[dict[str, Any]] | None:
    """One row per GPU: util %, memory used/total MiB, name. None when it cannot be read."""
    try:
        out = subprocess.run(
            [binary, f"--query-gpu={NVIDIA_QUERY}", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=5, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_nvidia_smi(out)


def parse_nvidia_smi(text: str) -> list[dict[str, Any]]:
    rows = []
    for line in text.strip().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 3:
            continue

        def num(s: str) -> float | None:
            try:
                return float(s)
            except ValueError:  # "[N/A]" on some boards
                return None

        rows.append({"util": num(parts[0]), "mem_used": num(parts[1]),
                     "mem_total": num(parts[2]), "name": parts[3] if len(parts) > 3 else ""})
    return rows


class Nvml:
    """GPU readings through NVML (nvidia-ml-py's ``pynvml``): a library call per sample instead of
    starting nvidia-smi every second."""

    def __init__(self, nv: Any) -> None:
        self.nv = nv
        self.handles = [nv.nvmlDeviceGetHandleByIndex(i) for i in range(nv.nvmlDeviceGetCount())]

    @classmethod
    def open(cls) -> Nvml | None:
        """None where there is no pynvml, no driver or no GPU (or NVML is switched off)."""
        if switched_off(ENV_NVML):
            return None
        try:
            import pynvml  # type: ignore[import-not-found, import-untyped, unused-ignore]

            pynvml.nvmlInit()
            nvml = cls(pynvml)
        except Exception:  # noqa: BLE001 - ImportError, NVMLError_LibraryNotFound, ...
            return None
        return nvml if nvml.handles else None

    def _memory(self, handle: Any) -> Any:
        """Memory info as nvidia-smi shows it: NVML's v2, whose ``used`` leaves out what the
        driver reserves for itself. v1's counts it (615 MiB on an H200, driver 580: the same
        offset against nvidia-smi in every sample of benchmarks/corpus/runs-gpu-h200); an older
        binding or driver has only v1."""
        v2 = getattr(self.nv, "nvmlMemory_v2", None)
        if v2 is not None:
            try:
                return self.nv.nvmlDeviceGetMemoryInfo(handle, version=v2)
            except Exception:  # noqa: BLE001 - TypeError (old binding), NVMLError (old driver)
                pass
        return self.nv.nvmlDeviceGetMemoryInfo(handle)

    def read(self) -> list[dict[str, Any]] | None:
        rows = []
        try:
            for h in self.handles:
                util = self.nv.nvmlDeviceGetUtilizationRates(h)
                mem = self._memory(h)
                name = self.nv.nvmlDeviceGetName(h)
                rows.append({"util": float(util.gpu), "mem_used": round(mem.used / 2**20, 1),
                             "mem_total": round(mem.total / 2**20, 1),
                             "name": name.decode() if isinstance(name, bytes) else str(name)})
        except Exception:  # noqa: BLE001 - a GPU fell off the bus: no sample this time
            return None
        return rows


def _cpu_times() -> tuple[int, int] | None:
    try:
        with open("/proc/stat") as fh:
            parts = fh.readline().split()[1:]
        values = [int(p) for p in parts]
        idle = values[3] + (values[4] if len(values) > 4 else 0)
        return sum(values), idle
    except (OSError, ValueError, IndexError):
        return None


def _status_kb(path: str, key: str) -> float | None:
    try:
        with open(path) as fh:
            for line in fh:
                if line.startswith(key):
                    return float(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def read_swap_used_mb() -> float | None:
    total = _status_kb("/proc/meminfo", "SwapTotal:")
    free = _status_kb("/proc/meminfo", "SwapFree:")
    if total is None or free is None:
        return None
    return round((total - free) / 1024, 1)


class HardwareSampler(threading.Thread):
    """Emits ``sample`` events until stopped. Missing sources are skipped, each noted once."""

    def __init__(self, emitter: Emitter, interval: float = 1.0, nvidia_smi: str | None = None,
                 nvml: Nvml | None = None):
        super().__init__(name="probecast-sampler", daemon=True)
        self.emitter = emitter
        self.interval = interval
        self._stop_event = threading.Event()
        self.nvml = nvml
        self._open_nvml = nvml is None and not nvidia_smi  # on the thread: NVML's init is slow
        self.nvidia_smi = nvidia_smi or gpu_tool()
        self._noted: set[str] = set()
        self._last_cpu = _cpu_times()

    def _note_once(self, key: str, msg: str) -> None:
        if key not in self._noted:
            self._noted.add(key)
            self.emitter.log("info", msg)

    def sample(self) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        if self.nvml is not None or self.nvidia_smi:
            rows = self.nvml.read() if self.nvml is not None else read_nvidia_smi(self.nvidia_smi or "")
            if rows is None:
                self._note_once("gpu", "sampler: " + ("NVML" if self.nvml else "nvidia-smi")
                                + " did not answer; no GPU samples")
            else:
                fields["gpu_util"] = [r["util"] for r in rows]
                fields["gpu_mem_mb"] = [r["mem_used"] for r in rows]
                fields["gpu_mem_total_mb"] = [r["mem_total"] for r in rows]
        else:
            self._note_once("gpu", "sampler: no nvidia-smi on this host; no GPU samples")
        cpu = _cpu_times()
        if cpu and self._last_cpu:
            total = cpu[0] - self._last_cpu[0]
            idle = cpu[1] - self._last_cpu[1]
            if total > 0:
                fields["cpu_util"] = round(100.0 * (total - idle) / total, 1)
        elif cpu is None:
            self._note_once("cpu", "sampler: /proc/stat unreadable; no CPU samples")
        self._last_cpu = cpu
        rss = _status_kb(f"/proc/{os.getpid()}/status", "VmRSS:")
        if rss is not None:
            fields["rss_mb"] = round(rss / 1024, 1)
        swap = read_swap_used_mb()
        if swap is not None:
            fields["swap_mb"] = swap
        return fields

    def run(self) -> None:
        if self._open_nvml:
            self.nvml = Nvml.open()
        while not self._stop_event.wait(self.interval):
            fields = self.sample()
            if fields and not self.emitter.ended:
                self.emitter.emit("sample", **fields)

    def stop(self) -> None:
        self._stop_event.set()


_prefetched: list[list[dict[str, Any]]] = []  # the devices, read while the program started
_prefetch: threading.Thread | None = None


def prefetch_devices() -> None:
    """Read the devices on a thread while the program imports and loads its data: NVML's init
    or an nvidia-smi run (a fraction of a second, more on a busy host) is then off the path
    from the program's first step to its second, where `start` needs them."""
    global _prefetch
    if _prefetch is None:
        _prefetch = threading.Thread(target=lambda: _prefetched.append(read_devices()),
                                     name="probecast-devices", daemon=True)
        _prefetch.start()


def describe_devices() -> list[dict[str, Any]]:
    """The `start.devices` list: GPUs from NVML or nvidia-smi, else the CPU (read ahead where
    ``prefetch_devices`` ran)."""
    if _prefetch is not None:
        _prefetch.join()
        if _prefetched:
            return _prefetched[0]
    return read_devices()


def read_devices() -> list[dict[str, Any]]:
    nvml = Nvml.open()
    rows = nvml.read() if nvml is not None else None
    if not rows:
        rows = read_nvidia_smi() if gpu_tool() else None
    if rows:
        return [{"kind": "gpu", "name": r["name"], "memory_mb": r["mem_total"]} for r in rows]
    name = "cpu"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return [{"kind": "cpu", "name": f"{name} ({cores} cores usable)"}]
