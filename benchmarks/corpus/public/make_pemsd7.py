"""Synthetic stand-in for PeMSD7(M) (STGCN_IJCAI-18's data_loader/PeMS-M.zip), read by keras.io's
timeseries_traffic_forecasting.py with pd.read_csv(..., header=None) from one folder:
  W_228.csv  228 x 228 station distances in metres (symmetric, zero diagonal), no header
  V_228.csv  N_ROWS x 228 speeds in mph, one row per 5 minutes (the real file: 12 672 rows =
             44 weekdays x 288), no header
Stations sit along a few freeway lines, so distances range from a few hundred metres to tens of
kilometres; speeds are a free-flow level (~65 mph) with morning and evening congestion dips that
travel along each line, AR(1) noise, clipped to 3-80 mph. Deterministic (seed 7).

    python make_pemsd7.py OUT_DIR [N_ROWS]
"""
import sys
from pathlib import Path

import numpy as np

out = Path(sys.argv[1]); out.mkdir(parents=True, exist_ok=True)
rows = int(sys.argv[2]) if len(sys.argv) > 2 else 12672
N = 228
rng = np.random.default_rng(7)

# Station positions: 6 freeway lines in the plane, stations spaced 0.3-2 km along each.
line = rng.integers(0, 6, N)
origin = rng.uniform(0, 40000, (6, 2))
angle = rng.uniform(0, np.pi, 6)
along = np.zeros(N)
for k in range(6):
    idx = np.where(line == k)[0]
    along[idx] = np.cumsum(rng.uniform(300, 2000, len(idx)))
xy = origin[line] + along[:, None] * np.stack([np.cos(angle[line]), np.sin(angle[line])], 1)
dist = np.sqrt(((xy[:, None, :] - xy[None, :, :]) ** 2).sum(-1))
np.fill_diagonal(dist, 0.0)
np.savetxt(out / "W_228.csv", dist, fmt="%.1f", delimiter=",")
print("wrote", out / "W_228.csv", dist.shape)

# Speeds: free flow minus rush-hour dips (shifted along each line), plus AR(1) noise.
slot = np.arange(rows) % 288  # 5-minute slot of the day
free = rng.uniform(58, 70, N)
depth = rng.uniform(10, 35, N)
lag = along / 1000.0 * 1.5  # dips start ~1.5 slots later per km downstream
am = np.exp(-0.5 * ((slot[:, None] - (96 + lag)) / 12.0) ** 2)  # ~08:00
pm = np.exp(-0.5 * ((slot[:, None] - (210 + lag)) / 15.0) ** 2)  # ~17:30
v = free - depth * (am + 0.8 * pm)
e = rng.normal(0, 1.2, (rows, N))
for i in range(1, rows):
    e[i] += 0.8 * e[i - 1]
v = np.clip(v + e, 3.0, 80.0)
np.savetxt(out / "V_228.csv", v, fmt="%.1f", delimiter=",")
print("wrote", out / "V_228.csv", v.shape)
