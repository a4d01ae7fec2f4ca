"""Synthetic stand-in for Fashion-MNIST as keras.datasets.fashion_mnist.load_data() reads it:
the four gzipped idx files (train-labels-idx1-ubyte.gz, train-images-idx3-ubyte.gz,
t10k-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz) in OUT_DIR (put them in
$KERAS_HOME/datasets/fashion-mnist/: Keras passes no file hash for these, so cached files are used).
28x28 uint8 images, labels 0-9; each image a filled silhouette chosen by its label (shirt-like,
trouser-like, shoe-like, bag-like boxes) with random size, shift, brightness and texture.
Deterministic (seed 0). Usage: python make_fashion_mnist_gz.py OUT_DIR N_TRAIN N_TEST
"""
import gzip
import os
import struct
import sys

import numpy as np

out, n_train, n_test = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(0)
yy, xx = np.mgrid[0:28, 0:28]


def box(img, y0, y1, x0, x1, v):
    img[max(y0, 0):max(y1, 0), max(x0, 0):max(x1, 0)] = v


def draw(label):
    img = np.zeros((28, 28), np.float32)
    dy, dx = rng.integers(-2, 3, 2)
    s = rng.uniform(0.8, 1.0)
    if label in (0, 2, 4, 6):  # tops: torso plus sleeves of class-dependent length
        box(img, 5 + dy, 25 + dy, 8 + dx, 20 + dx, s)
        sl = {0: 4, 2: 14, 4: 16, 6: 10}[label]
        box(img, 5 + dy, 5 + sl + dy, 3 + dx, 8 + dx, s)
        box(img, 5 + dy, 5 + sl + dy, 20 + dx, 25 + dx, s)
    elif label == 1:  # trouser: two legs
        box(img, 3 + dy, 26 + dy, 8 + dx, 13 + dx, s)
        box(img, 3 + dy, 26 + dy, 15 + dx, 20 + dx, s)
        box(img, 3 + dy, 8 + dy, 8 + dx, 20 + dx, s)
    elif label == 3:  # dress: a trapezoid
        w = np.clip(3 + (yy - 3 - dy) * 0.35, 0, 12)
        img[(yy >= 3 + dy) & (yy < 26 + dy) & (np.abs(xx - 14 - dx) < w)] = s
    elif label in (5, 7, 9):  # footwear: a sole and an upper of class-dependent height
        h = {5: 4, 7: 6, 9: 12}[label]
        box(img, 20 + dy, 24 + dy, 3 + dx, 25 + dx, s)
        box(img, 20 - h + dy, 20 + dy, 3 + dx, 14 + dx, s)
    else:  # bag: a box and a handle
        box(img, 10 + dy, 25 + dy, 4 + dx, 24 + dx, s)
        ring = np.abs(np.hypot(yy - 10 - dy, xx - 14 - dx) - 5) < 1.2
        img[ring & (yy < 10 + dy)] = s
    tex = 1 - 0.3 * rng.random((28, 28))
    return np.clip(img * tex * 255, 0, 255).astype(np.uint8)


def make(n):
    y = rng.integers(0, 10, n).astype(np.uint8)
    x = np.stack([draw(int(l)) for l in y]) if n else np.zeros((0, 28, 28), np.uint8)
    return x, y


for prefix, n in (("train", n_train), ("t10k", n_test)):
    x, y = make(n)
    with gzip.open(os.path.join(out, f"{prefix}-labels-idx1-ubyte.gz"), "wb") as f:
        f.write(struct.pack(">II", 2049, n) + y.tobytes())
    with gzip.open(os.path.join(out, f"{prefix}-images-idx3-ubyte.gz"), "wb") as f:
        f.write(struct.pack(">IIII", 2051, n, 28, 28) + x.tobytes())
print("wrote", out, n_train, n_test)
