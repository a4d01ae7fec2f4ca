"""Deterministic synthetic Boston-housing stand-in: .npz with exactly what
keras.datasets.boston_housing.load_data(test_split=0.2) returns: x_train (404,13) float64,
y_train (404,) float64, x_test (102,13), y_test (102,).
usage: python make_boston_npz.py OUT_NPZ
"""
import sys
import numpy as np

rng = np.random.default_rng(113)
n = 506
scale = np.array([3.6, 11.4, 11.1, 0.07, 0.55, 6.3, 68.6, 3.8, 9.5, 408.0, 18.5, 356.7, 12.7])
x = np.abs(rng.normal(1.0, 0.35, size=(n, 13))) * scale
w = rng.normal(0, 1, 13) / scale
y = np.clip(22.5 + 6.0 * (x @ w) + rng.normal(0, 3.0, n), 5.0, 50.0).round(1)
np.savez(sys.argv[1], x_train=x[:404], y_train=y[:404], x_test=x[404:], y_test=y[404:])
print(sys.argv[1], x[:404].shape, x[404:].shape)
