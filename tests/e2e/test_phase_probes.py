"""Programs that train in phases, one loop after another, probed as a user probes them
(`probecast probe --local --headless --json -- python prog.py`, nothing configured) and run whole
(`--full`) for the truth: two Keras GradientTape loops, a PyTorch pretrain-then-fine-tune (two
loops, two optimizers, two loaders), Keras fit() then fit() again with other settings, and two
PyTorch loops the probe can only unwind. The probe must end each phase's loop and go on into the
next, so every phase is seen and counted, and the run with --full has every planned step of
every phase. Real TensorFlow and PyTorch on CPU; no timing thresholds.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from probecast.core.model.events import Done, End, Log, Phase, Plan, Start, Step, read_log
from probecast.core.model.state import fold_all

pytestmark = pytest.mark.e2e

PY = sys.executable
SCRIPTS = Path(__file__).parent / "phase_scripts"


def probe(tmp: Path, script: str, *extra: str,
          args: tuple[str, ...] = ()) -> tuple[dict[str, Any], list[Any]]:
    """The script probed (or run whole, with --full) as a user would: its ranking row and log;
    ``args`` are the script's own."""
    out = tmp / ("full" if "--full" in extra else "probe")
    r = subprocess.run([PY, "-m", "probecast.tui", "probe", "--local", "--headless", "--json",
                        "-b", "32", "--out", str(out), *thirty_steps(extra), "--", PY,
                        str(SCRIPTS / script), *args],
                       cwd=tmp, capture_output=True, text=True, timeout=480)
    assert r.returncode == 0, r.stderr[-3000:]
    rows = json.loads(r.stdout)
    assert len(rows) == 1, rows
    logs = sorted(out.glob("*.jsonl"))
    assert len(logs) == 1
    events, report = read_log(logs[0])
    assert not report.malformed
    return rows[0], events


def thirty_steps(flags: tuple[str, ...]) -> tuple[str, ...]:
    """The default length's 30 steps, given: its steady floor (a second of steps) would run
    these scripts' millisecond loops whole - what is tested is a probe stopping each loop."""
    if "--full" in flags or "--max-steps" in flags:
        return flags
    return ("--max-steps", "30", *flags)


def phases_of(events: list[Any]) -> dict[int, dict[str, Any]]:
    """Each phase's steps, epochs, plan and whether the probe ended its loop, from the log."""
    out: dict[int, dict[str, Any]] = {1: {"steps": 0, "epochs": set(), "plan": None,
                                          "stopped": False}}
    current = 1
    for ev in events:
        if isinstance(ev, Start) and ev.epochs:  # fit()'s epochs: the first phase's length
            out[1]["plan"] = Plan(t=ev.t, epochs=ev.epochs)
        elif isinstance(ev, Phase):
            current = ev.index
            out[current] = {"steps": 0, "epochs": set(), "plan": None, "stopped": False,
                            "previous": ev.previous, "loop": ev.loop}
        elif isinstance(ev, Step):
            assert (ev.phase or 1) == current  # every step says the phase it belongs to
            out[current]["steps"] += 1
            out[current].setdefault("dts", []).append(ev.dt)
            out[current]["epochs"].add(ev.epoch)
        elif isinstance(ev, Plan) and (ev.steps or ev.epochs):
            out[current]["plan"] = ev
        elif isinstance(ev, Log) and ev.code == "phase":
            out[current]["stopped"] = True
    return out


def planned_steps(phase: dict[str, Any], per_epoch: int) -> int:
    plan = phase["plan"]
    assert plan is not None, phase
    return int(plan.steps or plan.epochs * per_epoch)


def assert_every_phase_counted(row: dict[str, Any], phases: int) -> list[float]:
    """The estimate adds up every phase: the terms say how many and what each contributes."""
    terms = row["terms"]
    assert terms["phases"] == phases, row["notes"]
    shares = [float(s) for s in terms["phase_s"].split(",")]
    assert len(shares) == phases and all(s > 0 for s in shares)
    assert math.isclose(sum(shares), row["runtime_s"], rel_tol=1e-3)
    assert any(f"trains in {phases} phases" in note for note in row["notes"])
    return shares


