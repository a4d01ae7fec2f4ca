"""Synthetic stand-in for UCI covtype.data.gz (read by keras.io wide_deep_cross_networks.py with
pd.read_csv(path, header=None)). Layout as the real file: gzip CSV, no header, 55 integer columns:
0-9 numeric cartographic features (realistic ranges), 10-13 one-hot wilderness area (exactly one 1),
14-53 one-hot soil type (exactly one 1), 54 cover type 1..7. Label depends on elevation, area and
soil plus noise, so the task is learnable. Deterministic (seed 0).

    python make_covtype.py OUT.csv.gz N_ROWS
"""
import sys

import numpy as np
import pandas as pd

out, n = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(0)
area = rng.integers(0, 4, n)
soil = rng.integers(0, 40, n)
elev = rng.normal(2960, 280, n).clip(1860, 3860)
num = np.stack([
    elev,
    rng.uniform(0, 360, n),             # Aspect
    rng.gamma(3, 4.7, n).clip(0, 66),   # Slope
    rng.gamma(1.5, 180, n).clip(0, 1397),   # Horizontal_Distance_To_Hydrology
    rng.normal(46, 58, n).clip(-173, 601),  # Vertical_Distance_To_Hydrology
    rng.gamma(2, 1175, n).clip(0, 7117),    # Horizontal_Distance_To_Roadways
    rng.normal(212, 27, n).clip(0, 254),    # Hillshade_9am
    rng.normal(223, 20, n).clip(0, 254),    # Hillshade_Noon
    rng.normal(142, 38, n).clip(0, 254),    # Hillshade_3pm
    rng.gamma(2, 990, n).clip(0, 7173),     # Horizontal_Distance_To_Fire_Points
], axis=1).round().astype(np.int64)
score = (elev - 2960) / 280 + 0.4 * (area - 1.5) + 0.05 * (soil - 20) + rng.normal(0, 0.6, n)
label = np.digitize(score, [-1.6, -0.9, -0.3, 0.3, 0.9, 1.6]) + 1  # 1..7
onehot_area = np.eye(4, dtype=np.int64)[area]
onehot_soil = np.eye(40, dtype=np.int64)[soil]
table = np.concatenate([num, onehot_area, onehot_soil, label[:, None]], axis=1)
pd.DataFrame(table).to_csv(out, header=False, index=False, compression="gzip")
print("wrote", out, table.shape, "labels", np.bincount(label)[1:])
