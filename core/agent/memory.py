"""Memory on the probe host: the peaks a probe reached, the limits that applied, and whether the
program ran out of memory. Stdlib only; a framework is asked only where the program imported it.

Three places use it. The hook, inside the training process, writes a ``memory`` event when
training ends (``ProbeSession.mark_done``) and when the program's own out-of-memory error reaches
the top (``hook._quiet_probe_exits``): the device's peaks are only readable there (PyTorch's
``max_memory_allocated``/``reserved``, TensorFlow's ``get_memory_info`` peak, else NVML). The
launcher watches the whole process group's resident memory from outside (``GroupWatch``) and,
after the program exits, writes the group's peak and decides whether a death by signal was the
kernel's OOM killer or a memory limit (``killed_by_memory``).

Limits, where the host lets us see them: an address-space limit (``RLIMIT_AS``: ``ulimit -v``,
``prlimit --as``; it counts virtual memory, so the peak compared with it is the largest
process's peak virtual size), a cgroup's ``memory.max`` (v2) or ``memory.limit_in_bytes`` (v1),
else the machine's RAM (``MemTotal``).
"""

from __future__ import annotations

import os
import re
import resource
import signal
import sys
import time
from collections.abc import Iterable
from typing import Any

from .limits import ADDRESS_SPACE, MB, _read, host_limit

# Exception classes that are out-of-memory errors by name (the program's copy of a framework may
# not be importable here): torch.cuda.OutOfMemoryError, MemoryError and NumPy's
# _ArrayMemoryError ("Unable to allocate ..."), TensorFlow's ResourceExhaustedError.
OOM_NAMES = ("OutOfMemoryError", "MemoryError", "ResourceExhaustedError", "_ArrayMemoryError")
# ... and by message: PyTorch's CUDA and CPU allocators ("CUDA out of memory", "DefaultCPUAllocator:
# can't allocate memory"), TensorFlow and XLA ("OOM when allocating tensor", "RESOURCE_EXHAUSTED:
# Out of memory"), NumPy, C++ (std::bad_alloc), TF's allocator log ("ran out of memory").
OOM_TEXT = ("out of memory", "can't allocate memory", "cannot allocate memory",
            "oom when allocating", "unable to allocate", "std::bad_alloc", "ran out of memory",
            "resource_exhausted", "failed to allocate memory")
ENFORCE = re.compile(r"^\[enforce fail at [^\]]*\]\s*(err == 0\.\s*)?")
FATAL_SIGNALS = (signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS)
NEAR_LIMIT = 0.9  # a peak this close to the limit, and a death by signal: the limit killed it


# ---- was it out of memory? ------------------------------------------------------------------

def oom_text(text: str) -> bool:
    low = text.lower()
    return any(pattern in low for pattern in OOM_TEXT)


def out_of_memory(exc: BaseException | None) -> str | None:
    """``Kind: message`` of an out-of-memory error in ``exc`` or the errors it came from (a
    framework wraps the allocator's error in its own); None when it is not one."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        names = {cls.__name__ for cls in type(exc).__mro__}
        text = str(exc)
        if names & set(OOM_NAMES) or oom_text(text):
            lines = [line.strip() for line in text.splitlines() if line.strip()]
            said = next((line for line in lines if oom_text(line)), lines[0] if lines else "")
            said = ENFORCE.sub("", said)  # PyTorch's "[enforce fail at alloc_cpu.cpp:127] err == 0."
            return f"{type(exc).__name__}: {said}"[:300]
        exc = exc.__cause__ or exc.__context__
    return None


def oom_in_output(lines: Iterable[str]) -> str | None:
    """The last line of the program's output that names an allocation failure, if any."""
    found = None
    for line in lines:
        if oom_text(line):
            found = line.strip()[:300]
    return found


# ---- peaks ------------------------------------------------------------------------------------

def _status_mb(pid: int | str, keys: tuple[str, ...]) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in (_read(f"/proc/{pid}/status") or "").splitlines():
        key, _, rest = line.partition(":")
        if key in keys:
            try:
                out[key] = float(rest.split()[0]) / 1024
            except (IndexError, ValueError):
                pass
    return out


def process_peaks(pid: int | str = "self") -> tuple[float | None, float | None]:
    """(peak RSS, peak virtual size) of one process, in MB (VmHWM, VmPeak)."""
    got = _status_mb(pid, ("VmHWM", "VmPeak"))
    return got.get("VmHWM"), got.get("VmPeak")


