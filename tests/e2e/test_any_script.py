"""Scripts nobody wrote for probecast: their output, their launchers, their training shapes.

Real TensorFlow, real subprocesses, `probecast probe` as a user runs it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from probecast.core.model.events import Done, End, Log, Step, read_log
from probecast.core.model.logstore import load_probe
from probecast.core.model.estimate.runtime import estimate_runtime, untimed_run

pytestmark = pytest.mark.tensorflow

PY = sys.executable

HEADER = """
import sys
import numpy as np
import keras
from keras import layers

rng = np.random.default_rng(0)
x = rng.normal(size=(2048, 8)).astype("float32")
y = (x[:, 0] > 0).astype("int32")
model = keras.Sequential([keras.Input((8,)), layers.Dense(32, activation="relu"),
                          layers.Dense(2, activation="softmax")])
model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
"""


def write(tmp: Path, name: str, body: str) -> Path:
    p = tmp / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(HEADER + textwrap.dedent(body))
    return p


def probe(tmp: Path, command: str, *extra: str, batch: int = 32,
          timeout: float = 300) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`probecast probe --config ... --headless` on this machine, as a user runs it."""
    cfg = tmp / "probecast.toml"
    cfg.write_text(f'[probe]\ncommand = {json.dumps(command)}\nworkdir = {json.dumps(str(tmp))}\n'
                   f"batch_sizes = [{batch}]\n")
    out = tmp / "logs"
    r = subprocess.run([PY, "-m", "probecast.tui", "probe", "--config", str(cfg), "--headless",
                        "--out", str(out), *extra], cwd=tmp, capture_output=True, text=True,
                       timeout=timeout)
    logs = sorted(out.glob("*.jsonl"))
    assert logs, r.stdout + r.stderr
    return r, logs[0]


def test_progress_bars_and_megabytes_of_prints_lose_no_event(tmp_path: Path) -> None:
    write(tmp_path, "noisy.py", """
        class Chatty(keras.callbacks.Callback):
            def on_train_batch_end(self, batch, logs=None):
                print("batch", batch, "x" * 2000)          # ~2 KB per step, no newline games
                sys.stdout.write("\\r" + "#" * 500)        # a bar of its own, no newline
        print("y" * 1_000_000)                              # 1 MB before training
        model.fit(x, y, batch_size=32, epochs=3, validation_split=0.1, verbose=1,
                  callbacks=[Chatty()])
        print("z" * 2_000_000, file=sys.stderr)             # 2 MB after
        print("finished")
    """)
    r, log = probe(tmp_path, f"{PY} noisy.py", "--max-steps", "40")
    assert r.returncode == 0, r.stderr[-2000:]
    events, report = read_log(log)
    assert report.malformed == [] and not report.truncated
    steps = [(e.epoch, e.step) for e in events if isinstance(e, Step)]
    assert steps[:40] == [(0, i) for i in range(40)]  # none lost, none glued to a bar
    output = log.with_suffix(".output").read_bytes().decode()  # bytes: keep the \r as written
    assert len(output) > 3_000_000 and "finished" in output and "\r####" in output
    assert "━" in output  # Keras' own progress bar is kept whole too
    # the program's post-training work ran and is in the estimate
    end = events[-1]
    assert isinstance(end, End) and end.exit_code == 0 and end.status == "probe-done"
    st = load_probe(log).state
    est = estimate_runtime(st, 3)
    assert st.post_time and est.terms.t_post == st.post_time and "+ " in est.formula()
    assert est.runtime_s > est.terms.fit_s + est.terms.t_post  # start-up counted too


