"""Deterministic synthetic stand-in for jena_climate_2009_2016.csv.zip (keras-io weather example).
Same layout as the original: one CSV member 'jena_climate_2009_2016.csv', header with the 15 original
columns, 'Date Time' as 'dd.mm.yyyy HH:MM:SS', one row every 10 minutes, 420551 rows by default.
usage: python make_jena.py OUT_ZIP [N_ROWS]
"""
import sys, zipfile
import numpy as np
import pandas as pd

out = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 420551
rng = np.random.default_rng(20090101)

t = np.arange(n, dtype=np.float64)
times = pd.Timestamp("2009-01-01 00:10:00") + pd.to_timedelta(t * 10, unit="min")
day = 2 * np.pi * t / 144.0
year = 2 * np.pi * t / (144.0 * 365.25)


def ar(scale, rho=0.995):
    e = rng.normal(0, scale, n)
    x = np.empty(n)
    acc = 0.0
    for i in range(n):
        acc = rho * acc + e[i]
        x[i] = acc
    return x


T = 9.5 - 9.0 * np.cos(year) - 4.0 * np.cos(day) + ar(0.25)
p = 989.0 + ar(0.15, 0.998) - 0.2 * T
Tpot = T + 273.15 + (1000.0 - p) * 0.0086
rh = np.clip(76.0 + 12.0 * np.cos(day) + ar(0.8), 12.0, 100.0)
VPmax = 6.1078 * np.exp(17.27 * T / (T + 237.3))
VPact = VPmax * rh / 100.0
VPdef = VPmax - VPact
Tdew = 237.3 * np.log(VPact / 6.1078) / (17.27 - np.log(VPact / 6.1078))
sh = 622.0 * VPact / (p - 0.378 * VPact)
H2OC = 1000.0 * VPact / p
rho = 100.0 * p / (287.05 * (T + 273.15)) * 1000.0
wv = np.abs(2.0 + ar(0.12, 0.99))
maxwv = wv * (1.4 + 0.3 * rng.random(n))
wd = np.mod(180.0 + np.cumsum(rng.normal(0, 3.0, n)), 360.0)

cols = {
    "p (mbar)": p, "T (degC)": T, "Tpot (K)": Tpot, "Tdew (degC)": Tdew, "rh (%)": rh,
    "VPmax (mbar)": VPmax, "VPact (mbar)": VPact, "VPdef (mbar)": VPdef, "sh (g/kg)": sh,
    "H2OC (mmol/mol)": H2OC, "rho (g/m**3)": rho, "wv (m/s)": wv, "max. wv (m/s)": maxwv,
    "wd (deg)": wd,
}
df = pd.DataFrame({"Date Time": times.strftime("%d.%m.%Y %H:%M:%S")})
for k, v in cols.items():
    df[k] = np.round(v, 2)
csv = df.to_csv(index=False, float_format="%.2f")
zi = zipfile.ZipInfo("jena_climate_2009_2016.csv", date_time=(2016, 12, 31, 23, 59, 58))
zi.compress_type = zipfile.ZIP_DEFLATED
with zipfile.ZipFile(out, "w") as z:
    z.writestr(zi, csv)
print(out, df.shape)