class GroupWatch:
    """The training processes' memory, watched from the launcher: the peak of their summed RSS
    and the largest single process's peak RSS and virtual size. Members of the process group are
    found again every ``rescan`` seconds (a torchrun or DataLoader worker starts late); each poll
    reads only their /proc status files."""

    def __init__(self, rescan: float = 1.0) -> None:
        self.rescan = rescan
        self.pids: set[int] = set()
        self._scanned = 0.0
        self.rss_peak_mb = 0.0  # the group's RSS, summed, at its highest
        self.hwm_peak_mb = 0.0  # one process's peak RSS (VmHWM), the highest
        self.vm_peak_mb = 0.0  # one process's peak virtual size (VmPeak), the highest
        self.polls = 0

    def _scan(self, pgid: int) -> None:
        try:
            names = os.listdir("/proc")
        except OSError:
            return
        for name in names:
            if not name.isdigit():
                continue
            stat = _read(f"/proc/{name}/stat")
            if not stat:
                continue
            try:
                fields = stat.rsplit(")", 1)[1].split()
                if int(fields[2]) == pgid:  # pgrp, the 5th field
                    self.pids.add(int(name))
            except (IndexError, ValueError):
                continue

    def poll(self, pgid: int) -> None:
        now = time.monotonic()
        if now - self._scanned >= self.rescan or not self.pids:
            self._scanned = now
            self.pids.add(pgid)
            self._scan(pgid)
        total = 0.0
        for pid in list(self.pids):
            got = _status_mb(pid, ("VmRSS", "VmHWM", "VmPeak"))
            if not got:
                self.pids.discard(pid)
                continue
            total += got.get("VmRSS", 0.0)
            self.hwm_peak_mb = max(self.hwm_peak_mb, got.get("VmHWM", 0.0))
            self.vm_peak_mb = max(self.vm_peak_mb, got.get("VmPeak", 0.0))
        self.rss_peak_mb = max(self.rss_peak_mb, total)
        self.polls += 1

    def host_peak_mb(self) -> float | None:
        """The group's peak RSS: the watched sum, or the largest process's own high-water mark
        (the kernel's, exact even between polls), or what the reaped children reached."""
        try:  # ru_maxrss: KB on Linux; the largest reaped descendant's peak RSS
            children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        except (OSError, ValueError):
            children = 0.0
        peak = max(self.rss_peak_mb, self.hwm_peak_mb, children)
        return round(peak, 1) if peak > 0 else None


# ---- the device (inside the training process) -------------------------------------------------

def _torch_cuda() -> dict[str, Any] | None:
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        cuda = torch.cuda
        if not cuda.is_available() or not cuda.is_initialized():
            return None
        i = cuda.current_device()
        total = cuda.get_device_properties(i).total_memory / MB
        return {"device": f"cuda:{i} {cuda.get_device_name(i)}",
                "device_peak_mb": round(cuda.max_memory_allocated(i) / MB, 1),
                "device_reserved_mb": round(cuda.max_memory_reserved(i) / MB, 1),
                "device_total_mb": round(total, 1),
                "source": "torch.cuda max_memory_allocated/reserved"}
    except Exception:  # noqa: BLE001 - a broken CUDA context: no device reading
        return None


def _tensorflow_gpu() -> dict[str, Any] | None:
    tf = sys.modules.get("tensorflow")
    if tf is None:
        return None
    try:
        if not tf.config.list_logical_devices("GPU"):
            return None
        info = tf.config.experimental.get_memory_info("GPU:0")
        name, total = _nvml_first()[:2]
        return {"device": f"GPU:0 {name}".strip(),
                "device_peak_mb": round(info["peak"] / MB, 1),
                "device_total_mb": total,
                "source": "tf.config.experimental.get_memory_info peak"}
    except Exception:  # noqa: BLE001
        return None


def _nvml_first() -> tuple[str, float | None, float | None]:
    """(name, total MB, used MB) of the first GPU through NVML or nvidia-smi; blanks if none."""
    from .sampler import Nvml, read_nvidia_smi

    nvml = Nvml.open()
    rows = nvml.read() if nvml is not None else None
    if not rows:
        import shutil

        rows = read_nvidia_smi() if shutil.which("nvidia-smi") else None
    if not rows:
        return "", None, None
    return str(rows[0]["name"]), rows[0]["mem_total"], rows[0]["mem_used"]


def device_memory() -> dict[str, Any]:
    """The device the framework trained on and its peaks: PyTorch's CUDA allocator, TF's, else
    NVML's memory in use now (a GPU the program used without either), else the CPU."""
    for read in (_torch_cuda, _tensorflow_gpu):
        got = read()
        if got is not None:
            return got
    name, total, used = _nvml_first()
    if name and used is not None:
        return {"device": f"gpu0 {name}", "device_peak_mb": used, "device_total_mb": total,
                "source": "NVML memory used"}
    return {"device": "cpu", "source": ""}


def measure(device: bool = True) -> dict[str, Any]:
    """A ``memory`` event's fields for this process: the device's peaks (``device``: ask the
    framework), this process's peak RSS and virtual size, the host limit."""
    fields: dict[str, Any] = device_memory() if device else {"device": "cpu", "source": ""}
    hwm, vm = process_peaks()
    if hwm is not None:
        fields["host_peak_mb"] = round(hwm, 1)
    if vm is not None:
        fields["host_vm_peak_mb"] = round(vm, 1)
    return with_limit(fields, "/proc VmHWM/VmPeak")


def say_peaks(emitter: Any) -> None:
    """The ``memory`` event of a training process whose training ended: never an error."""
    try:
        emitter.emit("memory", **measure())
    except Exception:  # noqa: BLE001 - a reading that fails is no reason to stop a program
        pass


