"""A stand-in for the Cleveland heart-disease CSV keras.io's FeatureSpace example reads
(``heart.csv``: 303 rows, its 14 columns, their kinds and ranges; the values random, the target
loosely tied to two of them so the loss falls).

    python make_heart.py OUT.csv [ROWS]
"""
import sys

import numpy as np

rows = int(sys.argv[2]) if len(sys.argv) > 2 else 303
rng = np.random.default_rng(0)
cols = {
    "age": rng.integers(29, 78, rows), "sex": rng.integers(0, 2, rows),
    "cp": rng.integers(0, 5, rows), "trestbps": rng.integers(94, 201, rows),
    "chol": rng.integers(126, 565, rows), "fbs": rng.integers(0, 2, rows),
    "restecg": rng.integers(0, 3, rows), "thalach": rng.integers(71, 203, rows),
    "exang": rng.integers(0, 2, rows), "oldpeak": np.round(rng.random(rows) * 6.2, 1),
    "slope": rng.integers(1, 4, rows), "ca": rng.integers(0, 4, rows),
    "thal": rng.choice(["normal", "fixed", "reversible"], rows),
}
target = ((cols["cp"] >= 3) ^ (rng.random(rows) < 0.2)).astype(int)
with open(sys.argv[1], "w") as fh:
    fh.write(",".join([*cols, "target"]) + "\n")
    for i in range(rows):
        fh.write(",".join([*(str(v[i]) for v in cols.values()), str(target[i])]) + "\n")
