# Synthetic stand-in for keras.datasets.cifar10.load_data():
# same dtypes/shapes per sample (uint8 images 32x32x3, uint8 labels of shape (N, 1), 10 classes),
# fewer samples (defaults: 800 train, 256 test). Each class has a random 32x32x3 template; an
# image is 0.6 * its class template + 0.4 * uniform noise. Deterministic (seed 0).
import sys
import numpy as np


def write(path, classes, n_train, n_test, label_dtype=np.uint8):
    """x_train (N,32,32,3) uint8, y_train (N,1), x_test, y_test, as Keras' loader returns them."""
    rng = np.random.default_rng(0)
    templates = rng.integers(0, 256, size=(classes, 32, 32, 3)).astype(np.float32)

    def make(n):
        y = rng.integers(0, classes, size=(n, 1)).astype(label_dtype)
        x = 0.6 * templates[y[:, 0]] + 0.4 * rng.integers(0, 256, size=(n, 32, 32, 3))
        return np.clip(x, 0, 255).astype(np.uint8), y

    x_train, y_train = make(n_train)
    x_test, y_test = make(n_test)
    np.savez(path, x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test)
    print("wrote", path, x_train.shape, x_train.dtype, y_train.shape, y_train.dtype, x_test.shape)


if __name__ == "__main__":
    write("cifar10.npz", 10, int(sys.argv[1]) if len(sys.argv) > 1 else 800,
          int(sys.argv[2]) if len(sys.argv) > 2 else 256)
