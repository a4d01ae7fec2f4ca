"""Steps on CUDA timed by the device's own events (torch_devices.CudaStepClock), not by a
synchronize after every step: checked on a simulated device whose queue runs behind the host,
through the real PyTorch loops adapter and ProbeSession. The device is simulated because none
runs here; the host path (CPU) is the real one and is checked to stay as it was.
"""

from __future__ import annotations

import io
import json
import time
from typing import Any

import pytest

from probecast.core.agent.adapters.torch_devices import MAX_IN_FLIGHT, CudaStepClock
from probecast.core.agent.adapters.torch_loops import TorchLoopsAdapter
from probecast.core.agent.emit import Emitter
from probecast.core.agent.policy import StopPolicy
from probecast.core.agent.probe_session import ProbeMeta, ProbeSession

KERNEL_S = 0.010  # the device's work a step
PREPARE_S = 0.004  # the host's work a step (the next batch), overlapped with the device's


class FakeDevice:
    """One CUDA stream: work queued by the host runs in order, after the host queued it."""

    def __init__(self, start: float = 1000.0) -> None:
        self.host = start  # the host's monotonic clock
        self.busy_until = start  # when the device has run everything queued so far
        self.syncs = 0

    def now(self) -> float:
        return self.host

    def host_work(self, seconds: float) -> None:
        self.host += seconds

    def launch(self, seconds: float) -> None:
        self.busy_until = max(self.busy_until, self.host) + seconds

    def synchronize(self) -> None:
        self.syncs += 1
        self.host = max(self.host, self.busy_until)

    def event(self, enable_timing: bool = False) -> FakeEvent:
        assert enable_timing
        return FakeEvent(self)


class FakeEvent:
    def __init__(self, device: FakeDevice) -> None:
        self.device = device
        self.at: float | None = None

    def record(self) -> None:
        self.at = max(self.device.busy_until, self.device.host)

    def query(self) -> bool:
        assert self.at is not None
        return self.device.host >= self.at

    def synchronize(self) -> None:
        assert self.at is not None
        self.device.host = max(self.device.host, self.at)

    def elapsed_time(self, end: FakeEvent) -> float:
        assert self.at is not None and end.at is not None
        return (end.at - self.at) * 1000.0


def clock_on(device: FakeDevice) -> CudaStepClock:
    return CudaStepClock(device.event, device.synchronize, device.now)


def test_steps_are_told_when_the_device_ran_them_and_the_host_keeps_its_lead() -> None:
    device = FakeDevice()
    clock = clock_on(device)
    clock.anchor()
    told: list[tuple[float, Any]] = []
    for i in range(40):
        device.host_work(PREPARE_S)
        device.launch(KERNEL_S)
        clock.mark(i)
        told += clock.ready()
    assert len(told) < 40  # the host ran ahead: the latest steps are still on the device
    told += clock.drain()
    assert [what for _, what in told] == list(range(40))
    ends = [at for at, _ in told]
    gaps = [b - a for a, b in zip(ends, ends[1:])]
    assert gaps == pytest.approx([KERNEL_S] * 39)  # the device's step, not the host's
    # the device never waited for the host: the whole run is the device's work, back to back
    assert ends[-1] == pytest.approx(1000.0 + PREPARE_S + 40 * KERNEL_S)
    assert clock.syncs == device.syncs == 2  # the anchor and the drain, nothing per step


def test_a_host_far_ahead_waits_for_its_oldest_step_only() -> None:
    device = FakeDevice()
    clock = clock_on(device)
    for i in range(MAX_IN_FLIGHT * 3):
        device.launch(KERNEL_S)  # the host queues without pause
        clock.mark(i)
        clock.ready()
    assert len(clock.pending) <= MAX_IN_FLIGHT
    assert device.syncs == 1  # the lazy anchor; the waits were on single events
    assert device.busy_until - device.host >= (MAX_IN_FLIGHT - 1) * KERNEL_S  # queue kept full


class FastClockEvent(FakeEvent):
    def elapsed_time(self, end: FakeEvent) -> float:
        return super().elapsed_time(end) * 1.5  # a device clock running fast against the host's


def test_no_time_is_told_past_the_hosts_clock() -> None:
    device = FakeDevice()
    clock = CudaStepClock(lambda enable_timing: FastClockEvent(device), device.synchronize,
                          device.now)
    clock.anchor()
    device.launch(KERNEL_S)
    clock.mark("step")
    device.host = device.busy_until
    [(at, what)] = clock.ready()
    assert what == "step" and at == device.host  # not 1.5 x the step past the anchor


class CapturingEvent(FakeEvent):
    def record(self) -> None:
        raise RuntimeError("operation not permitted when stream is capturing")


