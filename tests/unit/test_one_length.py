"""One job, one length: candidates whose runs an early stop ended at different epochs are ranked
at one length, the median of their stop epochs - not each at its own draw."""

from __future__ import annotations

import json
from typing import Any

import pytest

from probecast.core.model.estimate.early_stop import UPPER_BOUND
from probecast.core.model.events import EventReader
from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing, RankOptions, build_ranking
from probecast.core.model.rows import Candidate
from probecast.core.model.state import fold_all

pytestmark = pytest.mark.unit


def early_stopped(instance: str, step_s: float, stopped: int | None, epochs: int = 40,
                  n_it: int = 10) -> Candidate:
    """A probe that saw its run end by itself: an EarlyStopping (its soonest end after 3 of
    ``epochs`` epochs) ended it after ``stopped`` epochs; None: the probe stopped it itself
    after 2 epochs (its run goes on)."""
    t = 2.0
    ev: list[dict[str, Any]] = [
        {"ev": "start", "t": 0.0, "v": 4, "probe": instance, "instance": instance,
         "batch_size": 32, "workload": "w", "steps_per_epoch": n_it, "val_steps": 0,
         "framework": "torch 2.13.0 (Lightning)", "epochs": epochs},
        {"ev": "init", "t": t, "dt": t},
        {"ev": "plan", "t": t, "earliest_epochs": 3},
        {"ev": "log", "t": t, "level": "warning", "code": "early-stop",
         "msg": "EarlyStopping may end training before the planned epochs"}]
    # (a DataLoader's epochs: no tf.data stall to forecast where the probe stopped the run)
    for e in range(stopped or 2):
        for i in range(n_it):
            t += step_s
            ev.append({"ev": "step", "t": t, "dt": step_s, "epoch": e, "step": i})
        ev.append({"ev": "epoch", "t": t, "epoch": e, "metrics": {}})
    status = "complete" if stopped else "probe-done"
    ev += [{"ev": "done", "t": t, "dt": 0.0, "status": status},
           {"ev": "end", "t": t + 0.5, "dt": 0.5, "status": status, "exit_code": 0}]
    state = fold_all(list(EventReader().read(json.dumps(e) for e in ev)))
    return Candidate(instance, instance, state)


def ranked(*candidates: Candidate) -> list[Any]:
    pricing = Pricing(Catalog.embedded(), overrides={c.key: 1.0 for c in candidates})
    return build_ranking(candidates, pricing, RankOptions()).groups["w"]


def test_runs_stopped_at_different_epochs_are_ranked_at_their_median() -> None:
    """Host b steps 10 % faster but its run drew a later stop (9 epochs against 5): by each
    run's own length a would rank first; at one length, b does."""
    a, b = early_stopped("a", 0.10, 5), early_stopped("b", 0.09, 9)
    rows = ranked(a, b)
    assert [r.instance for r in rows] == ["b", "a"]
    for r in rows:
        assert r.epochs == 5
        assert any("after 5, 9 epochs: each is ranked at 5 epochs" in n for n in r.notes)
        assert r.runtime_s == pytest.approx(2.0 + 5 * 10 * (0.09 if r.instance == "b" else 0.10)
                                            + 0.5, rel=0.05)


def test_one_run_seen_to_its_stop_and_one_stopped_by_the_probe_share_that_length() -> None:
    a, b = early_stopped("a", 0.10, 7), early_stopped("b", 0.09, None)
    rows = ranked(a, b)
    assert all(r.epochs == 7 for r in rows) and [r.instance for r in rows] == ["b", "a"]
    assert not any(n.startswith(UPPER_BOUND) for r in rows for n in r.notes)


def test_runs_that_agree_or_stand_alone_keep_their_own_answer() -> None:
    rows = ranked(early_stopped("a", 0.10, 6), early_stopped("b", 0.09, 6))
    assert all(r.equation == "measured" for r in rows)
    assert all(not any("one length" in n for n in r.notes) for r in rows)
    (alone,) = ranked(early_stopped("a", 0.10, 6))
    assert alone.equation == "measured" and alone.epochs == 40


def full_batch(instance: str, step_s: float, stopped: int) -> Candidate:
    """A job of one loop of 10 000 full-batch steps whose own ``if bad_counter ==
    args.patience: break`` (its soonest end after 101 steps) ended it after ``stopped``."""
    t = 2.0
    ev: list[dict[str, Any]] = [
        {"ev": "start", "t": 0.0, "v": 4, "probe": instance, "instance": instance,
         "batch_size": 0, "workload": "w", "steps_per_epoch": 10000, "val_steps": 0,
         "framework": "torch 2.13.0"},
        {"ev": "init", "t": t, "dt": t},
        {"ev": "plan", "t": t, "steps": 10000, "earliest_steps": 101},
        {"ev": "log", "t": t, "level": "warning", "code": "early-stop",
         "msg": "the program's early stop at `bad_counter == args.patience` may end training"}]
    for i in range(stopped):
        t += step_s
        ev.append({"ev": "step", "t": t, "dt": step_s, "epoch": 0, "step": i})
    ev += [{"ev": "done", "t": t, "dt": 0.0, "status": "complete"},
           {"ev": "end", "t": t + 0.5, "dt": 0.5, "status": "complete", "exit_code": 0}]
    return Candidate(instance, instance, fold_all(list(EventReader().read(map(json.dumps, ev)))))


def test_runs_an_early_stop_ended_at_different_steps_are_ranked_at_their_median() -> None:
    """pyGAT's shape on two hosts: b steps 10 % faster but its run drew the later stop (160
    steps against 115); at one length - 115 steps, the median - b ranks first."""
    rows = ranked(full_batch("a", 1.0, 115), full_batch("b", 0.9, 160))
    assert [r.instance for r in rows] == ["b", "a"]
    for r in rows:
        assert any("after 115, 160 steps: each is ranked at 115 steps" in n for n in r.notes)
        assert r.runtime_s == pytest.approx(2.0 + 115 * (0.9 if r.instance == "b" else 1.0),
                                            rel=0.05)

