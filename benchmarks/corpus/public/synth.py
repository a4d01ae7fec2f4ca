"""Synthetic stand-ins for keras.datasets.mnist.load_data() and imdb.load_data() (no download):
same shapes and dtypes, fewer samples."""
import numpy as np

def mnist(n_train=24000, n_test=4000):
    rng = np.random.default_rng(0)
    out = []
    for n in (n_train, n_test):
        y = rng.integers(0, 10, n).astype(np.uint8)
        x = (rng.random((n, 28, 28)) * 60).astype(np.uint8)
        for i in range(10):
            x[y == i, 2 + 2 * i: 4 + 2 * i, 4:24] = 255
        out.append((x, y))
    return tuple(out)


def imdb(n_train=25000, n_test=25000, num_words=20000):
    """Reviews as lists of word indices (1 starts each, as Keras' loader does), 20-600 words."""
    rng = np.random.default_rng(0)
    out = []
    for n in (n_train, n_test):
        y = rng.integers(0, 2, n).astype(np.int64)
        x = np.empty(n, dtype=object)
        for i in range(n):
            x[i] = [1] + rng.integers(2, num_words, int(rng.integers(20, 600))).tolist()
        out.append((x, y))
    return tuple(out)
