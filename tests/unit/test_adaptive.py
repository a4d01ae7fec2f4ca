"""The adaptive probe: undecided contenders are probed again, longer, only while that can narrow
their bounds and the budget lasts; earlier logs are kept. Runners here replay synthetic probes
whose length follows the spec (max_steps), like the agent's stop policy."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from fakes import SteppingProbe
from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing, RankOptions
from probecast.core.run.adaptive import settle
from probecast.core.run.board import Board
from probecast.core.run.config import Host, ProbeSettings
from probecast.core.run.probe_plan import plan_probes, run_plan
from probecast.core.run.runners import ProbeSpec

STEP = {"a": 1.00, "b": 1.02}  # two hosts whose steps are 2 % apart


def synthetic(init: float, noise: float) -> Callable[[Host, ProbeSpec, Path], SteppingProbe]:
    """Probes of host ``spec.instance``: start-up ``init`` s, then max_steps noisy steps, each
    leaving a log on disk as a real runner does (the adaptive probe keeps the earlier ones)."""
    return lambda host, spec, log: SteppingProbe(spec, STEP[spec.instance], noise=noise,
                                                 init_s=init, log=log)


def run(tmp: Path, budget: float | None, init: float = 1.0, noise: float = 0.3):  # type: ignore[no-untyped-def]
    hosts = [Host(name=n, instance=n, kind="local") for n in ("a", "b")]
    settings = ProbeSettings(batch_sizes=[8], max_steps=12, adaptive_budget=budget)
    plan = plan_probes(hosts, settings, tmp)
    board = Board(Pricing(Catalog.embedded()))
    factory = synthetic(init, noise)

    async def go():  # type: ignore[no-untyped-def]
        await run_plan(board, plan, factory=factory)
        return await settle(board, plan, RankOptions(epochs=10), budget_s=budget, factory=factory)

    return board, asyncio.run(go())


def test_undecided_contenders_are_probed_again_longer_and_their_first_logs_kept(tmp_path: Path) -> None:
    board, report = run(tmp_path, budget=1e6)
    assert report.reprobed == ["a b8", "b b8"] and report.rounds >= 1
    # longer: 3 x 12 steps, or - where unseen boundaries dominate, as for this framework-free
    # probe that saw none - 1.5 x the steps and 3 x the boundary budget
    assert all(e.state.steps >= 18 for e in board.entries.values())
    kept = {p.name for p in (tmp_path / "superseded").iterdir()}
    assert {"a-b8.jsonl", "b-b8.jsonl"} <= kept  # every earlier round's log, nothing lost
    assert len(kept) == report.probes_again >= 2
    assert report.spent_s > 0 and report.spent_s <= report.budget_s
    assert "probed a b8, b b8 again" in report.describe()


def test_nothing_is_probed_again_when_probing_cannot_narrow_the_bounds(tmp_path: Path) -> None:
    # steady steps (no noise) and a long start-up: the width is start-up variance and the floor
    board, report = run(tmp_path, budget=1e6, init=200.0, noise=0.0)
    assert report.reprobed == [] and not report.settled
    assert "would not narrow" in report.why
    assert all(e.state.steps == 12 for e in board.entries.values())


def test_the_budget_is_respected_and_said(tmp_path: Path) -> None:
    board, report = run(tmp_path, budget=5.0)
    assert report.reprobed == [] and "over the budget" in report.why
    assert all(e.state.steps == 12 for e in board.entries.values())


def test_by_default_the_budget_is_five_percent_of_the_leaders_job(tmp_path: Path) -> None:
    # the predicted job is ~10 000 steps x 1 s: 5 % affords probing both again
    board, report = run(tmp_path, budget=None)
    assert 400 < report.budget_s < 600 and report.reprobed


def test_the_report_says_what_probing_again_bought(tmp_path: Path) -> None:
    board, report = run(tmp_path, budget=1e6)
    assert report.before and set(report.before) <= {"a b8", "b b8"}
    assert report.after and set(report.after) <= set(report.before)  # the leader may change
    assert "P(leader ahead):" in report.describe() and "->" in report.describe()


def test_more_boundaries_where_the_boundaries_dominate(tmp_path: Path) -> None:
    """A probe that saw no boundary, whose unseen-boundary allowance outweighs its step-time
    interval, is probed again for boundaries (3x their budget), not for steps (3x)."""
    from dataclasses import replace as dc_replace

    from probecast.core.run.adaptive import boundaries_dominate, longer

    hosts = [Host(name="a", instance="a", kind="local")]
    planned = plan_probes(hosts, ProbeSettings(batch_sizes=[8], max_steps=20,
                                               boundary_budget=10.0), tmp_path)[0]
    (tmp_path / "x").mkdir()
    board, _ = run(tmp_path / "x", budget=0.0)
    row = board.ranking(RankOptions(epochs=10)).rows[0]
    stalls = dc_replace(row, uncertainty={**row.uncertainty, "steps": 1.0, "unseen_high": 60.0},
                        terms={**row.terms, "boundaries_seen": 0})
    steps = dc_replace(row, uncertainty={**row.uncertainty, "steps": 60.0, "boundaries": 0.0,
                                         "unseen_high": 1.0},
                       terms={**row.terms, "boundaries_seen": 2})
    assert boundaries_dominate(stalls) and not boundaries_dominate(steps)
    more_boundaries = longer(planned, stalls).spec
    more_steps = longer(planned, steps).spec
    assert more_boundaries.boundary_budget == 30.0 and more_boundaries.max_steps == 30
    assert more_steps.boundary_budget == 20.0 and more_steps.max_steps == 60


def test_the_session_probes_then_settles_and_a_full_session_trains_every_probe_to_the_end(
        tmp_path: Path) -> None:
    """Session.run is the one driver (app, probe --headless, AWS, SkyPilot): it runs the plan and
    then the adaptive probe; a --full session marks every probe of any plan handed to it - a
    launch's or SkyPilot's too - and probes nothing again."""
    from probecast.core.run.session import Session

    hosts = [Host(name=n, instance=n, kind="local") for n in ("a", "b")]
    settings = ProbeSettings(batch_sizes=[8], max_steps=12, adaptive_budget=1e6)
    factory = synthetic(1.0, 0.3)
    for full in (False, True):
        (tmp_path / str(full)).mkdir()
        plan = plan_probes(hosts, settings, tmp_path / str(full))
        session = Session(Board(Pricing(Catalog.embedded())), settings=settings, factory=factory,
                          full=full)
        asyncio.run(session.run(plan))
        assert all(p.spec.full is full for p in plan)
        if full:
            assert session.adaptive is None and session.summary() == []
        else:
            assert session.adaptive is not None and session.adaptive.reprobed == ["a b8", "b b8"]
            assert session.summary()[-1] == session.adaptive.describe()
