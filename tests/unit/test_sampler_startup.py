"""Nothing of the sampler runs on the program's way to its first step: NVML opens on the
sampler's own thread, `start`'s devices are read ahead on a thread of their own; and the switch
benchmarks/overhead.py uses to measure what NVML costs turns it off. A stand-in pynvml (this
machine has no GPU driver) counts the calls the real module would get."""

from __future__ import annotations

import io
import sys
import threading
from pathlib import Path

import pytest

from probecast.core.agent import sampler
from probecast.core.agent.emit import Emitter
from probecast.core.agent.sampler import HardwareSampler, Nvml

STAND_IN = (
    "from types import SimpleNamespace as NS\n"
    "import threading\n"
    "calls = []\n"
    "def nvmlInit(): calls.append(threading.current_thread().name)\n"
    "def nvmlDeviceGetCount(): return 1\n"
    "def nvmlDeviceGetHandleByIndex(i): return i\n"
    "def nvmlDeviceGetUtilizationRates(h): return NS(gpu=50, memory=0)\n"
    "def nvmlDeviceGetMemoryInfo(h, version=None): return NS(used=2**30, total=8 * 2**30, free=0)\n"
    "def nvmlDeviceGetName(h): return 'NVIDIA L4'\n")


@pytest.fixture
def pynvml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    (tmp_path / "pynvml.py").write_text(STAND_IN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "pynvml", raising=False)
    monkeypatch.setattr(sampler, "_prefetch", None)
    monkeypatch.setattr(sampler, "_prefetched", [])
    monkeypatch.delenv(sampler.ENV_NVML, raising=False)
    import pynvml as stand_in

    return stand_in


def test_the_sampler_opens_nvml_on_its_own_thread(pynvml) -> None:  # type: ignore[no-untyped-def]
    s = HardwareSampler(Emitter(out=io.StringIO()), interval=0.01)
    assert pynvml.calls == []  # made at the first step: nothing opened there
    s.start()
    s.stop()
    s.join(timeout=60)
    assert pynvml.calls == ["probecast-sampler"]
    assert s.nvml is not None and s.nvml.read() == [
        {"util": 50.0, "mem_used": 1024.0, "mem_total": 8192.0, "name": "NVIDIA L4"}]


def test_the_devices_are_read_ahead_once(pynvml) -> None:  # type: ignore[no-untyped-def]
    sampler.prefetch_devices()
    sampler.prefetch_devices()  # every framework the program imports asks again
    devices = sampler.describe_devices()
    assert devices == [{"kind": "gpu", "name": "NVIDIA L4", "memory_mb": 8192.0}]
    assert sampler.describe_devices() == devices
    assert pynvml.calls == ["probecast-devices"]  # one read, on its own thread
    assert threading.current_thread().name not in pynvml.calls


def test_nvml_switched_off_reads_no_gpu(  # type: ignore[no-untyped-def]
        pynvml, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(sampler.ENV_NVML, "0")
    assert Nvml.open() is None and sampler.gpu_tool() is None
    assert [d["kind"] for d in sampler.describe_devices()] == ["cpu"]
    assert pynvml.calls == []
