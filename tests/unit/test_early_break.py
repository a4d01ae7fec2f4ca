"""An early stop the program writes itself - a ``break`` out of the loop around the training once
a patience runs out (core/agent/early_break.py) - read on real frames as the hook reads them at
the first step; the probe goes on for it (going_on.py), and the estimate makes the planned
length an upper bound, its low bound the soonest stop, and a run the stop ended its own answer
(core/model/estimate/early_stop.py)."""

from __future__ import annotations

import argparse
import io
from typing import Any

import pytest

from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing, RankOptions, estimate_row
from probecast.core.model.rows import Candidate
from test_early_end import run, said, session
from test_length import log, run_program, state_of

pytestmark = pytest.mark.unit

PYGAT = """
    loss_values, best, bad_counter = [], 1e9, 0
    def train(epoch):
        step()
        return 1.0
    for epoch in range(args.epochs):
        loss_values.append(train(epoch))
        if loss_values[-1] < best:
            best, bad_counter = loss_values[-1], 0
        else:
            bad_counter += 1
        if bad_counter == args.patience:
            break
        break  # (the test reads the length at the first step only)
"""


def test_a_full_batch_loop_breaking_on_its_patience_can_end_after_patience_plus_one_steps(
        tmp_path: Any) -> None:
    """pyGAT's train.py (and the graph scripts after it): one full-batch step an epoch, 10 000
    planned, ``if bad_counter == args.patience: break`` - a job of one loop of steps that can
    end after 101 of them."""
    (found,) = run_program(tmp_path, PYGAT, args=argparse.Namespace(epochs=10000, patience=100))
    assert (found.steps, found.epochs, found.earliest_steps) == (10000, None, 101)
    assert found.early == "the program's early stop at `bad_counter == args.patience` (train.py:12)"
    assert found.fields()["earliest_steps"] == 101 and "earliest_epochs" not in found.fields()


def test_a_patience_that_outlasts_the_loop_is_no_early_stop(tmp_path: Any) -> None:
    (found,) = run_program(tmp_path, PYGAT, args=argparse.Namespace(epochs=50, patience=100))
    assert found.steps == 50 and not found.early and not found.earliest_steps


@pytest.mark.parametrize("test", ["early_stopping.early_stop", "early_stopping.step(0.5, None)"])
def test_a_helper_objects_patience_is_read_and_nothing_of_it_is_called(tmp_path: Any,
                                                                      test: str) -> None:
    """pytorchtools' EarlyStopping (``if early_stopping.early_stop: break``) around a loop over
    the training loader, and DGL's (``if stopper.step(acc, model): break``): the object's own
    patience, read; its method never called. (Parametrized, not a loop: the reader counts the
    loops around the step up the stack, this test's own too.)"""
    loader, calls = list(range(5)), []
    body = f"""
        class EarlyStopping:
            def __init__(self, patience):
                self.patience, self.counter, self.early_stop = patience, 0, False
            def step(self, score, model):
                calls.append(score)
                return False
        early_stopping = EarlyStopping(patience=7)
        for epoch in range(1, 31):
            for batch in loader:
                step(lambda obj: 5 if obj is loader else None)
                break
            if {test}:
                print("Early stopping")
                break
            break
    """
    (found,) = run_program(tmp_path, body, loader=loader, calls=calls)
    assert (found.epochs, found.steps, found.earliest_epochs) == (30, 150, 8)
    assert len(calls) == ("step(" in test)  # the program's own call, after the step: no other
    assert found.fields()["earliest_epochs"] == 8


@pytest.mark.parametrize(("test", "soonest"), [
    ("no_improve > PATIENCE", 5), ("PATIENCE <= no_improve", 4),
    ("epoch > 3 and wait >= cfg.es_patience", 4), ("no_improve == n_epochs_stop", 5),
    ("epochs_no_improve >= 7", 8), ("loss < 0.01", None), ("no_improve < PATIENCE", None),
    ("epoch >= 7", None)])
