"""The same config gives the same plan and the same ranking headless and in the app: both run
the one probe job (core/run/job.py) and rank from its board.

The probes themselves are the one stand-in: a runner at the Session's factory seam that trains
deterministically (its step times fixed by its instance and batch size), so two runs can be
compared number for number - a real probe's times differ from run to run."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from probecast.core.run.config import Host
from probecast.core.run.runners import ProbeSpec, RunnerStatus

STEP = {"g5.xlarge": 0.10, "p3.2xlarge": 0.07}


class Steady:
    """A probe whose every number follows from its spec."""

    def __init__(self, spec: ProbeSpec) -> None:
        self.spec = spec

    async def stream(self) -> AsyncIterator[Any]:
        from probecast.core.model.events import End, Init, Start, Step

        s = self.spec
        rng = random.Random(f"{s.key}-{s.max_steps}")
        yield RunnerStatus("running")
        yield Start(0.0, probe=s.key, instance=s.instance, batch_size=s.batch_size,
                    workload="w", steps_per_epoch=50000 // s.batch_size, epochs=5,
                    price_per_hour=s.price_per_hour)
        t = 2.0
        yield Init(t, 2.0)
        for i in range(s.max_steps or 0):
            dt = STEP[s.instance] * s.batch_size / 64 * (1 + 0.05 * rng.uniform(-1, 1))
            t += dt
            yield Step(t, dt, 0, i)
        yield End(t + 0.1, 0.1, "probe-done")
        yield RunnerStatus("done")

    async def cancel(self) -> None:
        pass


def test_the_same_config_plans_and_ranks_the_same_headless_and_in_the_app(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli) -> None:  # type: ignore[no-untyped-def]
    from probecast.core.run import session as session_mod
    from probecast.tui.main import make_live_app

    planned: list[list[tuple[Any, ...]]] = []

    def factory(hosts: list[Host]):  # type: ignore[no-untyped-def]
        seen: list[tuple[Any, ...]] = []
        planned.append(seen)

        def make(host: Host, spec: ProbeSpec, path: Path) -> Steady:
            seen.append((host.name, host.instance, spec.key, spec.batch_size, spec.max_steps,
                         spec.price_per_hour, spec.command, path.name))
            return Steady(spec)

        return make

    monkeypatch.setattr(session_mod, "runner_factory", factory)  # the probes' seam, both ways
    monkeypatch.chdir(tmp_path)
    cfg = tmp_path / "probecast.toml"
    cfg.write_text('[[hosts]]\nname = "a"\nkind = "local"\ninstance = "g5.xlarge"\n'
                   'price_per_hour = 0.5\n'
                   '[[hosts]]\nname = "b"\nkind = "local"\ninstance = "p3.2xlarge"\n'
                   '[probe]\ncommand = "python3 train.py"\nbatch_sizes = [64, 128]\n'
                   'adaptive_budget = 0\n[prices]\n"p3.2xlarge" = 2.0\n')

    code, out, err = run_cli("probe", "--config", str(cfg), "--headless", "--json",
                             "--out", str(tmp_path / "headless"))
    assert code == 0, err
    headless = json.loads(out)

    app = make_live_app(str(cfg))

    async def in_the_app() -> list[dict[str, Any]]:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("space", "down", "space", "s")  # both configured hosts, start
            await pilot.pause()
            await app.workers.wait_for_complete()
            assert app.job is not None
            app.screen.refresh_view(force=True)  # type: ignore[attr-defined]
            await pilot.pause()
            shown = list(app.screen._rows.values())  # type: ignore[attr-defined]
            assert [r.key for r in shown] == [r["key"] for r in headless]  # the table's order
            return [r.as_json() for r in app.job.ranking().rows]

    ranked = asyncio.run(in_the_app())
    # the plan: the same probes, on the same hosts, as long, priced alike (30 steps: the one
    # default, a host's own price first)
    assert len(planned) == 2 and sorted(planned[0]) == sorted(planned[1])
    assert {p[4] for p in planned[0]} == {30} and {p[5] for p in planned[0]} == {0.5, None}
    fields = ("key", "instance", "batch_size", "runtime_s", "runtime_low_s", "runtime_high_s",
              "cost_usd", "price_per_hour", "relative", "p_faster", "undecided")
    assert [[r[f] for f in fields] for r in ranked] == [[r[f] for f in fields] for r in headless]
    assert [r["instance"] for r in headless][:2] == ["p3.2xlarge", "p3.2xlarge"]  # faster steps
    assert {r["instance"]: r["price_per_hour"] for r in headless} == {"g5.xlarge": 0.5,
                                                                       "p3.2xlarge": 2.0}