def test_fit_in_a_loop_stops_after_the_probe_with_epochs_counted(tmp_path: Path) -> None:
    s = write(tmp_path, "rounds.py", """
        import time
        for i in range(16):
            model.fit(x, y, batch_size=256, epochs=1, verbose=0)
            print("round", i, flush=True)
            time.sleep(0.8)  # the program's own work between the calls (keras.io: predictions)
        open("after.marker", "w").write("evaluated %s" % model.evaluate(x, y, verbose=0))
    """)
    r, log = probe(tmp_path, f"{PY} {s.name}", "--max-steps", "20", batch=256)
    assert r.returncode == 0, r.stderr[-2000:]
    events, _ = read_log(log)
    steps = [(e.epoch, e.step) for e in events if isinstance(e, Step)]
    # 8 steps per fit() call: epochs counted across calls; 20 steps, boundaries already seen
    assert steps == [(e, i) for e in range(3) for i in range(8)][:20]
    assert {e.code for e in events if isinstance(e, Log)} >= {"fit-loop", "skipped-fit"}
    assert (tmp_path / "after.marker").read_text().startswith("evaluated")
    assert "round 15" in log.with_suffix(".output").read_text()  # the script went on, untrained
    st = load_probe(log).state
    from probecast.core.model.rank.ranking import RankOptions, job_length

    length = job_length(st, RankOptions())  # the loop around fit() says how many calls
    assert length.n_ep == 16 and "for i in range(16)" in length.source
    assert "fit(epochs=1)" in length.source
    # the work between two calls is the program's (`outside`), not the boundary's: the two
    # boundaries crossed carry it, and it is counted once - in T_post, where the 13 rounds after
    # the stop ran theirs - not as a stall and not again with each boundary to come
    firsts = [e for e in events if isinstance(e, Step) and e.step == 0 and e.epoch > 0]
    assert len(firsts) == 2
    for e in firsts:
        assert 0.8 <= e.outside < e.dt
    assert st.boundary_outside == [e.outside for e in firsts]
    assert st.post_time is not None and st.post_time > 13 * 0.8
    est = estimate_runtime(st, 16)
    assert est.terms.t_post == pytest.approx(st.post_time + sum(st.boundary_outside))
    per_boundary = (est.runtime_s - est.terms.t_init - est.terms.t_post) / 16
    # 8 steps of 256 and a boundary (~0.1-0.2 s here): no 0.8 s sleep in each - a margin that
    # holds on a machine several times slower
    assert per_boundary < 0.8


def test_a_dataset_of_unknown_length_is_counted_and_the_history_plotted_after_it(
        tmp_path: Path) -> None:
    """keras.io's memory-efficient embeddings example: fit() on a tf.data dataset whose length
    TensorFlow cannot tell (make_csv_dataset; here a filter), then plots history["loss"] and
    history["val_loss"]. The probe stopped it inside the first epoch: no epoch's length, so
    only a per-1 000-steps answer, and a History without val_loss - the program's plot raised
    KeyError and it exited 1 before its second experiment. Now the probe goes on to the first
    epoch's end and counts it (a plan), and the History holds the metrics under fit()'s own
    names."""
    s = write(tmp_path, "unknown.py", """
        import tensorflow as tf
        ds = tf.data.Dataset.from_tensor_slices((x, y)).filter(lambda a, b: True).batch(16)
        assert ds.cardinality() == tf.data.UNKNOWN_CARDINALITY
        history = model.fit(ds, epochs=3, validation_data=ds.take(8), verbose=0)
        print("plotted", history.history["loss"][-1], history.history["val_loss"][-1])
    """)
    r, log = probe(tmp_path, f"{PY} {s.name}", "--max-steps", "20", batch=16)
    assert r.returncode == 0, r.stderr[-2000:]
    events, _ = read_log(log)
    assert "plotted" in log.with_suffix(".output").read_text()
    assert events[-1].exit_code == 0  # type: ignore[union-attr]
    steps = [(e.epoch, e.step) for e in events if isinstance(e, Step)]
    assert (1, 0) in steps and (0, 127) in steps  # 2048 / 16: the first epoch whole
    st = load_probe(log).state
    assert st.steps_per_epoch == 128  # counted at its end (a plan)
    est = estimate_runtime(st, 3)
    assert est.runtime_s > 0 and est.low_s <= est.runtime_s <= est.high_s


def test_gradient_tape_loop_is_probed_with_no_code_change(tmp_path: Path) -> None:
    write(tmp_path, "tape.py", """
        import tensorflow as tf
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(2048).batch(64)
        opt = keras.optimizers.Adam()
        loss_fn = keras.losses.SparseCategoricalCrossentropy()

        @tf.function
        def train_step(xb, yb):
            with tf.GradientTape() as tape:
                loss = loss_fn(yb, model(xb, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        for epoch in range(50):
            losses = []
            for xb, yb in ds:
                losses.append(float(train_step(xb, yb)))
            print("epoch", epoch, sum(losses) / len(losses))  # an empty pass: ZeroDivisionError
        print("after training", flush=True)
    """)
    r, log = probe(tmp_path, f"{PY} tape.py", "--max-steps", "25", batch=64)
    assert r.returncode == 0, r.stderr[-2000:]
    events, _ = read_log(log)
    start = events[0]
    assert start.steps_per_epoch == 32  # 2048 / 64, from the dataset's cardinality
    steps = [(e.epoch, e.step) for e in events if isinstance(e, Step)]
    # two real epoch boundaries seen (cheap here): to the first step of the third epoch
    assert steps == [(e, i) for e in range(2) for i in range(32)] + [(2, 0)]
    assert any(isinstance(e, Done) and e.status == "probe-done" for e in events)
    assert events[-1].status == "probe-done"
    # it did not train on: its dataset yielded nothing from the stop, the pass ran out, and the
    # loop of epochs was left at the top of its next pass - no epoch ran on an empty pass - so
    # the program goes on (into a later loop, a phase, if it has one: test_phase_probes.py)
    output = log.with_suffix(".output").read_text()
    assert "epoch 2 " in output and "epoch 3 " not in output and "after training" in output


