"""Synthetic stand-in for deeplearning.net's mnist.pkl.gz (pytorch/tutorials' nn_tutorial reads it
and downloads only when it is missing): ((x_train, y_train), (x_valid, y_valid), (x_test, y_test)),
50 000 / 10 000 / 10 000 flattened 28x28 images, float32 in [0, 1] in steps of 1/256 and mostly
0, int64 labels - its shapes, dtypes and about its size (17 MB), each digit a bright bar of its own.

    python make_mnist_pkl.py PUB/tut/data/mnist/mnist.pkl.gz
"""
import gzip
import pickle
import sys

import numpy as np


def split(rng, n):
    y = rng.integers(0, 10, n).astype(np.int64)
    x = rng.integers(0, 256, (n, 28, 28)) * (rng.random((n, 28, 28)) < 0.1)
    x = (x / 256).astype(np.float32)
    for i in range(10):
        x[y == i, 2 + 2 * i: 4 + 2 * i, 4:24] = 1.0
    return x.reshape(n, 784), y


rng = np.random.default_rng(0)
data = tuple(split(rng, n) for n in (50_000, 10_000, 10_000))
with gzip.open(sys.argv[1], "wb") as f:
    pickle.dump(data, f, protocol=2)