def test_the_comparison_sets_the_soonest_pass_and_other_breaks_are_no_early_stop(
        tmp_path: Any, test: str, soonest: int | None) -> None:
    body = f"""
        no_improve = wait = epochs_no_improve = 0
        loss, PATIENCE, n_epochs_stop = 1.0, 3, 4
        for epoch in range(20):
            for i in range(10):
                step()
                break
            if {test}:
                break
            break
    """
    (found,) = run_program(tmp_path, body, cfg=argparse.Namespace(es_patience=3))
    assert (found.epochs, found.steps_per_epoch) == (20, 10)
    assert found.earliest_epochs == soonest


def test_a_loop_around_the_epochs_runs_each_soonest_stop_again(tmp_path: Any) -> None:
    """thuml's Time-Series-Library: ``for ii in range(args.itr)`` around the experiment's
    ``for epoch in range(train_epochs)`` with its ``if early_stopping.early_stop: break``:
    each of the 2 runs can stop after 4 epochs at the soonest - 8 of the job's 40."""
    (found,) = run_program(tmp_path, """
        PATIENCE, wait = 3, 0
        for ii in range(2):
            for epoch in range(20):
                for i in range(10):
                    step()
                    break
                if wait >= PATIENCE:
                    break
                break
            break
    """)
    assert (found.epochs, found.earliest_epochs) == (40, 8)


def test_a_break_in_a_pass_over_the_data_ends_the_epoch_not_training(tmp_path: Any) -> None:
    loader = list(range(5))
    (found,) = run_program(tmp_path, """
        patience, bad = 2, 0
        for epoch in range(20):
            for batch in loader:
                step(lambda obj: 5 if obj is loader else None)
                if bad >= patience:
                    break
                break
            break
    """, loader=loader)
    assert found.epochs == 20 and not found.early and not found.earliest_epochs
    assert not found.earliest_steps


OPTIMIZER_GUIDE = """
    import math
    def convergence_test(lr, init_val=2.0, max_iters=2000):
        x_star = init_val
        converged = False
        for iter in range(1, max_iters + 1):
            x_grad = 8 * x_star ** 3 + 9 * x_star ** 2
            if math.isnan(x_grad):
                return []
            x_old = x_star
            step()
            x_star = x_star - lr * x_grad
            if x_star == x_old:
                converged = True
                break
            break  # (the test reads the length at the first step only)
    learning_rates = [1e-3, 1e-2, 1e-1]
    for learning_rate in learning_rates:
        convergence_test(learning_rate)
        break
"""


def test_a_loop_of_steps_that_breaks_on_convergence_can_end_after_any_pass(
        tmp_path: Any) -> None:
    """tensorflow/docs' optimizer guide: up to 2 000 iterations a learning rate, each test
    ``if x_star == x_old: break`` (converged in 80, 1 156 or never; its plain run trained 11 248
    of the 18 000 iterations its loops allow). The plan is an upper bound, each test can end
    after its first pass: 3 of the 6 000. (Before: no early stop, the plan the job's length.)"""
    (found,) = run_program(tmp_path, OPTIMIZER_GUIDE)
    assert (found.epochs, found.steps, found.earliest_steps) == (3, 6000, 3)
    assert found.early == "the program's break at `x_star == x_old` (train.py:13), in each " \
        "epoch's loop,"
    assert found.fields()["earliest_pass_steps"] == 1


def test_a_break_on_the_kl_ends_each_epochs_policy_steps_sooner(tmp_path: Any) -> None:
    """Spinning Up's PPO (and the many agents after it): each epoch, up to train_pi_iters
    policy steps, ``if kl > 1.5 * target_kl: break`` - every epoch runs, each with one step at
    the soonest: 50 of the 4 000 planned, one a pass."""
    pytest.importorskip("torch")  # (PPO's program below; its value loop here steps nothing)
    (found,) = run_program(tmp_path, PPO.format(v_iters=80, value_step="pass"))
    assert (found.epochs, found.steps, found.earliest_steps, found.earliest_pass) == (
        50, 4000, 50, 1)
    assert "`kl > 1.5 * target_kl`" in found.early


