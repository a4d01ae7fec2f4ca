"""The probe agent end to end: real subprocesses, real TensorFlow where it matters."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import ROOT, until
from probecast.core.model.estimate.runtime import estimate_runtime
from probecast.core.model.events import Done, End, Init, Log, Plan, Start, Step, Val, read_log
from probecast.core.model.logstore import load_probe

TINY_KERAS = """
import sys
import numpy as np
import keras
from keras import layers

rng = np.random.default_rng(0)
x = rng.normal(size=(640, 8)).astype("float32")
y = (x[:, 0] > 0).astype("int32")
xv = rng.normal(size=(160, 8)).astype("float32")
yv = (xv[:, 0] > 0).astype("int32")
model = keras.Sequential([keras.Input((8,)), layers.Dense(16, activation="relu"),
                          layers.Dense(2, activation="softmax")])
model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
EPOCHS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
{fit}
open(sys.argv[2] if len(sys.argv) > 2 else "after_fit.marker", "w").write("ran")
"""


def agent(*args: str, cwd: Path, env: dict[str, str] | None = None,
          timeout: float = 180) -> subprocess.CompletedProcess[str]:
    e = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "3", **(env or {})}
    return subprocess.run([sys.executable, "-m", "probecast.core.agent", *args], cwd=cwd, env=e,
                          capture_output=True, text=True, timeout=timeout)


def script(tmp: Path, fit: str) -> Path:
    p = tmp / "train.py"
    p.write_text(TINY_KERAS.replace("{fit}", textwrap.dedent(fit)))
    return p


def kinds(events):  # type: ignore[no-untyped-def]
    return [type(e).__name__ for e in events]


def assert_dt_partition(events) -> None:  # type: ignore[no-untyped-def]
    total = sum(e.dt for e in events if isinstance(e, (Init, Step, Val, Done, End)))
    end = events[-1]
    assert isinstance(end, End)
    assert total == pytest.approx(end.t, rel=0.01)


@pytest.mark.tensorflow
def test_zero_code_hook_probes_unchanged_script_and_stops_it(tmp_path: Path) -> None:
    s = script(tmp_path, "model.fit(x, y, batch_size=32, epochs=EPOCHS, validation_data=(xv, yv), verbose=0)")
    log = tmp_path / "probe.jsonl"
    r = agent("run", "--max-steps", "8", "--val-batches", "2", "--boundary-budget", "0",
              "--out", str(log), "--instance", "g5.xlarge", "--", sys.executable, str(s), "3",
              str(tmp_path / "m"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    events, report = read_log(log)
    assert report.malformed == [] and not report.truncated
    # stdout carries the same events as the file
    assert len([l for l in r.stdout.splitlines() if l.startswith("{")]) == report.lines
    core = [e for e in events if isinstance(e, (Start, Init, Step, Val, Done, End))]
    assert kinds(core) == ["Start", "Init"] + ["Step"] * 8 + ["Done", "Val", "Val", "Val", "End"]
    start = core[0]
    assert start.batch_size == 32 and start.steps_per_epoch == 20 and start.val_steps == 5
    assert start.epochs == 3 and start.instance == "g5.xlarge" and "keras" in start.framework
    vals = [e for e in events if isinstance(e, Val)]
    assert [v.steps for v in vals] == [2, 2, 4]  # k, k, 2k: fixed vs per-batch cost
    assert "accuracy" in vals[0].metrics
    assert events[-1].status == "probe-done" and "max-steps" in events[-1].reason
    assert_dt_partition(events)
    # the rest of training is skipped, the program's post-training code runs and is timed
    assert (tmp_path / "m").read_text() == "ran"
    assert events[-1].exit_code == 0 and events[-1].dt > 0


@pytest.mark.tensorflow
def test_keras_validation_freq_is_counted_after_those_epochs_only(tmp_path: Path) -> None:
    """fit(validation_freq=3): validation after epochs 3, 6, ... - the plan says so, the probe
    goes on to the 4th epoch if it has not reached it, and 30 epochs count 10 passes (the agent's
    own passes at its stop, in the epoch it stopped in, say nothing of which epochs validate)."""
    s = script(tmp_path, "model.fit(x, y, batch_size=32, epochs=EPOCHS, validation_data=(xv, yv), "
                         "validation_freq=3, verbose=0)")
    log = tmp_path / "probe.jsonl"
    r = agent("run", "--max-steps", "8", "--boundary-budget", "600",  # any host goes on
              "--out", str(log), "--", sys.executable, str(s), "30", str(tmp_path / "m"),
              cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    events, _ = read_log(log)
    plan = next(e for e in events if isinstance(e, Plan) and e.every_epochs)
    assert (plan.every_epochs, plan.every_epochs_at) == (3, 2)
    assert [v.epoch for v in events if isinstance(v, Val)][0] == 2
    est = estimate_runtime(load_probe(log).state, 30)
    assert est.equation == "5.3" and est.terms.n_val == 10


@pytest.mark.tensorflow
def test_keras_steps_per_execution_makes_a_call_of_n_batches_one_step(tmp_path: Path) -> None:
    """compile(steps_per_execution=4): Keras runs 4 batches a call and tells its callbacks the
    call's last batch (3, 7, ...). Before: each call's time was taken for one batch's and the
    epoch kept its 20 batches - a job planned at 4 times its steps' time (+403 % on a 16-batch
    call), and each validation pass scaled by its batches over its calls."""
    s = script(tmp_path, """
        model.compile("adam", "sparse_categorical_crossentropy", steps_per_execution=4)
        model.fit(x, y, batch_size=32, epochs=EPOCHS, validation_data=(xv, yv), verbose=0)
    """)
    log = tmp_path / "probe.jsonl"
    r = agent("run", "--max-steps", "3", "--val-batches", "2", "--boundary-budget", "600",
              "--out", str(log), "--", sys.executable, str(s), "30", str(tmp_path / "m"),
              cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    events, _ = read_log(log)
    start = next(e for e in events if isinstance(e, Start))
    assert start.steps_per_epoch == 5 and start.val_steps == 5  # 20 batches, 4 a call
    assert [e.step for e in events if isinstance(e, Step) and e.epoch == 0] == [0, 1, 2, 3, 4]
    assert [v.steps for v in events if isinstance(v, Val)][0] == 5  # Keras' own: all 5 batches
    assert any(isinstance(e, Log) and "steps_per_execution" in e.msg for e in events)
    est = estimate_runtime(load_probe(log).state, 30)
    assert est.terms.n_it == 5


@pytest.mark.tensorflow
def test_probe_goes_on_to_time_epoch_boundaries_when_cheap(tmp_path: Path) -> None:
    s = script(tmp_path, "model.fit(x, y, batch_size=32, epochs=EPOCHS, validation_data=(xv, yv), verbose=0)")
    log = tmp_path / "probe.jsonl"
    r = agent("run", "--max-steps", "8", "--val-batches", "2", "--out", str(log), "--",
              sys.executable, str(s), "3", str(tmp_path / "m"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    events, _ = read_log(log)
    steps = [(e.epoch, e.step) for e in events if isinstance(e, Step)]
    # two boundaries when cheap: to the first step of epoch 3
    assert steps == [(e, i) for e in range(2) for i in range(20)] + [(2, 0)]
    vals = [e.steps for e in events if isinstance(e, Val)]
    assert vals == [5, 5, 2, 2, 4]  # Keras' own full validations, then the timed passes
    msgs = [e.msg for e in events if type(e).__name__ == "Log"]
    assert any("to time an epoch boundary" in m for m in msgs)
    assert "2 epoch boundaries" in events[-1].reason
    from probecast.core.model.state import fold_all
    from probecast.core.model.estimate.runtime import estimate_runtime
    st = fold_all(events)
    assert len(st.boundary_steps) == 2
    est = estimate_runtime(st, 3)
    assert est.terms.boundaries_seen == 2
    assert_dt_partition(events)


@pytest.mark.tensorflow
def test_early_stopping_gives_the_soonest_the_job_can_end_and_the_low_bound_is_that_run(
        tmp_path: Path) -> None:
    """keras.io's time-series examples fit() for 500 epochs with EarlyStopping(patience=50):
    the planned epochs are an upper bound, and the run may end at any epoch from its patience
    on - a probe estimated 148 s for a run that stopped at 63 s, outside its bounds. The agent
    reads the soonest (start_from_epoch + patience + 1), and the estimate's low bound is the
    run of that length."""
    from probecast.core.model.estimate.runtime import estimate_runtime
    from probecast.core.model.state import fold_all

    s = script(tmp_path, """
        import keras as K
        stop = K.callbacks.EarlyStopping(monitor="val_loss", patience=3, start_from_epoch=1)
        model.fit(x, y, batch_size=32, epochs=EPOCHS, validation_data=(xv, yv), verbose=0,
                  callbacks=[stop])""")
    log = tmp_path / "probe.jsonl"
    # (no boundary budget: the probe stops at its steps, not going on for the early stop)
    r = agent("run", "--max-steps", "8", "--boundary-budget", "0", "--out", str(log), "--",
              sys.executable, str(s), "40", str(tmp_path / "m"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    events, _ = read_log(log)
    assert any(isinstance(e, Log) and e.code == "early-stop" for e in events)
    st = fold_all(events)
    assert st.plan is not None and st.plan.earliest_epochs == 1 + 3 + 1
    planned, soonest = estimate_runtime(st, 40), estimate_runtime(st, 5)
    assert planned.low_s == soonest.low_s < planned.runtime_s  # the low end: 5 epochs' run
    assert any("after 5 epochs at the soonest" in n for n in planned.notes)
    # and so in what a ranking shows (it gives the estimate the job's steps an epoch)
    from probecast.core.model.pricing import Catalog
    from probecast.core.model.rank.ranking import Pricing, RankOptions, estimate_row
    from probecast.core.model.rows import Candidate
    row = estimate_row(Candidate("p", "p", st), Pricing(Catalog.embedded()), RankOptions())
    assert row.runtime_low_s == pytest.approx(soonest.low_s) and row.runtime_s > soonest.high_s


def early_stop_probe(tmp: Path, settings: str, epochs: int) -> list:  # type: ignore[type-arg]
    """The agent's default-length probe (8 steps) of the tiny fit() with EarlyStopping(settings)
    on val_loss for ``epochs`` epochs: its events."""
    s = script(tmp, f"""
        import keras as K
        stop = K.callbacks.EarlyStopping(monitor="val_loss", {settings})
        model.fit(x, y, batch_size=32, epochs=EPOCHS, validation_data=(xv, yv), verbose=0,
                  callbacks=[stop])""")
    log = tmp / "probe.jsonl"
    r = agent("run", "--max-steps", "8", "--out", str(log), "--", sys.executable, str(s),
              str(epochs), str(tmp / "m"), cwd=tmp)
    assert r.returncode == 0, r.stderr[-2000:]
    return read_log(log)[0]


@pytest.mark.tensorflow
def test_an_early_stopping_whose_patience_outlasts_the_epochs_is_no_early_stop(
        tmp_path: Path) -> None:
    """keras.io's weather forecaster fits 1 epoch with EarlyStopping(patience=5): it cannot end
    that epoch sooner, so nothing says the epochs are an upper bound and nothing is waited for."""
    events = early_stop_probe(tmp_path, "patience=5", epochs=3)
    assert not any(isinstance(e, Log) and (e.code == "early-stop" or "EarlyStopping" in e.msg)
                   for e in events)
    assert all(getattr(e, "earliest_epochs", None) is None for e in events)


@pytest.mark.tensorflow
def test_a_probe_goes_on_for_an_early_stop_within_reach_and_the_run_seen_whole_answers(
        tmp_path: Path) -> None:
    """An EarlyStopping whose soonest end comes within four boundary budgets: the probe goes on
    past its steps for the program's own end; the run stops itself after 3 of 40 epochs (no
    improvement ever counts), is seen whole and is its own answer - its bounds reach a repeat
    that stops at any epoch up to the 40th. Before, the estimate was the 40 epochs' (13x)."""
    from probecast.core.model.estimate.training import MEASURED
    from probecast.core.model.pricing import Catalog
    from probecast.core.model.rank.ranking import Pricing, RankOptions, estimate_row
    from probecast.core.model.rows import Candidate
    from probecast.core.model.state import fold_all

    events = early_stop_probe(tmp_path, "patience=2, min_delta=100.0", epochs=40)
    assert (tmp_path / "m").exists()  # the program went on past fit() to its own end
    said = [e.msg for e in events if isinstance(e, Log)]
    assert any("an early stop can end training from epoch 3 of 40: going on" in m for m in said)
    done = [e for e in events if isinstance(e, Done)]
    assert done and done[0].status == "complete"
    st = fold_all(events)
    assert len(set(st.epochs_done)) == 3 and st.steps == 3 * 20
    row = estimate_row(Candidate("p", "p", st), Pricing(Catalog.embedded()), RankOptions())
    assert row.equation == MEASURED
    assert any("an early stop ended this run after 3 of 40 epochs" in n for n in row.notes)
    end = [e for e in events if isinstance(e, End)][0]
    assert row.runtime_s < end.t  # the measured run (the agent's own start-up taken off)
    later = (st.time_by_epoch[1] + st.time_by_epoch[2]) / 2  # an epoch past the first's tracing
    assert row.runtime_high_s > row.runtime_s + 37 * later  # reaches a 40-epoch repeat


