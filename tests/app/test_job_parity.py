"""The same config gives the same plan and the same ranking headless and in the app: both run
the one probe job (core/run/job.py) and rank from its board.

The probes themselves are the one stand-in: a runner at the Session's factory seam that trains
deterministically (its step times fixed by its instance and batch size), so two runs can be
compared number for number - a real probe's times differ from run to run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from fakes import SteppingProbe
from pilot_steps import finished_view
from probecast.core.run.config import Host
from probecast.core.run.runners import ProbeSpec

STEP = {"g5.xlarge": 0.10, "p3.2xlarge": 0.07}


def test_the_same_config_plans_and_ranks_the_same_headless_and_in_the_app(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli) -> None:  # type: ignore[no-untyped-def]
    from probecast.core.run import session as session_mod
    from probecast.tui.main import make_live_app

    planned: list[list[tuple[Any, ...]]] = []

    def factory(hosts: list[Host]):  # type: ignore[no-untyped-def]
        seen: list[tuple[Any, ...]] = []
        planned.append(seen)

        def make(host: Host, spec: ProbeSpec, path: Path) -> SteppingProbe:
            seen.append((host.name, host.instance, spec.key, spec.batch_size, spec.max_steps,
                         spec.price_per_hour, spec.command, path.name))
            return SteppingProbe(spec, STEP[spec.instance] * spec.batch_size / 64, noise=0.05,
                                 init_s=2.0, steps_per_epoch=50000 // spec.batch_size, epochs=5)

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
            await finished_view(app, pilot)
            assert app.job is not None
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
