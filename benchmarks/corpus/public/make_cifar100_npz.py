"""Synthetic stand-in for keras.datasets.cifar100.load_data() (fine labels), as one .npz with
x_train (N,32,32,3) uint8, y_train (N,1) int64 (values 0-99), x_test, y_test: the shapes and dtypes
Keras' loader returns. Each class has a random 32x32x3 template; an image is 0.6 * its class
template + 0.4 * uniform noise. Deterministic (seed 0).
Keras checks the real archive's hash, so the script's load_data() line becomes an np.load of this file.
Usage: python make_cifar100_npz.py OUT_NPZ N_TRAIN N_TEST
"""
import sys
import numpy as np

out, n_train, n_test = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
templates = rng.integers(0, 256, size=(100, 32, 32, 3)).astype(np.float32)


def make(n):
    y = rng.integers(0, 100, size=(n, 1)).astype(np.int64)
    x = 0.6 * templates[y[:, 0]] + 0.4 * rng.integers(0, 256, size=(n, 32, 32, 3))
    return np.clip(x, 0, 255).astype(np.uint8), y


x_train, y_train = make(n_train)
x_test, y_test = make(n_test)
np.savez(out, x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test)
print("wrote", out, x_train.shape, x_train.dtype, y_train.shape, y_train.dtype, x_test.shape)