def test_a_step_whose_event_cannot_be_recorded_is_told_on_the_hosts_clock_in_its_place() -> None:
    device = FakeDevice()
    capturing = [False]

    def event(enable_timing: bool = False) -> FakeEvent:
        return CapturingEvent(device) if capturing[0] else FakeEvent(device)

    clock = CudaStepClock(event, device.synchronize, device.now)
    clock.anchor()
    told: list[tuple[float, Any]] = []
    for i in range(6):
        capturing[0] = i == 3  # a CUDA graph being captured at the fourth step
        device.host_work(PREPARE_S)
        device.launch(KERNEL_S)
        clock.mark(i)
        told += clock.ready()
    told += clock.drain()
    assert [what for _, what in told] == list(range(6))
    assert all(a <= b for (a, _), (b, _) in zip(told, told[1:]))


def adapter_on(device: FakeDevice | None,
               policy: StopPolicy) -> tuple[TorchLoopsAdapter, io.StringIO]:
    out = io.StringIO()
    session = ProbeSession(Emitter(out=out, t0=time.monotonic()), policy, ProbeMeta(probe="t"),
                           sample_interval=None)
    adapter = TorchLoopsAdapter(session, steps_per_epoch=100)
    adapter.sync_cuda = device is not None
    adapter.clock = clock_on(device) if device is not None else None
    return adapter, out


def run_steps(adapter: TorchLoopsAdapter, device: FakeDevice | None, n: int) -> int:
    """The program's loop: prepare a batch, queue the step, the optimizer's post-step hook."""
    ran = 0
    for _ in range(n):
        if adapter.stopped:
            break
        if device is not None:
            device.host_work(PREPARE_S)
            device.launch(KERNEL_S)
        adapter._after_step(None, "optimizer")
        ran += 1
    return ran


def events(out: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


def assert_dts_partition_the_run(evs: list[dict[str, Any]]) -> None:
    timed = [e for e in evs if "dt" in e]
    assert sum(e["dt"] for e in timed) == pytest.approx(timed[-1]["t"], abs=1e-4)
    assert all(e["dt"] >= 0 for e in timed)


@pytest.fixture
def device(monkeypatch: pytest.MonkeyPatch) -> FakeDevice:
    device = FakeDevice(start=time.monotonic())
    monkeypatch.setattr(time, "monotonic", device.now)  # the emitter's clock is the host's
    return device


def test_a_probe_on_cuda_syncs_at_its_first_step_and_its_stop_only(device: FakeDevice) -> None:
    adapter, out = adapter_on(device, StopPolicy(max_steps=30, min_steps=5))
    ran = run_steps(adapter, device, 200)
    evs = events(out)
    steps = [e for e in evs if e["ev"] == "step"]
    assert len(steps) == ran  # every step the program ran is in the log, none twice
    assert [s["step"] for s in steps] == list(range(ran))
    assert [e["ev"] for e in evs if "dt" in e][-1] == "end"
    assert device.syncs == 2
    # the second step waited for the host (the anchor emptied the queue); then the device's
    assert [s["dt"] for s in steps[2:]] == pytest.approx([KERNEL_S] * (ran - 2), abs=2e-6)
    assert_dts_partition_the_run(evs)


def test_a_whole_run_on_cuda_syncs_once_before_its_exit(device: FakeDevice) -> None:
    adapter, out = adapter_on(device, StopPolicy(full=True))
    run_steps(adapter, device, 50)
    assert device.syncs == 1  # the anchor at the first step: the run itself never waits
    adapter._at_exit()
    evs = events(out)
    assert len([e for e in evs if e["ev"] == "step"]) == 50
    assert device.syncs == 2  # the exit told what was still in flight
    assert evs[-1]["ev"] == "end" and evs[-1]["status"] == "complete"
    assert_dts_partition_the_run(evs)


def test_a_validation_pass_on_cuda_keeps_its_place_between_steps(device: FakeDevice) -> None:
    adapter, out = adapter_on(device, StopPolicy(full=True))
    run_steps(adapter, device, 5)
    adapter.val = [12345, 3]  # a pass over another loader, left when training went on
    device.launch(3 * KERNEL_S)
    run_steps(adapter, device, 5)
    adapter._at_exit()
    kinds = [e["ev"] for e in events(out) if e["ev"] in ("step", "val")]
    assert kinds == ["step"] * 5 + ["val"] + ["step"] * 5
    assert_dts_partition_the_run(events(out))


def test_on_the_cpu_each_step_is_told_at_once_on_the_hosts_clock() -> None:
    adapter, out = adapter_on(None, StopPolicy(full=True))
    for i in range(5):
        adapter._after_step(None, "optimizer")
        assert len([e for e in events(out) if e["ev"] == "step"]) == i + 1
    assert adapter.clock is None