@pytest.mark.parametrize(("test", "soonest"), [
    ("loss < 1e-3", 1), ("converged", 1), ("elapsed > budget", 1), ("abs(loss - last) < tol", 1),
    ("n_done >= N", None), ("math.isnan(loss)", None), ("not math.isfinite(loss)", None),
    ("args.dry_run", None), ("i >= 5", None), ("later > N", None), ("k > N", None),
    # CleanRL's PPO: its target_kl is None by default - the break can never come
    ("args.target_kl is not None and loss > args.target_kl", None),
    ("args.kl is not None and loss > args.kl", 1),
    ("global_step >= 150", None)])  # made of the loops' indices after the step: a count
def test_a_break_on_a_value_the_loop_computes_is_an_early_end_and_a_count_is_not(
        tmp_path: Any, test: str, soonest: int | None) -> None:
    """A value the loop computes: a name its body binds holding no whole number - now, or
    unbound yet and bound by anything but a count (``later``: counted after the step). A
    counter, a divergence guard, a setting and the loop's own index are no early end."""
    body = f"""
        import math, time
        t0, budget, tol, last, N, n_done, k = time.monotonic(), 60.0, 1e-6, 9.0, 50, 0, 0
        for epoch in range(20):
            loss = 1.0 / (epoch + 1)
            converged = abs(loss - last) < tol
            elapsed = time.monotonic() - t0
            n_done += 1
            k = k + 1
            for i in range(10):
                step()
                break
            later = 0
            later += 1
            global_step = epoch * 10 + i
            if {test}:
                break
            break
    """
    (found,) = run_program(tmp_path, body, args=argparse.Namespace(dry_run=False,
                                                                   target_kl=None, kl=0.02))
    assert (found.epochs, found.steps_per_epoch) == (20, 10)
    assert found.earliest_epochs == soonest


MINGPT = """
    class Trainer:
        def __init__(self, config):
            self.config, self.converged = config, False

        def run(self):
            config = self.config
            self.iter_num = 0
            while True:
                step()
                self.iter_num += 1
                self.converged = self.iter_num > 10 ** 9
                if {test}:
                    break
                if {limit}:
                    break
                break
    Trainer(config).run()
"""
LIMIT = "config.max_iters is not None and self.iter_num >= config.max_iters"


@pytest.mark.parametrize(("test", "soonest"), [
    ("self.config.max_iters is not None and self.iter_num >= self.config.max_iters", None),
    ("self.iter_num > 10 ** 9", None), ("self.converged", 1)])
def test_an_attribute_the_loop_counts_is_a_count_and_one_it_computes_an_early_end(
        tmp_path: Any, test: str, soonest: int | None) -> None:
    """minGPT's trainer (``self.iter_num += 1`` ... ``if config.max_iters is not None and
    self.iter_num >= config.max_iters: break``): the count its length is read from, no early
    stop. Blind (2026-12-01): ``self.iter_num += 1`` was read as binding ``self``, a Trainer -
    a computed value - so the break could end training after step 1: the probe went on 120 s
    for it and saw the whole run. An attribute the loop sets to a computed value still is one."""
    (found,) = run_program(tmp_path, MINGPT.format(test=test, limit=LIMIT),
                           config=argparse.Namespace(max_iters=3000))
    assert found.steps == 3000 and found.earliest_steps == soonest, found