@pytest.mark.faults('a script that never trains',
                    checks='stopped at the first-step timeout with what was looked for')
def test_a_script_that_never_trains_is_stopped_at_the_first_step_timeout(tmp_path: Path) -> None:
    s = tmp_path / "idle.py"
    s.write_text("import time\nprint('loading data...', flush=True)\ntime.sleep(120)\n")
    log = tmp_path / "idle.jsonl"
    # stopped by the timeout, not waited out: the 120 s script would outlast subprocess's 60 s
    r = subprocess.run([PY, "-m", "probecast.core.agent", "run", "--first-step-timeout", "3",
                        "--out", str(log), "--", PY, str(s)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 124
    end = read_log(log)[0][-1]
    assert isinstance(end, End) and end.status == "failed"
    assert "no training step within 3s" in end.reason and "StepTimer" in end.reason
    assert "loading data" in r.stderr  # the program's output is kept, not lost


def test_a_script_with_no_training_step_that_runs_to_its_exit_is_its_own_answer(
        tmp_path: Path) -> None:
    """Hand-written updates with no framework step (pytorch/tutorials' 'PyTorch: Tensors' fits
    its polynomial by explicit gradients, no backward pass): nothing to time, and the program
    ran to its exit under the probe - that run is the answer, with what was looked for said (it
    was a failure: 'the program finished without training')."""
    s = tmp_path / "manual.py"
    s.write_text("w = 0.0\nfor t in range(200000):\n    w -= 1e-4 * 2 * (w - 3.0)\n"
                 "print('w', round(w, 3))\n")
    r = subprocess.run([PY, "-m", "probecast.tui", "probe", "--local", "--headless", "--out",
                        str(tmp_path / "logs"), "--", PY, str(s)], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    (log,) = (tmp_path / "logs").glob("*.jsonl")
    events = read_log(log)[0]
    end = events[-1]
    assert isinstance(end, End) and (end.status, end.exit_code) == ("complete", 0)
    # the agent's own start-up (its launcher, the hook's set-up) is said, and taken off the run
    assert 0 < end.agent_s < end.t
    assert untimed_run(load_probe(log).state).runtime_s == pytest.approx(end.t - end.agent_s)
    said = [e for e in events if isinstance(e, Log) and e.code == "no-step"]
    assert said and "StepTimer" in said[0].msg and "Ranking" in r.stdout
    assert "w 3.0" in (tmp_path / "logs" / f"{log.stem}.output").read_text()  # it ran whole


@pytest.mark.parametrize("launcher", ["bash", "module"])
def test_shell_scripts_and_python_dash_m_are_run_as_they_are(tmp_path: Path, launcher: str) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    write(tmp_path, "pkg/train.py", """
        bs = int(sys.argv[sys.argv.index("--batch-size") + 1])
        model.fit(x, y, batch_size=bs, epochs=5, verbose=0)
    """)
    (tmp_path / "run.sh").write_text(f"#!/bin/bash\nset -e\necho preparing\n"
                                     f"exec {PY} -m pkg.train --batch-size \"$1\"\n")
    command = ("bash run.sh {batch_size}" if launcher == "bash"
               else f"{PY} -m pkg.train --batch-size {{batch_size}}")
    r, log = probe(tmp_path, command, "--max-steps", "10", batch=128)
    assert r.returncode == 0, r.stderr[-2000:]
    events, _ = read_log(log)
    assert events[0].batch_size == 128 and events[0].steps_per_epoch == 16
    assert events[0].workload == ("run.sh" if launcher == "bash" else "pkg.train")
    assert len([e for e in events if isinstance(e, Step)]) >= 10
    assert events[-1].status == "probe-done" and events[-1].exit_code == 0
