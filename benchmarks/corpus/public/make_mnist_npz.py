"""Synthetic stand-in for keras' mnist.npz (deterministic).
Usage: python make_mnist_npz.py OUT_NPZ N_TRAIN N_TEST
Same keys, shapes and dtypes as the real file: x_train (N,28,28) uint8, y_train (N,) uint8, x_test, y_test.
Each image is a white-on-black stroke figure chosen by its label (ring, bars, crosses, ...) with random
shift, stroke width, intensity and faint background noise."""
import sys
import numpy as np

out, n_train, n_test = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
yy, xx = np.mgrid[0:28, 0:28].astype(np.float32)

def seg(img, x0, y0, x1, y1, w):
    d = np.array([x1 - x0, y1 - y0], np.float32); L = max(float(np.hypot(*d)), 1e-6)
    t = np.clip(((xx - x0) * d[0] + (yy - y0) * d[1]) / (L * L), 0, 1)
    dist = np.hypot(xx - (x0 + t * d[0]), yy - (y0 + t * d[1]))
    np.maximum(img, np.clip(w - dist, 0, 1), out=img)

def ring(img, cx, cy, r, w):
    dist = np.abs(np.hypot(xx - cx, yy - cy) - r)
    np.maximum(img, np.clip(w - dist, 0, 1), out=img)

def draw(label, dx, dy, w):
    img = np.zeros((28, 28), np.float32)
    c = lambda x, y: (x + dx, y + dy)
    if label == 0: ring(img, 14 + dx, 14 + dy, 7, w)
    elif label == 1: seg(img, *c(14, 5), *c(14, 23), w)
    elif label == 2: seg(img, *c(8, 8), *c(20, 8), w); seg(img, *c(20, 8), *c(8, 22), w); seg(img, *c(8, 22), *c(20, 22), w)
    elif label == 3: seg(img, *c(8, 6), *c(20, 6), w); seg(img, *c(10, 14), *c(20, 14), w); seg(img, *c(8, 22), *c(20, 22), w); seg(img, *c(20, 6), *c(20, 22), w)
    elif label == 4: seg(img, *c(8, 5), *c(8, 15), w); seg(img, *c(8, 15), *c(21, 15), w); seg(img, *c(18, 5), *c(18, 23), w)
    elif label == 5: seg(img, *c(20, 6), *c(8, 6), w); seg(img, *c(8, 6), *c(8, 13), w); ring(img, 14 + dx, 17 + dy, 5, w)
    elif label == 6: seg(img, *c(17, 5), *c(10, 15), w); ring(img, 14 + dx, 18 + dy, 5, w)
    elif label == 7: seg(img, *c(7, 6), *c(21, 6), w); seg(img, *c(21, 6), *c(12, 23), w)
    elif label == 8: ring(img, 14 + dx, 9 + dy, 4.5, w); ring(img, 14 + dx, 19 + dy, 5, w)
    else: ring(img, 14 + dx, 10 + dy, 5, w); seg(img, *c(19, 10), *c(17, 23), w)
    return img

def make(n):
    y = rng.integers(0, 10, n).astype(np.uint8)
    x = np.empty((n, 28, 28), np.uint8)
    for i in range(n):
        img = draw(int(y[i]), rng.uniform(-3, 3), rng.uniform(-2, 2), rng.uniform(1.2, 2.4))
        img = img * rng.uniform(0.8, 1.0) + rng.normal(0, 0.03, (28, 28)) * (img > 0)
        x[i] = np.clip(img * 255, 0, 255).astype(np.uint8)
    return x, y

x_train, y_train = make(n_train)
x_test, y_test = make(n_test)
np.savez_compressed(out, x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test)
print("wrote", out, x_train.shape, x_test.shape)
