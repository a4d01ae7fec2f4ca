"""Synthetic stand-ins for the two Numenta Anomaly Benchmark CSVs that keras.io's
timeseries_anomaly_detection.py reads:
  artificialNoAnomaly/art_daily_small_noise.csv  (training: daily pattern, small noise)
  artificialWithAnomaly/art_daily_jumpsup.csv    (testing: same pattern, one day "jumps up")

Layout as in NAB: header "timestamp,value", one row per 5 minutes starting 2014-04-01 00:00:00,
values around 20 at night and around 80 during a daytime plateau, with small noise. The jump-up
day in the test file holds values about 1.8x higher for part of one day. Deterministic (seed 0).

    python make_nab.py OUT_ROOT [N_ROWS] [NOISE]   (N_ROWS default 4032 = 14 days x 288; NOISE: std, default 2.0)
"""
import sys
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

root = Path(sys.argv[1])
rows = int(sys.argv[2]) if len(sys.argv) > 2 else 4032
noise = float(sys.argv[3]) if len(sys.argv) > 3 else 2.0
rng = np.random.default_rng(0)
start = datetime(2014, 4, 1)
step = np.arange(rows) % 288  # 5-minute slot in the day


def daily(noise):
    base = np.where((step >= 96) & (step < 216), 80.0, 20.0)  # 08:00-18:00 plateau
    ramp_up = (step >= 84) & (step < 96)
    base[ramp_up] = 20 + 60 * (step[ramp_up] - 84) / 12
    ramp_dn = (step >= 216) & (step < 228)
    base[ramp_dn] = 80 - 60 * (step[ramp_dn] - 216) / 12
    return base + rng.normal(0, noise, rows)


def write(path, values):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fh.write("timestamp,value\n")
        for i, v in enumerate(values):
            fh.write(f"{(start + timedelta(minutes=5 * i)):%Y-%m-%d %H:%M:%S},{v:.11f}\n")
    print("wrote", path, len(values), "rows")


write(root / "artificialNoAnomaly" / "art_daily_small_noise.csv", daily(noise))
test = daily(noise)
day = min(10, rows // 288 - 1)  # the anomaly: a jump up on day 11 (or the last full day)
a, b = day * 288 + 100, day * 288 + 200
test[a:b] *= 1.8
write(root / "artificialWithAnomaly" / "art_daily_jumpsup.csv", test)
