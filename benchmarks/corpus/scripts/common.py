"""Synthetic stand-ins for the public datasets (nothing is downloaded): the same shapes as
MNIST, CIFAR-10 and IMDB, learnable, seeded. Imported by the corpus scripts only."""

import argparse

import numpy as np


def args(default_batch=128, default_epochs=5, default_samples=12000):
    p = argparse.ArgumentParser()
    p.add_argument("--batch-size", type=int, default=default_batch)
    p.add_argument("--epochs", type=int, default=default_epochs)
    p.add_argument("--samples", type=int, default=default_samples)
    p.add_argument("--threads", type=int, default=0)
    ns = p.parse_args()
    if ns.threads:
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(ns.threads)
        tf.config.threading.set_inter_op_parallelism_threads(ns.threads)
    return ns


def images(n, shape, classes=10, seed=0, noise=1.5):
    rng = np.random.default_rng(seed)
    protos = rng.normal(size=(classes, *shape)).astype("float32")
    y = rng.integers(0, classes, size=n)
    x = protos[y] + noise * rng.normal(size=(n, *shape)).astype("float32")
    return x.astype("float32"), y.astype("int32")


def tokens(n, maxlen=100, vocab=5000, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n)
    x = rng.integers(2, vocab, size=(n, maxlen))
    x[:, :10] = np.where(y[:, None] == 1, 1, 0) + 2 * rng.integers(0, 2, size=(n, 10))
    return x.astype("int32"), y.astype("int32")
