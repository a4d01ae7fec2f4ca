"""A stand-in for ETTh1.csv (the Electricity Transformer Temperature data, hourly, that
thuml's Time-Series-Library reads from dataset/ETT-small/): 17 420 rows from 2016-07-01 00:00,
a `date` column and seven loads - HUFL, HULL, MUFL, MULL, LUFL, LULL - and the oil temperature
OT, with daily and weekly cycles, a slow drift and noise. Deterministic (seed 11); the real
file's shape and header, made-up values.

    python make_ett.py OUT_CSV [ROWS]
"""
import sys
from pathlib import Path

import numpy as np
import pandas as pd

out = Path(sys.argv[1]); out.parent.mkdir(parents=True, exist_ok=True)
rows = int(sys.argv[2]) if len(sys.argv) > 2 else 17420
rng = np.random.default_rng(11)
t = np.arange(rows, dtype=float)
day, week = 2 * np.pi * t / 24, 2 * np.pi * t / (24 * 7)
cols = {}
for i, name in enumerate(("HUFL", "HULL", "MUFL", "MULL", "LUFL", "LULL")):
    level, amp = rng.uniform(1, 12), rng.uniform(0.5, 3)
    cols[name] = (level + amp * np.sin(day + i) + 0.5 * amp * np.sin(week + 2 * i)
                  + np.cumsum(rng.normal(0, 0.05, rows)) + rng.normal(0, 0.3, rows))
cols["OT"] = (20 + 8 * np.sin(2 * np.pi * t / (24 * 365)) + 3 * np.sin(day - 1)
              + 0.2 * cols["HUFL"] + rng.normal(0, 0.5, rows))
frame = pd.DataFrame({"date": pd.date_range("2016-07-01", periods=rows, freq="h")
                      .strftime("%Y-%m-%d %H:%M:%S"), **{k: np.round(v, 3) for k, v in cols.items()}})
frame.to_csv(out, index=False)
