"""A stand-in for UCI's Breast Cancer Wisconsin (Diagnostic) wdbc.data as tensorflow/docs'
logistic regression guide reads it (``pd.read_csv(url, names=column_names)``): 569 rows of an
integer id, a diagnosis 'B' or 'M' (357 to 212), then 30 positive features - ten measurements'
mean, standard error and largest value. Malignant rows are drawn larger, as the real ones are, so
the classes separate partly.

    python make_wdbc.py OUT_FILE [N]
"""
import sys

import numpy as np

out = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 569
rng = np.random.default_rng(0)
# typical means of the ten measurements (radius, texture, perimeter, area, smoothness,
# compactness, concavity, concave points, symmetry, fractal dimension)
base = np.array([14.1, 19.3, 92.0, 655.0, 0.096, 0.104, 0.089, 0.049, 0.181, 0.063])
rows = []
for i in range(n):
    malignant = rng.random() < 212 / 569
    scale = base * (1.35 if malignant else 0.85) * rng.lognormal(0, 0.15, size=10)
    se = scale * rng.uniform(0.03, 0.12, size=10)
    largest = scale * rng.uniform(1.1, 1.5, size=10)
    values = ",".join(f"{v:.5g}" for v in np.concatenate([scale, se, largest]))
    rows.append(f"{842302 + 97 * i},{'M' if malignant else 'B'},{values}")
with open(out, "w") as fh:
    fh.write("\n".join(rows) + "\n")