def test_a_job_of_steps_whose_early_stop_is_within_reach_is_waited_for(
        monkeypatch: pytest.MonkeyPatch) -> None:
    s, out, clock = session(monkeypatch, budget=30.0, epochs=0, soonest=None, n_it=10000)
    s.plan(steps=10000, earliest_steps=101, source="for epoch in range(args.epochs)")
    assert not any(run(s, clock, 200, dt=0.05))  # 10 s of steps: 101 was within 120 s
    assert any("an early stop can end training from step 101 of 10000: going on up to 120 s"
               in m for m in said(out))
    far = session(monkeypatch, budget=30.0, epochs=0, soonest=None, n_it=10000)
    far[0].plan(steps=10000, earliest_steps=5000, source="for epoch in range(args.epochs)")
    assert run(far[0], far[2], 200, dt=0.05)[-1]  # 250 s away: stopped at its steps
    assert isinstance(far[1], io.StringIO)


def test_a_break_in_each_epochs_loop_is_waited_for_only_where_the_run_may_end_in_the_wait(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A break that shortens each epoch's loop (Spinning Up's PPO KL stop) never ends training
    early: the probe goes on only where the whole planned run, at its pace so far, may end
    within the wait (tensorflow/docs' optimizer guide: 6 000 steps of 1 ms), not for a run of
    hours (2 000 epochs of up to 80)."""
    s, out, clock = session(monkeypatch, budget=30.0, epochs=0, soonest=None, n_it=80)
    s.plan(epochs=30, steps=2400, earliest_steps=30, earliest_pass_steps=1, source="x")
    assert not any(run(s, clock, 200, dt=0.01))  # 24 s in all at this pace: waited for
    assert any("going on up to 120 s" in m for m in said(out))
    far = session(monkeypatch, budget=30.0, epochs=0, soonest=None, n_it=80)
    far[0].plan(epochs=2000, steps=160000, earliest_steps=2000, earliest_pass_steps=1,
                source="x")
    assert run(far[0], far[2], 200, dt=0.01)[-1]  # 1 600 s at this pace: stopped at its steps
    assert not any("going on up to" in m for m in said(far[1]))


def _row(soonest: int, steps: int, status: str) -> Any:
    """The row of a job of one loop of 10 000 steps of 0.1 s whose own early stop can end it
    after ``soonest``: a probe of ``steps`` steps, ended with ``status``."""
    warn = {"ev": "log", "t": 2.0, "level": "warning", "code": "early-stop",
            "msg": "the program's early stop at `bad == patience` may end training"}
    plan = {"steps": 10000, "earliest_steps": soonest, "source": "for epoch in range(10000)"}
    events = log(0, [0.1] * steps, plan=plan, end={"status": status, "exit_code": 0})
    return estimate_row(Candidate("k", "k", state_of([*events[:3], warn, *events[3:]])),
                        Pricing(Catalog.embedded()), RankOptions())


def test_a_job_of_steps_an_early_stop_may_end_is_an_upper_bound_down_to_its_soonest() -> None:
    row = _row(301, 40, "probe-done")
    assert row.runtime_s == pytest.approx(2.0 + 0.1 * 10000, rel=0.05)
    assert any(n.startswith("an early stop may end training sooner: this is an upper bound for "
                            "10000 steps") for n in row.notes)
    assert row.runtime_low_s < 2.0 + 0.1 * 301 < 0.5 * row.runtime_s
    assert any("after 301 steps at the soonest" in n for n in row.notes)


def test_a_job_of_steps_an_early_stop_ended_is_measured_reaching_other_stops() -> None:
    row = _row(101, 240, "complete")
    assert row.equation == "measured" and row.runtime_s == pytest.approx(2.0 + 24.0 + 0.5)
    assert any("an early stop ended this run after 240 of 10000 steps; a repeat may stop at "
               "another, from 101 to 10000 (100.0 ms a step)" in n for n in row.notes)
    assert row.runtime_low_s < 2.0 + 0.1 * 150 and row.runtime_high_s > 2.0 + 0.1 * 5000


PPO = """
    import torch
    epochs, train_pi_iters, train_v_iters, target_kl = 50, 80, {v_iters}, 0.01
    pi, v = torch.nn.Linear(2, 2), torch.nn.Linear(2, 1)
    pi_optimizer = torch.optim.Adam(pi.parameters())
    vf_optimizer = torch.optim.Adam(v.parameters())
    class Env:
        def step(self, action):
            return action
    env = Env()
    def update():
        for i in range(train_pi_iters):
            kl = 0.001 * i
            if kl > 1.5 * target_kl:
                break
            step()
            return
        for i in range(train_v_iters):
            {value_step}
        for t in range(1000):  # an environment's steps: no optimizer's
            env.step(t)
    for epoch in range(epochs):
        update()
        break
"""


def mkdir(path: Any) -> Any:  # a file of its own for each program (the reader caches its tree)
    path.mkdir()
    return path


def test_a_loop_of_value_steps_beside_the_policy_loop_adds_its_steps_to_each_epoch(
        tmp_path: Any) -> None:
    """Spinning Up's PPO trains up to 80 policy steps, then 80 value steps, each epoch, each
    loop its own optimizer: an epoch is 160 steps (before: 80 - the value loop's steps were
    timed but not in the length, a 2 000-epoch job estimated at -51 %), at the soonest one
    policy step and the 80 value steps. An environment's ``env.step()`` loop is no optimizer's."""
    pytest.importorskip("torch")
    (found,) = run_program(tmp_path, PPO.format(v_iters=80, value_step="vf_optimizer.step()"))
    assert (found.epochs, found.steps, found.steps_per_epoch) == (50, 50 * 160, 160)
    assert (found.earliest_pass, found.earliest_steps) == (81, 50 * 81)
    assert "range(train_pi_iters)" in found.source and "range(train_v_iters)" in found.source
    # the value loop calls a function of the program that steps (keras.io's PPO shape)
    (found,) = run_program(mkdir(tmp_path / "b"), PPO.format(v_iters=40, value_step="train_value()").replace(
        "def update():", "def train_value():\n        vf_optimizer.step()\n    def update():"))
    assert (found.steps_per_epoch, found.earliest_pass) == (120, 41)
    # a loop that steps no optimizer (an evaluation, an environment): not the epoch's steps
    (found,) = run_program(mkdir(tmp_path / "c"), PPO.format(v_iters=80, value_step="v(torch.zeros(2))"))
    assert (found.steps_per_epoch, found.earliest_pass) == (80, 1)


def test_two_loops_one_after_the_other_with_no_loop_around_them_are_no_epoch(
        tmp_path: Any) -> None:
    """Pretraining then fine-tuning at the program's top level: phases (phases.py), not the
    steps of one epoch."""
    pytest.importorskip("torch")
    (found,) = run_program(tmp_path, """
        import torch
        net = torch.nn.Linear(2, 2)
        pre, fine = torch.optim.SGD(net.parameters(), 0.1), torch.optim.Adam(net.parameters())
        for i in range(300):
            step()
            break
        for i in range(200):
            fine.step()
    """)
    assert (found.steps, found.steps_per_epoch) == (300, 300)


def test_a_loop_beside_of_one_step_a_pass_is_not_counted(tmp_path: Any) -> None:
    """A critic's loop of five steps, then its generator's loop of one, each iteration: the
    generator never steps twice alone, never leads (lead.py), its steps are never told - so
    they are not in the length either (5 an iteration, not 6)."""
    pytest.importorskip("torch")
    (found,) = run_program(tmp_path, """
        import torch
        d, g = torch.nn.Linear(2, 1), torch.nn.Linear(2, 2)
        d_opt, g_opt = torch.optim.Adam(d.parameters()), torch.optim.Adam(g.parameters())
        n_critic, g_iters = 5, 1
        for it in range(100):
            for _ in range(n_critic):
                step()
                break
            for _ in range(g_iters):
                g_opt.step()
            break
    """)
    assert (found.steps_per_epoch, found.steps) == (5, 500)