def with_limit(fields: dict[str, Any], host_source: str) -> dict[str, Any]:
    limit, kind, where = host_limit()
    if limit is not None:
        fields["host_limit_mb"] = round(limit, 1)
        fields["host_limit_kind"] = kind
    sources = [s for s in (fields.get("source", ""), f"host: {host_source}",
                           f"limit: {where}" if where else "") if s]
    fields["source"] = "; ".join(sources)
    return fields


def group_measure(watch: GroupWatch) -> dict[str, Any]:
    """The launcher's ``memory`` event: the process group's peaks, the host limit."""
    fields: dict[str, Any] = {"device": "cpu", "source": ""}
    peak = watch.host_peak_mb()
    if peak is not None:
        fields["host_peak_mb"] = peak
    if watch.vm_peak_mb > 0:
        fields["host_vm_peak_mb"] = round(watch.vm_peak_mb, 1)
    return with_limit(fields, "the process group's RSS and each process's VmHWM/VmPeak")


def merged(hook: dict[str, Any], watch: GroupWatch) -> dict[str, Any]:
    """The probe's memory, whole (the launcher's last `memory` event): the training process's
    device readings (its latest event) with the process group's host peaks - the hook sees one
    process, the group holds the workers and ranks too."""
    fields = group_measure(watch)
    hook = {k: v for k, v in hook.items() if k not in ("ev", "t")}
    for key in ("host_peak_mb", "host_vm_peak_mb"):
        if hook.get(key) is not None:
            fields[key] = max(fields.get(key) or 0.0, hook[key])
    device_source = [part for part in str(hook.get("source", "")).split("; ")
                     if part and not part.startswith(("host:", "limit:"))]
    fields["source"] = "; ".join([*device_source, fields["source"]])
    return {**hook, **fields, "device": hook.get("device") or fields["device"]}


# ---- saying it --------------------------------------------------------------------------------

def where_it_ran(fields: dict[str, Any]) -> str:
    """The device and its memory, for a does-not-fit reason: "cuda:0 NVIDIA A10G (22731 MB)",
    "cpu (limit 2048 MB)"."""
    device = str(fields.get("device") or "cpu")
    total = fields.get("device_total_mb")
    if device != "cpu" and total:
        return f"{device} ({total:.0f} MB)"
    limit = fields.get("host_limit_mb")
    if limit:
        what = "address-space limit" if fields.get("host_limit_kind") == ADDRESS_SPACE else "limit"
        return f"{device} ({what} {limit:.0f} MB)"
    return device


def does_not_fit_reason(batch_size: int | None, fields: dict[str, Any], cause: str = "") -> str:
    """ "b1024 does not fit on cpu (limit 2048 MB): RuntimeError: ... can't allocate memory" """
    which = f"b{batch_size}" if batch_size else "this batch size"
    return f"{which} does not fit on {where_it_ran(fields)}" + (f": {cause}" if cause else "")


def killed_by_memory(code: int | None, before: dict[str, int], after: dict[str, int],
                     watch: GroupWatch) -> str | None:
    """Why a program killed by a signal died of memory, or None: the kernel's OOM killer counted
    a kill (its cgroup's or the system's counter rose), a cgroup limit was hit, or its peak came
    within 10 % of the limit that applied (an address-space limit makes allocations fail, and
    some runtimes crash on that instead of raising)."""
    sig = -code if code is not None and code < 0 else (code - 128 if code and code > 128 else 0)
    if sig not in FATAL_SIGNALS:
        return _failed_at_address_limit(code, watch)
    name = signal.Signals(sig).name
    from .limits import counter_name

    rose = [key for key, value in after.items() if value > before.get(key, value)]
    kills = sorted({counter_name(k) for k in rose if not k.endswith("failcnt")})
    if kills and sig == signal.SIGKILL:
        return f"killed by {name}: the kernel's OOM killer ({', '.join(kills)})"
    if rose and sig == signal.SIGKILL:
        return f"killed by {name} with its cgroup at its memory limit (memory.failcnt rose)"
    limit, kind, where = host_limit()
    if limit:
        peak = watch.vm_peak_mb if kind == ADDRESS_SPACE else watch.host_peak_mb()
        if peak and peak >= NEAR_LIMIT * limit:
            return (f"killed by {name} at {peak:.0f} MB of its {limit:.0f} MB {where} "
                    f"({'virtual memory' if kind == ADDRESS_SPACE else 'RSS'})")
    return None


def _failed_at_address_limit(code: int | None, watch: GroupWatch) -> str | None:
    """A program that exited with an error after its virtual memory reached an address-space
    limit: allocations fail there, and some libraries say so in words no list can hold (oneDNN:
    "could not create a primitive"), then exit 1. The peak at the limit is the evidence."""
    if not code or code < 0:
        return None
    limit, kind, where = host_limit()
    peak = watch.vm_peak_mb
    if not limit or kind != ADDRESS_SPACE or not peak or peak < NEAR_LIMIT * limit:
        return None
    return (f"exited with status {code} at {peak:.0f} MB of its {limit:.0f} MB {where} "
            "(virtual memory): an allocation failed at the limit")