def agent_run(tmp: Path, script: Path, *flags: str, timeout: int = 300) -> tuple[list[Any], str]:
    """The agent run on ``script`` as a probe (its defaults, ``flags`` added): the log's events
    and the program's own output. The run must end with status 0."""
    log = tmp / "probe.jsonl"
    # on a timeout the agent is told to stop (SIGTERM: it stops the program's process group, in
    # a session of its own) - killed with the test, it left a probe that could not stop its
    # program (a broken hook) running a 100 000-epoch script under the rest of the suite
    p = subprocess.Popen([PY, "-m", "probecast.core.agent", "run", *thirty_steps(flags),
                          "--out", str(log),
                          "--output", str(tmp / "out.txt"), "--", PY, str(script)],
                         cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        _, err = p.communicate(timeout=timeout)
    finally:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    assert p.returncode == 0, err[-3000:]
    return read_log(log)[0], (tmp / "out.txt").read_text()


def check_two_phases(tmp: Path, script: str,
                     per_epoch: tuple[int, int]) -> dict[int, dict[str, Any]]:
    """Both phases probed, each stopped early, and both run whole with every step: the phases
    the probe saw."""
    row, events = probe(tmp, script)
    seen = phases_of(events)
    assert sorted(seen) == [1, 2], seen
    for index, n_it in zip((1, 2), per_epoch):
        phase = seen[index]
        assert phase["stopped"]  # the probe ended this phase's loop ...
        assert 0 < phase["steps"] < planned_steps(phase, n_it)  # ... early
    assert seen[2]["previous"] == "probe-done"
    shares = assert_every_phase_counted(row, 2)

    _, full_events = probe(tmp, script, "--full")
    whole = phases_of(full_events)
    assert sorted(whole) == [1, 2] and whole[2]["previous"] == "complete"
    # the later phase's length read alike after a phase that ran to its end (its own Trainer's
    # max_epochs, not the first one's)
    assert whole[2]["plan"].epochs == seen[2]["plan"].epochs
    for index, n_it in zip((1, 2), per_epoch):  # the whole run: every step, in its phase
        assert whole[index]["steps"] == planned_steps(seen[index], n_it)
    end = full_events[-1]
    assert isinstance(end, End) and end.status == "complete" and end.exit_code == 0
    # whether the whole run falls inside the bounds is a timing, for the benchmarks on a quiet
    # machine (a loaded one moved T_init 5 -> 8 s between probe and run); here: the later phase
    # counts at least all its planned steps at the fastest step the probe saw in it, less the
    # agent's own time in a step (done.hook_ms: the plain program does not spend it)
    later = seen[2]
    hook_s = max((e.hook_ms or 0.0) / 1000 for e in events if isinstance(e, Done))
    least = (planned_steps(later, per_epoch[1]) - 1) * (min(later["dts"][1:] or later["dts"])
                                                        - hook_s)
    assert shares[1] >= least * (1 - 1e-6), (shares, least)
    return seen


@pytest.mark.torch
def test_pretrain_then_fine_tune_probes_both_loops(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    check_two_phases(tmp_path, "torch_pretrain_finetune.py", (100, 75))


@pytest.mark.tensorflow
def test_two_gradient_tape_loops_are_two_phases(tmp_path: Path) -> None:
    pytest.importorskip("tensorflow")
    check_two_phases(tmp_path, "keras_two_tapes.py", (64, 128))


@pytest.mark.tensorflow
def test_fit_then_fit_again_is_two_phases(tmp_path: Path) -> None:
    pytest.importorskip("tensorflow")
    check_two_phases(tmp_path, "keras_fit_twice.py", (48, 96))


@pytest.mark.tensorflow
def test_kerastuner_searches_are_a_phase_each_of_all_their_trials(tmp_path: Path) -> None:
    """Each search is a phase as long as its trials' fits - trials x executions x epochs, read
    from the tuner, or the epochs Hyperband's schedule sets (search()'s epochs=50 is not what it
    trains) - and the probe ends it through its own exit (the next trial STOPPED; the stopped
    one INVALID): the program's get_best_models() loads a trial that ran, and its next search is
    phase 2. Before, the trials after the stop were fit()s returned at once, with models never
    built, and the program failed loading one of them; its later searches were never seen."""
    pytest.importorskip("keras_tuner")
    # probed only: compat_checks.py runs a real Hyperband search against the count, and every
    # trial's fit is a Keras fit() whose whole run the other phase tests check (KerasTuner
    # collects garbage and TensorFlow traces anew each trial: a run whole costs ~25 s here)
    row, events = probe(tmp_path, "keras_tuner_searches.py")
    seen = phases_of(events)
    assert sorted(seen) == [1, 2], seen
    for index, n_it in zip((1, 2), (48, 96)):
        assert seen[index]["stopped"]  # the probe ended this phase's loop ...
        assert 0 < seen[index]["steps"] < planned_steps(seen[index], n_it)  # ... early
    assert seen[2]["previous"] == "probe-done"
    assert_every_phase_counted(row, 2)
    # RandomSearch: trials x executions x epochs; Hyperband: its schedule's 7 epochs (5 trials)
    assert (seen[1]["plan"].epochs, seen[2]["plan"].epochs) == (1 * 2 * 2, 7)
    assert "1 trials x executions_per_trial=2" in (seen[1]["plan"].source or "")
    assert "5 trials" in (seen[2]["plan"].source or "")
    output = next((tmp_path / "probe").glob("*.output")).read_text()  # the probed program's
    assert "second search's best" in output and "Traceback" not in output
    events, _ = read_log(next((tmp_path / "probe").glob("*.jsonl")))
    assert any(isinstance(ev, Log) and ev.code == "tuner-stopped" for ev in events)


@pytest.mark.torch
def test_an_optuna_study_is_one_phase_of_all_its_trials(tmp_path: Path) -> None:
    """An Optuna study runs the program's objective - a training of its own - once a trial: one
    phase, n_trials times the objective's loops (its loader's passes left where the program
    breaks on the index: 24 of 64 batches), ended after the trial the probe stopped through the
    study's own stop(), so the program goes on to its best trial. Before: each trial was a
    phase of its own, 64 steps an epoch, and the probe ran every later trial's loops dry."""
    pytest.importorskip("optuna")
    row, events = probe(tmp_path, "optuna_study.py")
    seen = phases_of(events)
    assert sorted(seen) == [1], seen
    plan = seen[1]["plan"]
    assert (plan.epochs, plan.steps) == (4 * 3, 4 * 3 * 24), plan
    assert "n_trials=4, timeout=600" in plan.source and "left at" in plan.source
    assert (plan.repeats, plan.time_limit_s) == (4, 600.0)  # the estimate counts the trials
    # that start before the timeout (estimate/repeats.py): here all four
    assert seen[1]["stopped"] and 0 < seen[1]["steps"] < 3 * 24  # in the first trial
    output = next((tmp_path / "probe").glob("*.output")).read_text()
    assert "best trial: 0 of 1" in output and "Traceback" not in output
    codes = {ev.code for ev in events if isinstance(ev, Log)}
    assert {"optuna-stopped", "early-stop", "optuna-timeout"} <= codes  # (its MedianPruner:
    # an upper bound)
    _, full = probe(tmp_path, "optuna_study.py", "--full")  # whole: four trials, every step
    assert sum(isinstance(ev, Step) for ev in full) == plan.steps


def test_an_optuna_study_with_no_trial_count_runs_trials_until_its_timeout(
        tmp_path: Path) -> None:
    """study.optimize(objective, timeout=600): trials start until 600 s have passed. The plan
    is one trial's, with the limit; the probe ends the study after the trial it timed (before:
    the study went on under the probe, and the estimate was one trial's seconds); the estimate
    counts the trials that start within the limit at that trial's pace."""
    pytest.importorskip("optuna")
    row, events = probe(tmp_path, "optuna_study.py", args=("open",))
    plan = phases_of(events)[1]["plan"]
    assert (plan.epochs, plan.repeats, plan.time_limit_s) == (3, None, 600.0), plan
    assert "timeout=600" in plan.source
    output = next((tmp_path / "probe").glob("*.output")).read_text()
    assert "best trial: 0 of 1" in output and "Traceback" not in output
    terms = row["terms"]
    assert terms["time_limit_s"] == 600.0 and terms["limited_runs"] > 1
    assert 600.0 <= terms["fit_s"] < row["runtime_s"] <= row["runtime_high_s"]
    assert any("runs start until the limit" in n for n in row["notes"])


def test_a_study_whose_trial_reports_nothing_cannot_be_pruned(tmp_path: Path) -> None:
    """A study's pruner ends trials on what they report (trial.report): the trial seen whole
    reported nothing, so no trial can be pruned - the soonest end is the whole study (before:
    the pruner's, 5 trials whole and 3 after their first report, and the low bound with it)."""
    pytest.importorskip("optuna")
    _, events = probe(tmp_path, "optuna_study.py", "--max-steps", "500", args=("quiet",))
    plans = [ev for ev in events if isinstance(ev, Plan)]
    assert plans[0].earliest_epochs == 5 * 3 + 3 * 1 and plans[0].epochs == 8 * 3, plans[0]
    assert plans[-1].earliest_epochs == 24, plans  # the trial ran whole, reporting nothing
    assert "optuna-unpruned" in {ev.code for ev in events if isinstance(ev, Log)}
    output = next((tmp_path / "probe").glob("*.output")).read_text()
    assert "best trial: 0 of 1" in output


@pytest.mark.torch
def test_stable_baselines3_learn_is_its_rollouts_and_returns_when_stopped(
        tmp_path: Path) -> None:
    """Stable-Baselines3's README: learn(total_timesteps) runs a loop of its own, counted in
    environment steps, which no loop of the program says. Blind (its README example, 2026-11-30):
    no length read (ranked per 1 000 steps), and the probe unwound learn() - the program's
    policy never acted. Now a PPO's length is its rollouts (60 of 128 steps), each an epoch of
    16 optimizer steps; the probe stops learn() through its own loop once the update under way
    has run, the program goes on; run whole, every planned step. A DQN's is its gradient steps (past learning_starts), and the
    stopped learn() returns as well."""
    pytest.importorskip("stable_baselines3")
    row, events = probe(tmp_path, "sb3_learn.py")
    start = next(ev for ev in events if isinstance(ev, Start))
    assert start.steps_per_epoch == 4 * 128 // 32 and "Stable-Baselines3" in start.framework
    plan = phases_of(events)[1]["plan"]
    assert plan.epochs == 60 and "PPO.learn(total_timesteps=7680): 60 rollouts" in plan.source
    assert phases_of(events)[1]["stopped"] and row["equation"] != "per-steps"
    output = next((tmp_path / "probe").glob("*.output")).read_text()
    assert "after learn: the policy acted 100 times" in output and "Traceback" not in output
    # the update under way ran to its end: no pass over no minibatches ("Mean of empty slice")
    assert "RuntimeWarning" not in output
    _, full = probe(tmp_path, "sb3_learn.py", "--full")
    assert sum(isinstance(ev, Step) for ev in full) == 60 * 16
    dqn = tmp_path / "dqn"
    dqn.mkdir()
    _, events = probe(dqn, "sb3_learn.py", args=("dqn",))
    plan = phases_of(events)[1]["plan"]
    assert plan.steps == (500 - 100 // 4) * 2, plan  # 500 rollouts of 4, 25 before it learns
    assert phases_of(events)[1]["stopped"]
    said = [ev.msg for ev in events if isinstance(ev, Log) and ev.code == "early-stop"]
    assert said and "StopTrainingOnMaxEpisodes" in said[0]  # the estimate: an upper bound
    output = next((dqn / "probe").glob("*.output")).read_text()
    assert "after learn: the policy acted 100 times" in output and "Traceback" not in output


@pytest.mark.torch
@pytest.mark.parametrize("mode", ["", "twice", "epoch_length", "iters", "early", "every"])
def test_an_ignite_run_is_its_epochs_and_returns_when_stopped(tmp_path: Path, mode: str) -> None:
    """PyTorch Ignite's README shape: trainer.run(loader, max_epochs=40) runs a loop of its own
    (an evaluator's run after each epoch, a test evaluation at COMPLETED), its length in no loop
    of the program's. Blind (2026-12-01): the job ranked at 10 epochs assumed, and the probe's
    stop emptied the evaluator's next pass - Ignite's Accuracy raised NotComputableError, exit 1.
    Now the run's state gives the length (epochs; a split pass's or max_iters' steps), the
    probe ends it through terminate(): its COMPLETED handler's evaluation runs whole and the
    program goes on after run(). A second run is a second phase, planned as long as the plain
    run's; an EarlyStopping made for the trainer makes the estimate an upper bound. Handlers
    added every K iterations or epochs that evaluate or save are periodic work (blind: the
    cifar10 example's validation after every 3rd epoch was never timed, -25.7 %)."""
    pytest.importorskip("ignite")
    row, events = probe(tmp_path, "ignite_engine.py", args=(mode,) if mode else ())
    seen = phases_of(events)
    plan = seen[1]["plan"]
    # (an early stop within reach is waited for: this one never comes, the run is seen whole)
    assert seen[1]["stopped"] == (mode != "early") and row["equation"] != "per-steps", seen
    if mode == "every":  # (the loss printed every 10 iterations is no work: not periodic)
        assert (plan.every, plan.every_epochs, plan.every_epochs_at) == (100, 3, 2), plan
        assert "every=3" in (plan.every_epochs_source or "") and "every=100" in plan.every_source
    if mode in ("", "twice", "early", "every"):
        assert (plan.epochs, plan.source) == (40, "Ignite Engine.run(max_epochs=40) of 40 "
                                                  "iterations"), plan
    elif mode == "epoch_length":  # 120 epochs of 10 iterations, 4 to a pass of the loader
        assert (plan.steps, plan.every) == (1200, 10), plan
    else:
        assert plan.steps == 1200 and "max_iters=1200" in plan.source, plan
    start = next(ev for ev in events if isinstance(ev, Start))
    assert "Ignite" in start.framework
    output = next((tmp_path / "probe").glob("*.output")).read_text()
    assert "Traceback" not in output
    assert f"tested {2 if mode == 'twice' else 1} time(s)" in output, output[-2000:]
    if mode == "twice":  # the second run from epoch 0, as plainly: not resumed where it was ended
        assert sorted(seen) == [1, 2] and seen[2]["plan"].epochs == 20, seen
    if mode == "early":
        assert plan.earliest_epochs == 4 and any(
            isinstance(ev, Log) and ev.code == "early-stop" and "patience=3" in ev.msg
            for ev in events)
    if mode == "":
        _, full = probe(tmp_path, "ignite_engine.py", "--full")
        assert sum(isinstance(ev, Step) for ev in full) == 40 * 40


@pytest.mark.tensorflow
def test_an_optuna_study_of_keras_fits_is_n_trials_times_one(tmp_path: Path) -> None:
    """Each trial's fit() is the objective's training: the study plans 3 trials x 4 epochs,
    read from the fit() with no loop of the program's around it (before: 4 epochs, one
    trial's), and ends after the trial the probe stopped."""
    pytest.importorskip("optuna")
    _, events = probe(tmp_path, "optuna_keras.py")
    seen = phases_of(events)
    assert sorted(seen) == [1] and seen[1]["plan"].epochs == 3 * 4, seen
    assert "n_trials=3" in (seen[1]["plan"].source or "")
    output = next((tmp_path / "probe").glob("*.output")).read_text()
    assert "best trial: 0 of 1" in output and "Traceback" not in output


@pytest.mark.torch
def test_two_lightning_trainers_are_two_phases(tmp_path: Path) -> None:
    """Each phase's trainer answers for it (its max_epochs, its loader); each is stopped
    through its own flag."""
    pytest.importorskip("lightning")
    check_two_phases(tmp_path, "lightning_two_trainers.py", (64, 64))


@pytest.mark.torch
def test_fastai_fine_tune_is_two_phases(tmp_path: Path) -> None:
    """fastai's fine_tune: two fit()s from one line of the program, each read from its own fit()
    (3 epochs, then 4) and its own DataLoader's length - fastai's loader drives torch's
    iterators itself - and each stopped at its next epoch through fit()'s own exit; the
    second fit() is a phase, not the stopped one going on (fails before: no steps per epoch
    known, and the second fit() was unwound as the first's)."""
    pytest.importorskip("fastai")
    seen = check_two_phases(tmp_path, "fastai_fine_tune.py", (112, 112))
    assert (seen[1]["plan"].epochs, seen[2]["plan"].epochs) == (3, 4)


@pytest.mark.torch
def test_fastai_lr_find_is_a_phase_of_its_num_it(tmp_path: Path) -> None:
    """lr_find is a fit() of enough epochs to cover num_it batches, which its LRFinder ends
    after num_it (sooner where the loss diverges): a phase of 60 steps at most, read from the
    LRFinder - not the epochs' 112 - then the training itself, 3 epochs of 112 steps."""
    pytest.importorskip("fastai")
    _, events = probe(tmp_path, "fastai_lr_find.py")
    seen = phases_of(events)
    assert sorted(seen) == [1, 2], seen
    assert (seen[1]["plan"].steps, seen[2]["plan"].epochs) == (60, 3)
    assert any(isinstance(ev, Log) and ev.code == "early-stop" for ev in events)  # stop_div
    _, full_events = probe(tmp_path, "fastai_lr_find.py", "--full")
    whole = phases_of(full_events)
    assert 0 < whole[1]["steps"] <= 60 and whole[2]["steps"] == 3 * 112, whole
    assert isinstance(full_events[-1], End) and full_events[-1].exit_code == 0


@pytest.mark.torch
def test_loops_the_probe_can_only_unwind_say_the_estimate_covers_the_first(
        tmp_path: Path) -> None:
    """No loader to run dry and no line after the loop in its function: the probe unwinds the
    first loop, the second never runs. The log says training was written after it; the
    estimate covers phase 1 and widens its bounds."""
    pytest.importorskip("torch")
    row, events = probe(tmp_path, "torch_unwound.py")
    assert not any(isinstance(ev, Phase) for ev in events)
    said = [ev for ev in events if isinstance(ev, Log) and ev.code == "more-phases"]
    assert len(said) == 1 and "torch_unwound.py:25" in said[0].msg
    assert any("covers phase 1 of at least 2" in note for note in row["notes"])
    assert row["uncertainty"]["unseen_high"] > 0
    assert row["runtime_high_s"] - row["runtime_s"] >= row["uncertainty"]["unseen_high"]


@pytest.mark.torch
def test_loops_with_no_loader_are_left_at_their_next_line_and_both_probed(
        tmp_path: Path) -> None:
    """No loader to run dry: the probe leaves each loop as a break would, so the second loop
    is a phase of its own and the post-training code runs."""
    pytest.importorskip("torch")
    check_two_phases(tmp_path, "torch_range_loops.py", (400, 300))


@pytest.mark.torch
@pytest.mark.parametrize("flags", [(), ("--max-steps", "20", "--boundary-budget", "0")],
                         ids=["thirty-steps", "stopped-in-each-layer"])
def test_a_layer_wise_trainer_probes_each_layer_as_a_phase(tmp_path: Path,
                                                            flags: tuple[str, ...]) -> None:
    """One optimizer and one loop per layer, called from a loop over the layers (pytorch/
    examples' forward-forward): layer 1's optimizer first steps after layer 0's loop ran a whole
    pass, or after the probe left it - a phase of its own, each as long as its own loop (300
    and 200 steps, not the layers times 300; a cheaper layer is not timed at layer 0's step).
    Stopped in each layer, the probe leaves each loop at its next line; the post-training
    evaluation runs. Its full batch, drawn once from a DataLoader of 2 batches a pass, makes no
    epoch of 2 steps: each loop is one (forward-forward's 999 boundaries a layer, on an H200)."""
    pytest.importorskip("torch")
    events, output = agent_run(tmp_path, SCRIPTS / "torch_layerwise.py", *flags)
    seen = phases_of(events)
    assert sorted(seen) == [1, 2], seen
    state = fold_all(events)
    assert state.steps_per_epoch == 300 and state.phases[0].plan_steps_per_epoch == 200
    for index, steps in ((1, 300), (2, 200)):
        phase = seen[index]
        assert (phase["plan"].steps, phase["plan"].epochs) == (steps, 1)
        if flags:  # stopped early in each layer
            assert phase["stopped"] and phase["steps"] == 20
    assert seen[2]["previous"] == ("probe-done" if flags else "complete")
    assert output.count("training a layer") == 2 and "post-training evaluation" in output
    end = events[-1]
    assert isinstance(end, End) and end.status == "probe-done" and end.exit_code == 0
    assert "no-post" not in {ev.code for ev in events if isinstance(ev, Log)}


@pytest.mark.torch
def test_k_fold_cross_validation_is_one_job_of_epochs_times_folds_passes(tmp_path: Path) -> None:
    """A model and optimizer per fold, a new DataLoader per fold, the folds inside a loop over
    epochs (Lightning Fabric's k-fold example): fold 1's optimizer was taken for a layer-wise
    trainer's next layer (a phase one pass long), each fold's loader for validation, and the
    probe went on for a boundary that never came. One phase now: 6 x 4 passes of 150 steps,
    each fold's pass an epoch, the boundary timed, the loop run dry."""
    pytest.importorskip("torch")
    events, output = agent_run(tmp_path, SCRIPTS / "torch_kfold.py")
    seen = phases_of(events)
    assert sorted(seen) == [1], seen
    plan = seen[1]["plan"]
    assert (plan.epochs, plan.steps) == (24, 3600) and "range(FOLDS)" in plan.source
    steps = [ev for ev in events if isinstance(ev, Step)]
    assert 30 <= len(steps) < 3600 and {ev.epoch for ev in steps} >= {0, 1}
    assert [ev.step for ev in steps if ev.epoch == 1][:1] == [0]  # fold 1's first step counted
    assert all(ev.steps == 5 for ev in events if type(ev).__name__ == "Val")
    assert "post-training work done" in output
    end = events[-1]
    assert isinstance(end, End) and end.status == "probe-done" and end.exit_code == 0
    state = fold_all(events)
    assert state.steps_per_epoch == 150


@pytest.mark.torch
def test_post_training_work_past_the_budget_is_cut_after_the_last_loop(tmp_path: Path) -> None:
    """The hook's `done` comes at the exit now (a later phase may follow a stopped loop), so the
    launcher counts the post-training budget from the probe's end of the last loop."""
    pytest.importorskip("torch")
    script = tmp_path / "slow_after.py"
    script.write_text((SCRIPTS / "torch_pretrain_finetune.py").read_text().replace(
        'print("post-training work done", flush=True)',
        'time.sleep(120)  # an evaluation far longer than the budget\n'
        'print("post-training work done", flush=True)'))
    events, _ = agent_run(tmp_path, script, "--post-budget", "3", timeout=110)
    assert any(isinstance(ev, Phase) for ev in events)  # both loops probed first
    done = [ev for ev in events if type(ev).__name__ == "Done"]
    end = events[-1]
    assert len(done) == 1 and isinstance(end, End) and end.status == "probe-done"
    assert "post-training work stopped after 3s" in end.reason
    assert end.dt >= 3  # the post-training work: at least the budget


@pytest.mark.tensorflow
def test_a_loop_that_draws_with_next_is_unwound_not_crashed(tmp_path: Path) -> None:
    pytest.importorskip("tensorflow")
    events, output = agent_run(tmp_path, SCRIPTS / "keras_next_loop.py")
    end = events[-1]
    assert isinstance(end, End) and end.status == "probe-done" and end.exit_code == 0
    assert "no-post" in {ev.code for ev in events if isinstance(ev, Log)}
    assert "StopIteration" not in output and "never printed" not in output


@pytest.mark.torch
def test_a_generator_around_a_dataloader_runs_dry_and_the_next_fit_is_probed(
        tmp_path: Path) -> None:
    """nn_tutorial's WrappedDataLoader: ``batches = iter(self.dl)`` in a generator, then a for
    over it. The stopped loader's next pass was taken for ``next(iter(loader))`` and the stop
    raised through the program: its later fit() never ran (nn_tutorial's 12th loop: -12.4 %).
    The pass comes empty, the generator ends, fit() returns, and the next fit is a phase - as
    long as that fit's loops (3 epochs), not one pass of its innermost, as a layer-wise
    trainer's part is (fit is called again from the program's code, as the tutorial's is)."""
    pytest.importorskip("torch")
    events, output = agent_run(tmp_path, SCRIPTS / "torch_wrapped_loader.py")
    end = events[-1]
    assert isinstance(end, End) and end.exit_code == 0
    assert "fit done 512" in output and "post-training work done" in output
    seen = phases_of(events)
    assert sorted(seen) == [1, 2] and seen[2]["stopped"]
    assert seen[2]["plan"].epochs == 3 and seen[2]["plan"].steps == 300
    assert "no-post" not in {ev.code for ev in events if isinstance(ev, Log)}


@pytest.mark.tensorflow
def test_a_later_fit_is_not_cut_by_the_post_training_budget(tmp_path: Path) -> None:
    """fit()'s `done` starts the post-training budget; a later fit() - a phase - stops that
    clock, so a small budget cuts the work after the last phase, not the phase."""
    pytest.importorskip("tensorflow")
    events, _ = agent_run(tmp_path, SCRIPTS / "keras_fit_twice.py", "--post-budget", "1")
    seen = phases_of(events)
    assert sorted(seen) == [1, 2] and seen[2]["stopped"]  # phase 2 probed to its own stop
    assert seen[2]["steps"] >= 30


@pytest.mark.tensorflow
def test_a_traced_loop_over_numpy_slices_is_interrupted_quietly(tmp_path: Path) -> None:
    pytest.importorskip("tensorflow")
    events, output = agent_run(tmp_path, SCRIPTS / "keras_numpy_slices.py")
    end = events[-1]
    assert isinstance(end, End) and end.status == "probe-done" and end.exit_code == 0
    assert "Traceback" not in output and "never printed" not in output


ITERATORS_LEFT = """
import gc
import numpy as np
import keras
from keras import layers
x = np.random.rand(4096, 32).astype("float32"); y = (x[:, 0] > 0.5).astype("int32")
m = keras.Sequential([keras.Input((32,)), layers.Dense(64, activation="relu"),
                      layers.Dense(2, activation="softmax")])
m.compile("adam", "sparse_categorical_crossentropy")
m.fit(x, y, batch_size=32, epochs=50, verbose=0)
left = [type(o).__name__ for o in gc.get_objects()
        if type(o).__name__ in ("OwnedIterator", "TFEpochIterator")]
print("left after fit:", left, flush=True)
"""


@pytest.mark.tensorflow
def test_a_stopped_fit_leaves_no_tf_data_iterator_to_a_later_collection(tmp_path: Path) -> None:
    """The probe stops fit() by raising through Keras' epoch loop: the stopped epoch's tf.data
    iterator sat in those frames (a cycle) until some later garbage collection, where
    destroying it waits for its autotuner's next wake-up - up to 60 s of idle post-training
    (keras.io's VAE, 34 s once in seven probes). It is torn down when the fit returns, as a
    plain fit tears down its last epoch's."""
    pytest.importorskip("tensorflow")
    script = tmp_path / "fit_stopped.py"
    script.write_text(ITERATORS_LEFT)
    events, output = agent_run(tmp_path, script)
    assert any(isinstance(ev, Log) and ev.code == "phase" for ev in events)  # stopped early
    assert "left after fit: []" in output, output[-2000:]



@pytest.mark.torch
def test_a_tutorials_loops_from_hand_written_updates_to_optimizers_are_each_probed(
        tmp_path: Path) -> None:
    """pytorch/tutorials' nn_tutorial trains in twelve loops, refactoring as it goes: the first
    updates its weights by hand (a backward pass is a step), later ones make an optimizer. The
    probe used to stay with backward passes - an optimizer's steps were no steps and its loader's
    passes read as validation - and it took each new model's first step after a whole pass for
    a layer-wise trainer's next layer (one pass long, the loop unwound). Each loop is a phase
    of its own now, optimizer steps counted, each as long as it is written."""
    pytest.importorskip("torch")
    events, output = agent_run(tmp_path, SCRIPTS / "torch_refactored.py")
    seen = phases_of(events)
    assert sorted(seen) == [1, 2, 3], seen
    for index in (1, 2, 3):
        phase = seen[index]
        assert phase["steps"] > 0 and (phase["plan"].epochs, phase["plan"].steps) == (2, 200)
    codes = [ev.code for ev in events if isinstance(ev, Log)]
    assert codes.count("backward-step") == 1 and "no-post" not in codes
    assert not [ev for ev in events if type(ev).__name__ == "Val"]  # no training pass as one
    assert "post-training work done" in output
    end = events[-1]
    assert isinstance(end, End) and end.exit_code == 0


@pytest.mark.tensorflow
def test_tensorflow_loops_with_no_dataset_are_left_as_a_break_would(tmp_path: Path) -> None:
    """Eager gradient steps in `for` loops over `range`, weights updated by hand: each loop of
    tests is a phase, left at its next line; the program goes on to the next and to its own
    post-training work (it was unwound at the first stop, its later loops never seen)."""
    pytest.importorskip("tensorflow")
    events, output = agent_run(tmp_path, SCRIPTS / "tf_by_hand_range_loops.py")
    codes = [ev.code for ev in events if isinstance(ev, Log)]
    assert "gradient-step" in codes and "no-post" not in codes
    assert [ev.index for ev in events if isinstance(ev, Phase)] == [2]
    assert sum("left at its next line, as a break would" in ev.msg
               for ev in events if isinstance(ev, Log)) >= 2
    assert "post-training work done: 1 1" in output  # each loop of tests left after one
    end = events[-1]
    assert isinstance(end, End) and end.status == "probe-done" and end.exit_code == 0