@pytest.mark.tensorflow
def test_full_run_through_the_hook_is_complete_and_partitioned(tmp_path: Path) -> None:
    s = script(tmp_path, "model.fit(x, y, batch_size=64, epochs=EPOCHS, validation_split=0.2, verbose=0)")
    log = tmp_path / "full.jsonl"
    r = agent("run", "--full", "--out", str(log), "--", sys.executable, str(s), "2",
              str(tmp_path / "m"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    events, _ = read_log(log)
    steps = [e for e in events if isinstance(e, Step)]
    start = events[0]
    assert start.steps_per_epoch == 8 and start.val_steps == 2  # 512 train / 128 val rows
    assert [(s.epoch, s.step) for s in steps] == [(e, i) for e in range(2) for i in range(8)]
    assert [e.epoch for e in events if type(e).__name__ == "Epoch"] == [0, 1]
    assert len([e for e in events if isinstance(e, Val)]) == 2
    assert events[-1].status == "complete"
    assert_dt_partition(events)
    assert (tmp_path / "m").exists()  # a full run lets the script finish


@pytest.mark.tensorflow
def test_explicit_callback_with_env_stop_policy(tmp_path: Path) -> None:
    s = script(tmp_path, """
        from probecast.core.agent import ProbeCallback
        model.fit(x, y, batch_size=32, epochs=EPOCHS, verbose=0, callbacks=[ProbeCallback()])
    """)
    log = tmp_path / "cb.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "3",
           "PROBECAST_MAX_STEPS": "5", "PROBECAST_OUT": str(log)}
    r = subprocess.run([sys.executable, str(s), "3", str(tmp_path / "m")], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    events, report = read_log(log)
    steps = [e for e in events if isinstance(e, Step)]
    assert len(steps) == 5
    assert events[-1].status == "probe-done"
    assert_dt_partition(events)


@pytest.mark.faults('the training script raises',
                    checks='log ends in end failed with the error')
@pytest.mark.tensorflow
def test_script_that_raises_still_ends_the_log_as_failed(tmp_path: Path) -> None:
    s = script(tmp_path, """
        class Boom(keras.callbacks.Callback):
            def on_train_batch_end(self, batch, logs=None):
                if batch == 3:
                    raise RuntimeError("a bad batch (simulated)")  # not memory: failed
        model.fit(x, y, batch_size=32, epochs=EPOCHS, verbose=0, callbacks=[Boom()])
    """)
    log = tmp_path / "fail.jsonl"
    r = agent("run", "--max-steps", "50", "--out", str(log), "--", sys.executable, str(s),
              cwd=tmp_path)
    assert r.returncode == 1
    assert "a bad batch" in r.stderr
    events, report = read_log(log)
    assert not report.truncated
    assert events[-1].status == "failed"
    assert "RuntimeError: a bad batch (simulated)" in events[-1].reason
    assert_dt_partition(events)


# ---- framework-free timer (no TensorFlow) -----------------------------------------------------

LOOP = """
import sys, time
from probecast.core.agent import StepTimer
probe = StepTimer(steps_per_epoch=50, val_steps=4, batch_size=16, epochs=3, framework="plain")
for epoch in range(3):
    for batch in probe.steps(range(50), epoch):
        time.sleep(float(sys.argv[1]))
    if probe.stopped:
        break
    with probe.validation(epoch, steps=4) as m:
        time.sleep(0.01)
        m["val_accuracy"] = 0.5 + epoch / 10
    probe.epoch_end(epoch, {"val_accuracy": 0.5 + epoch / 10})
if probe.stopped:
    for _ in range(2):
        with probe.validation(0, steps=2):
            time.sleep(0.005)
probe.finish()
"""


def run_loop(tmp: Path, sleep: float, **env: str) -> list:  # type: ignore[type-arg]
    p = tmp / "loop.py"
    p.write_text(LOOP)
    log = tmp / "loop.jsonl"
    e = {**os.environ, "PYTHONPATH": str(ROOT), "PROBECAST_OUT": str(log), **env}
    r = subprocess.run([sys.executable, str(p), str(sleep)], env=e, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    events, report = read_log(log)
    assert not report.truncated
    return events


def test_step_timer_full_loop(tmp_path: Path) -> None:
    events = run_loop(tmp_path, 0.001)
    steps = [e for e in events if isinstance(e, Step)]
    assert len(steps) == 150 and steps[50].epoch == 1 and steps[50].step == 0
    assert [v.metrics["val_accuracy"] for v in events if isinstance(v, Val)] == [0.5, 0.6, 0.7]
    assert events[-1].status == "complete"
    assert_dt_partition(events)


def test_step_timer_max_steps_then_partial_validation(tmp_path: Path) -> None:
    events = run_loop(tmp_path, 0.001, PROBECAST_MAX_STEPS="12")
    assert len([e for e in events if isinstance(e, Step)]) == 12
    vals = [e for e in events if isinstance(e, Val)]
    assert [v.steps for v in vals] == [2, 2]
    assert events[-1].status == "probe-done"
    assert_dt_partition(events)


def test_step_timer_adaptive_stop_on_tight_interval(tmp_path: Path) -> None:
    # ±10 %: reached within the loop's 150 steps even when a loaded machine makes sleep(0.02)
    # jitter by half its length (a 5 % target needed under 50 steps only on a quiet one)
    events = run_loop(tmp_path, 0.02, PROBECAST_TARGET_CI="0.1")
    n = len([e for e in events if isinstance(e, Step)])
    assert 10 <= n < 150  # stops after min-steps once the 95% CI is within the target
    assert "ci" in events[-1].reason


# A loop that wraps its training in `except Exception` (a retry on a bad batch, say): the
# probe's stop must still end it - ProbeStop is a BaseException, like KeyboardInterrupt.
SWALLOWING_LOOP = """
import time
from probecast.core.agent import StepTimer
probe = StepTimer(steps_per_epoch=20, batch_size=16, framework="plain")
swallowed = 0
for epoch in range(200):
    try:
        for batch in probe.steps(range(20), epoch):
            time.sleep(0.001)
    except Exception:
        swallowed += 1
print("after the loop: swallowed", swallowed, flush=True)
"""


def test_probe_stop_is_not_swallowed_by_except_exception(tmp_path: Path) -> None:
    (tmp_path / "loop.py").write_text(SWALLOWING_LOOP)
    log = tmp_path / "loop.jsonl"
    r = agent("run", "--max-steps", "5", "--boundary-budget", "0", "--out", str(log), "--",
              sys.executable, "loop.py", cwd=tmp_path, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "after the loop" not in r.stderr  # unwound through the user's except Exception
    events, _ = read_log(log)
    assert len([e for e in events if isinstance(e, Step)]) == 5
    assert any(isinstance(e, Log) and e.code == "no-post" for e in events)
    assert isinstance(events[-1], End) and events[-1].status == "probe-done"
    from probecast.core.agent.probe_session import ProbeStop

    assert not issubclass(ProbeStop, Exception) and issubclass(ProbeStop, BaseException)


def test_the_programs_last_lines_are_logged_before_its_end_however_late_they_are_read(
        tmp_path: Path) -> None:
    """A program's last lines - its steps, `done` - arrive as it exits; the launcher wrote `end`
    when the process was gone, and on a loaded host (CI) the reader had not handed them on yet:
    a probe of 5 steps logged none. The launcher here reads each line 0.2 s late; the log still
    holds the 5 steps and the done, before its end."""
    import io

    from probecast.core.agent.agent_main import _parser, policy_config
    from probecast.core.agent.emit import Emitter
    from probecast.core.agent.process import LaunchOptions, Launcher

    (tmp_path / "loop.py").write_text(SWALLOWING_LOOP)
    log = tmp_path / "loop.jsonl"
    ns = _parser().parse_args(["run", "--max-steps", "5", "--boundary-budget", "0", "--",
                               sys.executable, "loop.py"])
    emitter = Emitter(out=io.StringIO(), path=str(log))
    emitter.meta = {"probe": "late", "steps_per_epoch": 0, "val_steps": 0, "devices": []}
    launcher = Launcher(emitter, LaunchOptions(
        command=[sys.executable, "loop.py"], cwd=str(tmp_path),
        env={"PYTHONPATH": str(ROOT)},
        hook_config={"policy": policy_config(ns), "meta": {"probe": "late"}}))
    read = launcher.on_line

    def late(cid: int, line: str) -> None:
        time.sleep(0.2)
        read(cid, line)

    launcher.on_line = late  # type: ignore[method-assign]
    assert launcher.run() == 0
    emitter.close()
    events, report = read_log(log)
    assert not report.malformed
    assert len([e for e in events if isinstance(e, Step)]) == 5
    assert any(isinstance(e, Done) for e in events)
    assert isinstance(events[-1], End) and events[-1].status == "probe-done"


# Stand-ins for frameworks that renamed what the hook patches: keras without Model, torch
# without torch.optim. Their import must succeed and the program run on, with one clear line in
# the log per framework - however many processes hit it.
HOOK_FAILS = """
import subprocess, sys, time
import keras, torch
print("imported", keras.__name__, torch.__version__, flush=True)
subprocess.run([sys.executable, "-c", "import torch; print('child imported', torch.__version__)"],
               check=True)
from probecast.core.agent import StepTimer
probe = StepTimer(steps_per_epoch=10, batch_size=8, framework="stand-in")
for epoch in probe.epochs(range(3)):
    for batch in probe.steps(range(10), epoch):
        time.sleep(0.001)
print("post-training work ran", flush=True)
"""


def test_a_failing_framework_hook_leaves_the_program_running_and_says_so_once(tmp_path: Path) -> None:
    for name, body in (("keras", "__version__ = '0.0-stand-in'\n"),
                       ("torch", "__version__ = '0.0-stand-in'\n")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(body)
    (tmp_path / "train.py").write_text(HOOK_FAILS)
    log = tmp_path / "train.jsonl"
    r = agent("run", "--max-steps", "5", "--boundary-budget", "0", "--out", str(log), "--",
              sys.executable, "train.py", cwd=tmp_path, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "imported keras 0.0-stand-in" in r.stderr and "child imported 0.0-stand-in" in r.stderr
    assert "post-training work ran" in r.stderr and "Traceback" not in r.stderr
    events, report = read_log(log)
    assert not report.malformed and isinstance(events[0], Start)
    failed = [e for e in events if isinstance(e, Log) and e.code == "hook-failed"]
    assert len(failed) == 2, failed  # keras once, torch once (two processes imported torch)
    keras_line, torch_line = sorted(failed, key=lambda e: e.msg)
    assert keras_line.level == "warning" and "keras" in keras_line.msg
    assert "AttributeError" in keras_line.msg and "runs on" in keras_line.msg
    assert "torch" in torch_line.msg and "ModuleNotFoundError" in torch_line.msg
    assert len([e for e in events if isinstance(e, Step)]) == 5
    assert isinstance(events[-1], End) and events[-1].status == "probe-done"


def start_training_loop(tmp: Path, sleep: str, *extra: str) -> tuple[subprocess.Popen[str], Path]:
    """The agent running LOOP with --full, returned once the first step has been reported."""
    p = tmp / "slow.py"
    p.write_text(LOOP)
    log = tmp / "slow.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "probecast.core.agent", "run", "--full", "--out", str(log),
                             *extra, "--", sys.executable, str(p), sleep],
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        if '"ev":"step"' in line:
            break
    return proc, log


@pytest.mark.faults('SIGTERM to the agent',
                    checks='log ends in end stopped')
def test_sigterm_ends_the_log_as_stopped(tmp_path: Path) -> None:
    proc, log = start_training_loop(tmp_path, "0.1")
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=20)
    events, report = read_log(log)
    assert events[-1].status == "stopped" and "SIGTERM" in events[-1].reason
    assert_dt_partition(events)


def test_zipped_agent_runs_with_python_only(tmp_path: Path) -> None:
    """The agent ships as one .pyz and runs with nothing of probecast installed."""
    from probecast.core.agent.bundle import build_zipapp

    pyz = build_zipapp(tmp_path / "probecast-agent.pyz")
    loop = tmp_path / "loop.py"
    loop.write_text(LOOP.replace("from probecast.core.agent import StepTimer", "from probecast_agent import StepTimer"))
    log = tmp_path / "z.jsonl"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-I", str(pyz), "run", "--max-steps", "5", "--boundary-budget", "0", "--out", str(log),
                        "--", sys.executable, str(loop), "0.001"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    events, _ = read_log(log)
    assert len([e for e in events if isinstance(e, Step)]) == 5
    assert events[-1].status == "probe-done"


@pytest.mark.faults("the agent's reader goes away (pipe closed)",
                    checks='agent and program stop')
def test_agent_stops_when_its_reader_goes_away(tmp_path: Path) -> None:
    """probecast quit or the SSH channel closed: the agent must not train on, unobserved."""
    proc, log = start_training_loop(tmp_path, "0.1", "--sample-interval", "0")
    assert proc.stdout is not None
    proc.stdout.close()
    assert proc.wait(timeout=20) == 130
    events, report = read_log(log)
    assert events[-1].status == "stopped" and "reader gone" in events[-1].reason
    assert len([e for e in events if isinstance(e, Step)]) < 150
    assert_dt_partition(events)


def test_sampler_reads_nvidia_smi_and_proc(tmp_path: Path) -> None:
    """A stand-in nvidia-smi with the real CSV output format (two GPUs, one [N/A])."""
    from probecast.core.agent.emit import Emitter
    from probecast.core.agent.sampler import HardwareSampler, parse_nvidia_smi
    from probecast.core.model.events import EventReader
    from probecast.core.model.state import fold_all

    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho '97, 20111, 24564, NVIDIA A10G'\necho '[N/A], 511, 24564, NVIDIA A10G'\n")
    fake.chmod(0o755)
    rows = parse_nvidia_smi("97, 20111, 24564, NVIDIA A10G\n[N/A], 511, 24564, NVIDIA A10G\n")
    assert rows[0] == {"util": 97.0, "mem_used": 20111.0, "mem_total": 24564.0, "name": "NVIDIA A10G"}
    assert rows[1]["util"] is None
    import io
    buf = io.StringIO()
    sampler = HardwareSampler(Emitter(out=buf), nvidia_smi=str(fake))
    fields = sampler.sample()
    assert fields["gpu_util"] == [97.0, None] and fields["gpu_mem_total_mb"] == [24564.0, 24564.0]
    assert fields["rss_mb"] > 0 and "swap_mb" in fields
    none = HardwareSampler(Emitter(out=buf), nvidia_smi=str(tmp_path / "missing"))
    none.sample()
    none.sample()
    logs = [l for l in buf.getvalue().splitlines() if '"ev":"log"' in l]
    assert len(logs) == 1 and "nvidia-smi did not answer" in logs[0]  # noted once, not per sample
    # the hint for a half-empty GPU (Kroutikov 2016: fill GPU memory)
    lines = ['{"ev":"start","t":0,"v":1,"probe":"x","steps_per_epoch":10,"val_steps":0}',
             *[f'{{"ev":"step","t":{i},"dt":0.1,"epoch":0,"step":{i}}}' for i in range(8)],
             '{"ev":"sample","t":9,"gpu_util":[95],"gpu_mem_mb":[6000],"gpu_mem_total_mb":[24000]}']
    st = fold_all(list(EventReader().read(lines)))
    assert "larger batch size" in st.hint()


@pytest.mark.tensorflow
@pytest.mark.timeout(900)  # two headless probes of real TensorFlow, up to 300 s each
def test_probe_local_headless_writes_logs_and_ranks(tmp_path: Path) -> None:
    out_dir = tmp_path / "logs"
    r = subprocess.run([sys.executable, "-m", "probecast.tui", "probe", "--local", "--headless",
                        "--workload", "tabular-mlp", "--batch-size", "32", "--batch-size", "64",
                        "--train-size", "640", "--val-size", "128", "--max-steps", "8",
                        "--out", str(out_dir)], cwd=ROOT, capture_output=True, text=True,
                       timeout=300, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert r.returncode == 0, r.stderr[-2000:]
    assert sorted(p.name for p in out_dir.glob("*.jsonl")) == ["local-b32.jsonl", "local-b64.jsonl"]
    assert f"logs written to {out_dir}/" in r.stdout and "Ranking: fastest first" in r.stdout
    for p in out_dir.glob("*.jsonl"):
        events, report = read_log(p)
        assert not report.truncated and events[-1].status == "probe-done"
    # --json: the ranking alone on stdout (progress on stderr), from the logs just written - a
    # plain timed loop on this machine this time (no TensorFlow to start again: ~5 s of CI)
    loop = tmp_path / "loop.py"
    loop.write_text(LOOP.replace("from probecast.core.agent import StepTimer",
                                 "from probecast_agent import StepTimer"))
    cfg = tmp_path / "probecast.toml"
    cfg.write_text(f'[[hosts]]\nname = "local"\nkind = "local"\n[probe]\n'
                   f'command = "{sys.executable} {loop} 0.01"\nbatch_sizes = [32]\nmax_steps = 8\n')
    r = subprocess.run([sys.executable, "-m", "probecast.tui", "probe", "--config", str(cfg),
                        "--headless", "--json", "--out", str(tmp_path / "json")], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    import json

    rows = json.loads(r.stdout)
    # a command that takes no {batch_size}: ranked by the batch size the program says (its
    # StepTimer's 16), the config's 32 only where the program says none
    assert [row["batch_size"] for row in rows] == [16] and rows[0]["runtime_low_s"] > 0
    assert "logs written to" in r.stderr


@pytest.mark.tensorflow
def test_methodology_1_full_runs_on_the_cheapest_then_probes(tmp_path: Path) -> None:
    cfg = tmp_path / "probecast.toml"
    cfg.write_text(
        '[[hosts]]\nname = "cheap"\nkind = "local"\ninstance = "cheap-box"\nprice_per_hour = 0.1\n'
        '[[hosts]]\nname = "dear"\nkind = "local"\ninstance = "dear-box"\nprice_per_hour = 0.5\n'
        '[probe]\nworkload = "tabular-mlp"\nbatch_sizes = [32]\nepochs = 6\nmax_steps = 8\n'
        # easy data (low noise): validation accuracy saturates, so the plateau rule finds N_ep
        # whatever TensorFlow's thread scheduling does to the curve
        'workload_args = ["--train-size", "640", "--val-size", "256", "--noise", "0.5"]\n')
    out_dir = tmp_path / "logs"
    r = subprocess.run([sys.executable, "-m", "probecast.tui", "probe", "--config", str(cfg), "--headless",
                        "--full-on-cheapest", "--out", str(out_dir)],
                       cwd=ROOT, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert r.returncode == 0, r.stderr[-2000:]
    assert "methodology 1" in r.stdout and "cheap (cheap-box)" in r.stdout
    full = list((out_dir / "full-runs").glob("*.jsonl"))
    assert [p.name for p in full] == ["cheap-b32.jsonl"]
    events, _ = read_log(full[0])
    assert events[-1].status == "complete"
    assert [p.name for p in out_dir.glob("*.jsonl")] == ["dear-b32.jsonl"]
    assert "dear-box" in r.stdout and "cheap-box" in r.stdout
    assert "epochs (full run" in r.stdout or "epochs (predicted" in r.stdout, r.stdout + r.stderr


@pytest.mark.faults('local probe stopped (its runner cancelled, the driving task cancelled)',
                    checks='log ends in end; no process left')
@pytest.mark.parametrize("how", ["cancel", "task-cancelled"])
async def test_a_stopped_local_probe_leaves_a_log_ending_in_end(tmp_path: Path, how: str) -> None:
    """Ctrl-C in probecast cancels the task driving the probe: whoever has the last word - the
    agent's `end`, or probecast's own when the agent's never arrives - the log ends in `end`."""
    import asyncio

    from probecast.core.model.pricing import Catalog
    from probecast.core.model.rank.ranking import Pricing
    from probecast.core.run.board import Board
    from probecast.core.run.runners import LocalRunner, ProbeSpec

    p = tmp_path / "slow.py"
    p.write_text(LOOP.replace("from probecast.core.agent import StepTimer",
                              "from probecast_agent import StepTimer"))
    spec = ProbeSpec(key="slow", label="slow", command=f"{sys.executable} {p} 0.05", full=True)
    log = tmp_path / "slow.jsonl"
    board = Board(Pricing(Catalog.embedded()))
    board.add(spec, log)
    runner = LocalRunner(spec, log)
    task = asyncio.create_task(board.pump(runner))
    await until(lambda: board.entries["slow"].state.steps >= 3, "3 steps")
    if how == "cancel":
        await runner.cancel()
        await asyncio.wait_for(task, 30)
    else:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    events, report = read_log(log)
    assert isinstance(events[-1], End) and events[-1].status == "stopped", events[-1]
    assert report.malformed == []


@pytest.mark.faults('Ctrl-C / SIGTERM / SIGHUP to headless probecast',
                    checks='exit 130; every log ends in end')
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT", "SIGHUP"])
def test_headless_probe_stopped_by_a_signal_exits_130_with_logs_ending_in_end(tmp_path: Path,
                                                                              sig: str) -> None:
    p = tmp_path / "slow.py"
    p.write_text(LOOP.replace("from probecast.core.agent import StepTimer",
                              "from probecast_agent import StepTimer"))
    cfg = tmp_path / "probecast.toml"
    cfg.write_text(f'[probe]\ncommand = "{sys.executable} {p} 0.05"\nbatch_sizes = [8]\n'
                   "max_steps = 100000\n")
    out = tmp_path / "logs"
    # SIGINT as a terminal delivers it: a suite started as a shell's background job inherits
    # SIGINT ignored (as such jobs should), and so would probecast - which then rightly goes on
    proc = subprocess.Popen([sys.executable, "-m", "probecast.tui", "probe", "--config", str(cfg),
                             "--headless", "--out", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        logs = list(out.glob("*.jsonl"))
        if logs and logs[0].read_text().count('"step"') >= 3:
            break
        time.sleep(0.1)
    proc.send_signal(getattr(signal, sig))
    assert proc.wait(timeout=60) == 130
    events, _ = read_log(next(out.glob("*.jsonl")))
    assert isinstance(events[-1], End) and events[-1].status == "stopped"
    assert "slow.py" not in subprocess.run(["ps", "-eo", "args"], capture_output=True,
                                           text=True).stdout


async def test_the_app_probe_headless_and_rank_give_the_same_prices_and_order(
        tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """One price lookup: a host's own price over [prices], [prices] over the catalog - the same
    in `probe --headless`, `rank` and the app (its replay and its live board)."""
    import json

    from probecast.core.model.rank.ranking import RankOptions
    from probecast.tui.main import make_live_app, make_replay_app

    cache = tmp_path / "cache"  # no refreshed price cache of this machine's
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    p = tmp_path / "loop.py"
    p.write_text(LOOP.replace("from probecast.core.agent import StepTimer",
                              "from probecast_agent import StepTimer"))
    cfg = tmp_path / "probecast.toml"
    cfg.write_text(
        '[[hosts]]\nname = "a"\nkind = "local"\ninstance = "g5.xlarge"\nprice_per_hour = 0.5\n'
        '[[hosts]]\nname = "b"\nkind = "local"\ninstance = "p3.2xlarge"\n'
        f'[probe]\ncommand = "{sys.executable} {p} 0.01"\nbatch_sizes = [16]\nmax_steps = 8\n'
        'boundary_budget = 0\nadaptive_budget = 0\n'
        '[prices]\n"g5.xlarge" = 9.0\n"p3.2xlarge" = 2.0\n')
    logs = tmp_path / "logs"
    r = subprocess.run([sys.executable, "-m", "probecast.tui", "probe", "--config", str(cfg),
                        "--headless", "--json", "--out", str(logs)], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]

    def seen(rows: list[dict]) -> list[tuple[str, float, float]]:  # type: ignore[type-arg]
        return [(row["instance"], row["price_per_hour"], round(row["cost_usd"], 9)) for row in rows]

    headless = seen(json.loads(r.stdout))
    assert [(i, price) for i, price, _ in sorted(headless)] == [("g5.xlarge", 0.5),
                                                                  ("p3.2xlarge", 2.0)]
    r = subprocess.run([sys.executable, "-m", "probecast.tui", "rank", str(logs), "--config",
                        str(cfg), "--json"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert seen(json.loads(r.stdout)) == headless
    app = make_replay_app([str(logs)], 0, config_path=str(cfg))
    async with app.run_test(size=(80, 24)):
        await until(lambda: len(app.session.board.entries) == 2 and all(
            e.status == "done" for e in app.session.board.entries.values()), "both replayed to their end")
        rows = app.session.board.ranking(RankOptions()).rows
        assert [(row.instance, row.price_per_hour, round(row.cost_usd or 0, 9)) for row in rows] \
            == headless
    live = make_live_app(str(cfg)).session.board.pricing.catalog
    assert live.price("g5.xlarge")[0] == 0.5 and live.price("p3.2xlarge")[0] == 2.0


def test_sampler_reads_gpus_through_nvml_when_pynvml_is_there(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """NVML needs a GPU driver, which this machine has not: a stand-in pynvml with the real
    module's calls and return shapes (bytes names in older releases, str in newer)."""
    import io

    from probecast.core.agent.emit import Emitter
    from probecast.core.agent.sampler import HardwareSampler, Nvml, describe_devices

    (tmp_path / "pynvml.py").write_text(
        "from types import SimpleNamespace as NS\n"
        "calls = []\n"
        "def nvmlInit(): calls.append('init')\n"
        "def nvmlDeviceGetCount(): return 2\n"
        "def nvmlDeviceGetHandleByIndex(i): return i\n"
        "def nvmlDeviceGetUtilizationRates(h): return NS(gpu=[88, 3][h], memory=0)\n"
        "def nvmlDeviceGetMemoryInfo(h): return NS(used=[20 * 2**30, 2**29][h], total=24 * 2**30, free=0)\n"
        "def nvmlDeviceGetName(h): return [b'NVIDIA A10G', 'NVIDIA A10G'][h]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "pynvml", raising=False)  # the real one, if a test loaded it
    nvml = Nvml.open()
    assert nvml is not None
    buf = io.StringIO()
    fields = HardwareSampler(Emitter(out=buf), nvml=nvml).sample()
    assert fields["gpu_util"] == [88.0, 3.0]
    assert fields["gpu_mem_mb"] == [20480.0, 512.0] and fields["gpu_mem_total_mb"] == [24576.0] * 2
    assert describe_devices() == [{"kind": "gpu", "name": "NVIDIA A10G", "memory_mb": 24576.0}] * 2
    import pynvml  # the stand-in: no process was started per sample, one init

    assert pynvml.calls == ["init", "init"]  # Nvml.open() here, and describe_devices()
