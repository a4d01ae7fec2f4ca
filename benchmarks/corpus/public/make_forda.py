"""Synthetic stand-in for the UCR FordA files (FordA_TRAIN.tsv / FordA_TEST.tsv) that keras.io's
timeseries_classification_from_scratch.py reads with np.loadtxt(delimiter="\t").

Layout as in the real files: one series per line, the label first (-1 or 1), then LENGTH (500)
z-normalised float values, tab-separated, no header. Each series is engine-noise-like: a few
random sinusoids plus AR(1) noise; class 1 additionally carries a weak component in a fixed
frequency band, so the task is learnable but not trivial. Deterministic (seed 0).

    python make_forda.py OUT_DIR N_TRAIN N_TEST [LENGTH]
"""
import sys
from pathlib import Path

import numpy as np

out = Path(sys.argv[1]); out.mkdir(parents=True, exist_ok=True)
n_train, n_test = int(sys.argv[2]), int(sys.argv[3])
length = int(sys.argv[4]) if len(sys.argv) > 4 else 500
rng = np.random.default_rng(0)
t = np.arange(length)


def series(label):
    x = np.zeros(length)
    for _ in range(rng.integers(2, 5)):  # shared background harmonics
        f = rng.uniform(0.005, 0.08)
        x += rng.uniform(0.3, 1.0) * np.sin(2 * np.pi * f * t + rng.uniform(0, 2 * np.pi))
    e = rng.normal(0, 1, length)  # AR(1) noise
    for i in range(1, length):
        e[i] += 0.6 * e[i - 1]
    x += 0.5 * e
    if label == 1:  # the "fault": a weak band 0.11-0.14 cycles/step, random phase
        f = rng.uniform(0.11, 0.14)
        x += rng.uniform(0.25, 0.6) * np.sin(2 * np.pi * f * t + rng.uniform(0, 2 * np.pi))
    return (x - x.mean()) / x.std()


for name, n in (("FordA_TRAIN.tsv", n_train), ("FordA_TEST.tsv", n_test)):
    labels = np.where(rng.random(n) < 0.5, -1, 1)
    with open(out / name, "w") as fh:
        for y in labels:
            fh.write(str(int(y)) + "\t" + "\t".join(f"{v:.7f}" for v in series(y)) + "\n")
    print("wrote", out / name, n, "series of", length)
