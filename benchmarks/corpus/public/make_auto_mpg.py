"""A stand-in for UCI's auto-mpg.data as tensorflow/docs' regression tutorial reads it
(``pd.read_csv(..., names=..., na_values='?', comment='\\t', sep=' ', skipinitialspace=True)``):
398 cars, whitespace-separated MPG, cylinders, displacement, horsepower ('?' for six), weight,
acceleration, model year, origin, then a tab and the car's name in quotes. The columns are drawn
to relate as the real ones do (heavier, more powerful cars do fewer miles a gallon).

    python make_auto_mpg.py OUT_FILE [N]
"""
import sys

import numpy as np

out = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 398
rng = np.random.default_rng(0)
lines = []
for i in range(n):
    cyl = int(rng.choice([4, 6, 8, 3, 5], p=[0.51, 0.21, 0.26, 0.01, 0.01]))
    disp = round(float(cyl * rng.uniform(18, 45)), 1)
    hp = round(float(disp * rng.uniform(0.35, 0.75) + rng.uniform(20, 40)), 1)
    weight = round(float(1500 + disp * rng.uniform(6, 9) + rng.normal(0, 150)))
    accel = round(float(np.clip(24 - hp / 15 + rng.normal(0, 1.5), 8, 25)), 1)
    year = int(rng.integers(70, 83))
    origin = int(rng.choice([1, 2, 3], p=[0.62, 0.18, 0.2]))
    mpg = round(float(np.clip(52 - weight / 110 - hp / 20 + (year - 70) * 0.8
                              + rng.normal(0, 2.5), 9, 47)), 1)
    hp_text = "?" if i % 66 == 65 else f"{hp:.1f}"
    lines.append(f"{mpg:<6} {cyl}   {disp:<6} {hp_text:<8} {weight}.   {accel:<5} {year}  "
                 f"{origin}\t\"car {i}\"")
with open(out, "w") as fh:
    fh.write("\n".join(lines) + "\n")
print("wrote", out, n)
