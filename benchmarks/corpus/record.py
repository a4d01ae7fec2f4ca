"""Record the calibration corpus: real full trainings, end to end, through the agent.

    .venv/bin/python benchmarks/corpus/record.py benchmarks/corpus/runs [--only NAME ...]

Each run is the whole command (``--full``), launch to exit, as a user would run it: scripts in
the style of public Keras examples (progress bars, validation split or data, tf.data pipelines,
fit() in a loop, a GradientTape loop, post-training evaluate/predict/save) and the built-in
workloads, over batch sizes, 1 or 2 CPU cores (taskset) and 4 to 20 epochs. Logs are written
gzipped (``NAME.jsonl.gz``) with the program's output beside them; benchmarks/accuracy.py cuts
probes out of them and checks the estimate and its bounds against the real total.

``--torch`` records the PyTorch settings instead (into their own directory: they are held out
from calibration entirely - the bounds calibrated on Keras runs are checked on them).

``--shapes`` records the training-script shapes of ``scripts/shapes/`` (into runs-shapes/, held
out): scripts adapted from public ones (nanoGPT, llm.c, minGPT, pytorch/examples, Accelerate,
CodeParrot, keras.io), each at two batch sizes on one core, each run with its own command line
exactly as a user types it (``python gpt_loop.py --batch_size=12 --max_iters=1000 ...``,
``torchrun --standalone --nproc_per_node 2 ddp_gloo.py ...``, ``accelerate launch ...``) from
that folder, under the agent.

``--interleave`` records each setting's default probe and its full run back to back (the probe
first for every other setting; ``order.txt`` keeps the order): a pass of full runs and a later
pass of ``--probes`` each carry the shared machine's state of their moment, which then reads as
the method's error (RESULTS §11). New corpora are recorded this way.

Run it on a quiet machine: other load skews timings (which is also why it runs one at a time).
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = Path(__file__).resolve().parent / "scripts"
CORES = {1: "1", 2: "0,1"}

# name: (program, batch, epochs, samples, cores)
RUNS: dict[str, tuple[str, int, int, int, int]] = {}
# name: (working directory, the user's own command line) - a setting that carries its own
# arguments; its first word "python", "torchrun" or "accelerate" is the venv's (see _argv)
ARGV: dict[str, tuple[Path, tuple[str, ...]]] = {}


def _add(program: str, batch: int, epochs: int, samples: int, cores: int, tag: str = "") -> str:
    name = f"{program}-b{batch}-e{epochs}-c{cores}{tag}"
    RUNS[name] = (program, batch, epochs, samples, cores)
    return name


for c in (1, 2):
    _add("mnist_convnet", 64, 5, 36000, c)
    _add("mnist_convnet", 256, 8, 36000, c)
    _add("imdb_lstm", 64, 4, 6000, c)
    _add("imdb_lstm", 256, 6, 6000, c)
    _add("cifar_tfdata", 64, 6, 12000, c)
    _add("cifar_tfdata", 256, 10, 12000, c)
    _add("fit_loop", 128, 8, 24000, c)
    _add("fit_loop", 512, 12, 24000, c)
    _add("custom_loop", 64, 5, 18000, c)
    _add("custom_loop", 256, 10, 18000, c)
    _add("workload:mnist-cnn", 128, 6, 16000, c)
    _add("workload:mnist-cnn", 512, 15, 16000, c)
    _add("workload:tabular-mlp", 64, 20, 40000, c)
    _add("workload:cifar-resnet", 128, 4, 6000, c)
    _add("workload:mnist-cnn-tfdata", 256, 8, 16000, c)
    _add("workload:tabular-mlp-noval", 256, 12, 60000, c)

# PyTorch (recorded into runs-torch/, never used for calibration): scripts in the style of
# pytorch/examples, a gradient-accumulation loop, Lightning, the Hugging Face Trainer, and the
# built-in torch-cnn workload.
TORCH_RUNS: list[str] = []
for c in (1, 2):
    for args in (("torch_mnist", 64, 3, 6000, c), ("torch_mnist", 256, 5, 6000, c),
                 ("torch_accumulate", 32, 4, 24000, c), ("torch_accumulate", 128, 8, 24000, c),
                 ("lightning_cnn", 64, 4, 8000, c), ("lightning_cnn", 256, 6, 8000, c),
                 ("hf_trainer", 16, 3, 2500, c), ("hf_trainer", 64, 5, 2500, c),
                 ("workload:torch-cnn", 64, 3, 5000, c), ("workload:torch-cnn", 256, 5, 5000, c)):
        _add(*args)
        TORCH_RUNS.append(f"{args[0]}-b{args[1]}-e{args[2]}-c{args[4]}")


# Long jobs (recorded into runs-long/, held out): what users run - epochs of one to two minutes,
# 10-25 minutes in all, one core (taskset on CPU 1, so the machine's other core can do other work
# without sharing this one). Two Keras programs (fit on NumPy arrays, a tf.data pipeline) and one
# PyTorch program, each at two batch sizes.
LONG_RUNS: list[str] = []
for args in (("mnist_convnet", 64, 10, 216000, 1), ("mnist_convnet", 256, 10, 216000, 1),
             ("cifar_tfdata", 64, 10, 56000, 1), ("cifar_tfdata", 256, 10, 56000, 1),
             ("torch_mnist", 64, 10, 36000, 1), ("torch_mnist", 256, 10, 36000, 1)):
    LONG_RUNS.append(_add(*args, tag="-long"))


# Training-script shapes (recorded into runs-shapes/, held out): scripts/shapes/, adapted from
# public training scripts (see runs-shapes/README.md), two batch sizes each, one core (taskset
# on CPU 1, as the long runs). Each carries its own command line, run from scripts/shapes/; the
# name's budget part is what the command fixes: iterations (i), epochs (e) or LBFGS steps (s).
SHAPES = SCRIPTS / "shapes"
SHAPE_RUNS: list[str] = []
for program, batch, budget, argv in (
        ("gpt_loop", 12, "i1000",
         "python gpt_loop.py --batch_size=12 --max_iters=1000 --lr_decay_iters=1000"),
        ("gpt_loop", 48, "i250",
         "python gpt_loop.py --batch_size=48 --max_iters=250 --lr_decay_iters=250"),
        ("gpt_argparse", 8, "i1500",
         "python gpt_argparse.py --batch_size 8 --num_iterations 1500 --val_loss_every 100"),
        ("gpt_argparse", 32, "i400",
         "python gpt_argparse.py --batch_size 32 --num_iterations 400 --val_loss_every 100"),
        ("manual_sgd", 20, "e8",
         "python manual_sgd.py --epochs 8 --batch_size 20"),
        ("manual_sgd", 40, "e8",
         "python manual_sgd.py --epochs 8 --batch_size 40"),
        ("lbfgs", 37, "s8",
         "python lbfgs.py --steps 8 --samples 37"),
        ("lbfgs", 97, "s6",
         "python lbfgs.py --steps 6 --samples 97"),
        ("endless_sampler", 16, "i600",
         "python endless_sampler.py --trainer.batch_size=16 --trainer.max_iters=600"),
        ("endless_sampler", 64, "i180",
         "python endless_sampler.py --trainer.batch_size=64 --trainer.max_iters=180"),
        ("hogwild", 64, "e12",
         "python hogwild.py --epochs 12 --num-processes 2 --batch-size 64"),
        ("hogwild", 256, "e12",
         "python hogwild.py --epochs 12 --num-processes 2 --batch-size 256"),
        ("stream_iterable", 8, "i300",
         "python stream_iterable.py --train_batch_size 8 --max_train_steps 300"),
        ("stream_iterable", 32, "i80",
         "python stream_iterable.py --train_batch_size 32 --max_train_steps 80"),
        ("compile_cpu", 64, "e4",
         "python compile_cpu.py --epochs 4 --batch-size 64"),
        ("compile_cpu", 256, "e4",
         "python compile_cpu.py --epochs 4 --batch-size 256"),
        ("ddp_gloo", 32, "e10",
         "torchrun --standalone --nproc_per_node 2 ddp_gloo.py 10 2 --batch_size 32"),
        ("ddp_gloo", 128, "e20",
         "torchrun --standalone --nproc_per_node 2 ddp_gloo.py 20 2 --batch_size 128"),
        ("accelerate_loop", 16, "e4",
         "accelerate launch accelerate_loop.py --num_epochs 4 --batch_size 16"),
        ("accelerate_loop", 32, "e4",
         "accelerate launch accelerate_loop.py --num_epochs 4 --batch_size 32"),
        ("keras_fit_loop", 128, "e5",
         "python keras_fit_loop.py --epochs 5 --batch-size 128"),
        ("keras_fit_loop", 512, "e5",
         "python keras_fit_loop.py --epochs 5 --batch-size 512"),
        ("keras_tape", 32, "e35",
         "python keras_tape.py --batch-size 32"),
        ("keras_tape", 64, "e35",
         "python keras_tape.py --batch-size 64")):
    name = f"{program}-b{batch}-{budget}-c1"
    epochs = int(budget[1:]) if budget.startswith("e") else 0
    RUNS[name] = (program, batch, epochs, 0, 1)
    ARGV[name] = (SHAPES, tuple(argv.split()))
    SHAPE_RUNS.append(name)


def _argv(words: tuple[str, ...]) -> list[str]:
    """A user's command line with its launcher resolved to this venv: ``python`` is
    sys.executable, ``torchrun`` / ``accelerate`` the scripts installed beside it."""
    first, *rest = words
    if first == "python":
        return [sys.executable, *rest]
    if first in ("torchrun", "accelerate"):
        return [str(Path(sys.executable).parent / first), *rest]
    return [first, *rest]


def workdir(name: str) -> Path:
    """Where a setting's command runs: its own folder, or scripts/ (what a script's path and
    its imports are relative to)."""
    return ARGV[name][0] if name in ARGV else SCRIPTS


def command(name: str, out: Path, probe: bool = False) -> list[str]:
    """The full run (or, with ``probe``, a probe with the default stop policy) of one setting."""
    program, batch, epochs, samples, cores = RUNS[name]
    agent = [sys.executable, "-m", "probecast.core.agent"]
    tag = f"probe-{name}" if probe else name
    common = [*([] if probe else ["--full"]), "--probe", tag, "--instance", f"cpu-{cores}core",
              "--out", str(out / f"{tag}.jsonl"), "--output", str(out / f"{tag}.output"),
              "--first-step-timeout", "900"]
    threads = str(cores)
    if program.startswith("workload:"):
        wl = program.split(":", 1)[1]
        extra = []
        if wl.endswith("-tfdata"):
            wl, extra = wl[: -len("-tfdata")], ["--pipeline", "tfdata"]
        if wl.endswith("-noval"):
            wl, extra = wl[: -len("-noval")], ["--val-size", "0"]
        cmd = [*agent, "workload", wl, "--batch-size", str(batch), "--epochs", str(epochs),
               "--train-size", str(samples), "--threads", threads, *extra, *common]
    elif name in ARGV:  # the setting's own command line, as a user runs it (from workdir())
        cmd = [*agent, "run", *common, "--workload-label", program, "--batch-size", str(batch),
               "--", *_argv(ARGV[name][1])]
    else:
        cmd = [*agent, "run", *common, "--workload-label", program, "--batch-size", str(batch),
               "--", sys.executable, str(SCRIPTS / f"{program}.py"), "--batch-size", str(batch),
               "--epochs", str(epochs), "--samples", str(samples), "--threads", threads]
    if shutil.which("taskset"):
        cmd = ["taskset", "-c", CORES[cores], *cmd]
    return cmd


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--only", nargs="*", default=None, help="run names (default: all missing)")
    ap.add_argument("--list", action="store_true", help="list the runs and stop")
    ap.add_argument("--torch", action="store_true",
                    help="the PyTorch settings (default: the Keras ones)")
    ap.add_argument("--long", action="store_true",
                    help="the long jobs (10-25 minutes each, about 95 minutes in all)")
    ap.add_argument("--shapes", action="store_true",
                    help="the training-script shapes of scripts/shapes/ (1-2 minutes each, one "
                         "core, about 35 minutes in all)")
    ap.add_argument("--probes", action="store_true",
                    help="record probes (default stop policy) of the settings instead of full runs")
    ap.add_argument("--interleave", action="store_true",
                    help="record each setting's probe and full run back to back, the probe first "
                         "for every other setting (order.txt says which): the machine's state "
                         "then cancels between them, where a pass of probes and a pass of full "
                         "runs recorded hours apart each carry their own (RESULTS §11)")
    ns = ap.parse_args()
    names = (SHAPE_RUNS if ns.shapes else LONG_RUNS if ns.long else TORCH_RUNS if ns.torch
             else [n for n in RUNS if n not in TORCH_RUNS and n not in LONG_RUNS
                   and n not in SHAPE_RUNS])
    if ns.list:
        print("\n".join(names))
        return 0
    out = Path(ns.out).resolve()  # the runs' cwd is the scripts' folder (workdir())
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "3"}
    if ns.interleave:
        tasks = [(n, probe) for i, n in enumerate(ns.only or names)
                 for probe in ((True, False) if i % 2 == 0 else (False, True))]
    else:
        tasks = [(n, ns.probes) for n in ns.only or names]
    for name, probe in tasks:
        tag = f"probe-{name}" if probe else name
        done = out / f"{tag}.jsonl.gz"
        if done.exists() and ns.only is None:
            continue
        if ns.interleave:
            with open(out / "order.txt", "a") as fh:
                fh.write(f"{tag}\n")
        (out / f"{tag}.jsonl").unlink(missing_ok=True)
        # a compile cache and a temp folder of its own for every run: a probe, like the full run
        # it predicts, starts on a fresh host (one after the other shared torch.compile's cache,
        # so whichever ran second skipped the compile - compile_cpu 32-37 % under; and ddp_gloo's
        # snapshot, left in the temp folder by a probe that stopped it, made the full run resume)
        cache = tempfile.mkdtemp(prefix="probecast-run-")
        run_env = {**env, "TORCHINDUCTOR_CACHE_DIR": cache, "TMPDIR": cache,
                   "TRITON_CACHE_DIR": os.path.join(cache, "triton")}
        t0 = time.monotonic()
        r = subprocess.run(command(name, out, probe), cwd=workdir(name), env=run_env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        wall = time.monotonic() - t0
        shutil.rmtree(cache, ignore_errors=True)
        for suffix in (".jsonl", ".output"):
            raw = out / f"{tag}{suffix}"
            if raw.exists():
                with open(raw, "rb") as src, gzip.open(f"{raw}.gz", "wb", compresslevel=9) as dst:
                    shutil.copyfileobj(src, dst)
                raw.unlink()
        print(f"{tag:<46} exit {r.returncode:>3}  {wall:7.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
