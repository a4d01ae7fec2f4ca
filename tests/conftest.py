"""Shared fixtures, and the layers each test belongs to.

The folder a test lives in sets its layer marker (``-m <layer>`` runs one layer alone):

- ``unit`` (tests/unit): pure tests of core on real logs - no subprocess, no sleeping, no
  network; the fast layer, seconds in all (``./scripts/test.sh -m unit``).
- ``app`` (tests/app): the Textual app through Pilot, and its snapshots.
- ``checks`` (tests/checks): the code's own checks - mypy strict over core, the import
  contracts (lint-imports), import hygiene - each a subprocess over the whole tree.
- ``e2e`` (tests/e2e): real components - sshd on loopback, moto, TensorFlow and PyTorch
  training, the dead-man timer's script with its real waits, memory limits.

``./scripts/test.sh`` with no arguments runs every layer (CI does). A test elsewhere whose
nature is another layer's names it in ``ELSEWHERE`` below, or carries that layer's marker
itself; it then gets that layer alone.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_LOGS = ROOT / "sample_logs"


async def until(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Poll ``condition`` every 50 ms: a polling loop with a deadline, so a probe that never
    gets there fails its test (saying what it waited for) instead of hanging the suite."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {timeout:g}s for {what}")
        await asyncio.sleep(0.05)


def write_log(path: Path, events: list[dict[str, Any]], raw: list[str] | None = None) -> Path:
    lines = [json.dumps(e) for e in events] + (raw or [])
    path.write_text("".join(line + "\n" for line in lines))
    return path


class LogBuilder:
    """Builds a schema-v1 event list with a consistent clock (t = running sum of dt)."""

    def __init__(self, **start: Any) -> None:
        self.t = 0.0
        fields = {"probe": "p1", "instance": "p3.2xlarge", "batch_size": 256,
                  "workload": "test", "steps_per_epoch": 100, "val_steps": 10}
        fields.update(start)
        self.events: list[dict[str, Any]] = [{"ev": "start", "t": 0.0, "v": 1, **fields}]

    def timed(self, ev: str, dt: float, **fields: Any) -> LogBuilder:
        self.t += dt
        self.events.append({"ev": ev, "t": round(self.t, 9), "dt": dt, **fields})
        return self

    def init(self, dt: float) -> LogBuilder:
        return self.timed("init", dt)

    def steps(self, epoch: int, dts: list[float], first_index: int = 0) -> LogBuilder:
        for i, dt in enumerate(dts):
            self.timed("step", dt, epoch=epoch, step=first_index + i)
        return self

    def val(self, epoch: int, dt: float, steps: int, **metrics: float) -> LogBuilder:
        return self.timed("val", dt, epoch=epoch, steps=steps, metrics=metrics)

    def epoch(self, epoch: int, **metrics: float) -> LogBuilder:
        self.events.append({"ev": "epoch", "t": self.t, "epoch": epoch, "metrics": metrics})
        return self

    def end(self, status: str = "probe-done", dt: float = 0.0) -> LogBuilder:
        return self.timed("end", dt, status=status)

    def write(self, path: Path) -> Path:
        return write_log(path, self.events)


@pytest.fixture
def log_builder() -> type[LogBuilder]:
    return LogBuilder


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    from probecast.core.cli.main import main

    def run(*args: str) -> tuple[int, str, str]:
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def python() -> str:
    return sys.executable


def ranked_row(probe: str, instance: str, batch_size: int, runtime_s: float,
               cost_usd: float | None, spread: float = 0.1):  # type: ignore[no-untyped-def]
    """A RankedRow with just what ranking needs (pure ranking tests)."""
    from probecast.core.model.rank.ranking import RankedRow

    return RankedRow(
        key=probe, label=probe, probe=probe, instance=instance, batch_size=batch_size,
        workload="w", epochs=10, epochs_source="user", runtime_s=runtime_s,
        runtime_low_s=runtime_s * (1 - spread), runtime_high_s=runtime_s * (1 + spread),
        cost_usd=cost_usd, cost_low_usd=cost_usd, cost_high_usd=cost_usd, price_per_hour=1.0,
        price_source="user", billing="exact", equation="5.3", terms={}, uncertainty={},
        formula="", notes=[],
        status="done", steps_observed=30)


LAYERS = ("unit", "app", "checks", "e2e")
# Tests whose file lives in another layer's folder: lint-imports over the tree sits with the
# architecture's pure checks in tests/unit/test_architecture.py.
ELSEWHERE = {"test_architecture.py::test_import_contracts_hold": "checks"}


def layer_of(item: pytest.Item) -> str | None:
    """The test's own layer marker, else ELSEWHERE's, else its folder's."""
    own = [layer for layer in LAYERS if item.get_closest_marker(layer) is not None]
    if own:
        return own[0]
    named = ELSEWHERE.get(f"{item.path.name}::{item.name.split('[')[0]}")
    if named:
        return named
    return next((layer for layer in LAYERS if f"/tests/{layer}/" in str(item.path)), None)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """``-m unit`` alone does not import the other layers' folders at all: their modules import
    boto3, moto, SkyPilot and Textual, seconds of the fast layer's time. (So the unit layer is
    tests/unit: a test elsewhere cannot name itself unit.)"""
    if (config.getoption("markexpr", "") or "").strip() != "unit":
        return None
    tests = ROOT / "tests"
    if collection_path.parent == tests and collection_path.is_dir() and collection_path.name != "unit":
        return True
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test gets one layer's marker: -m unit is the fast layer."""
    for item in items:
        layer = layer_of(item)
        if layer is not None and item.get_closest_marker(layer) is None:
            item.add_marker(getattr(pytest.mark, layer))


@pytest.fixture(autouse=True)
def _app_tests_price_without_a_local_cache(request: pytest.FixtureRequest,
                                           tmp_path_factory: pytest.TempPathFactory,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The app's tests price from the embedded catalog: a price cache refreshed on this machine
    (`probecast prices --refresh`, which the one price lookup prefers) must not change what a
    snapshot shows."""
    if "app" in request.node.path.relative_to(ROOT / "tests").parts[:1]:
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg-cache"))


@pytest.fixture(autouse=True)
def _agent_lines_checked_against_the_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every Emitter a test starts - in this process, or in an agent and its hooks started as
    subprocesses - checks each line against core/agent/schema.py and fails loudly on a bad one
    (on a user's job it would write the line as made)."""
    monkeypatch.setenv("PROBECAST_STRICT_EVENTS", "1")


THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


@pytest.fixture(autouse=True)
def _one_framework_thread_beside_other_test_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where several test workers share the machine's cores (scripts/test.sh runs one per core),
    a PyTorch job a test starts takes one OpenMP thread, unless the environment says otherwise.
    With two threads on two cores and another worker's job busy beside it, each of its small
    ops waited for a thread the other had descheduled: a probe of 0.5 ms steps took 41.6 s, not
    5.3 s (one thread, the same neighbour) - the suite's slowest e2e tests were that wait. What
    a test checks does not depend on the thread count; a real user's job keeps its own."""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")
    if workers.isdigit() and int(workers) > 1:
        for name in THREAD_VARIABLES:
            if name not in os.environ:
                monkeypatch.setenv(name, "1")


@pytest.fixture(autouse=True)
def _third_party_logs_in_the_test_folder(tmp_path_factory: pytest.TempPathFactory,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Stable-Baselines3's logger makes a folder in /tmp for every learn() given none
    (``SB3-<date>``, ~40 a suite run, never removed); its own variable puts them in pytest's
    temporary folder, which pytest prunes."""
    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path_factory.getbasetemp() / "sb3-logs"))
