# Synthetic stand-in for keras.datasets.mnist.load_data():
# same shapes and dtypes (60000/10000 uint8 images 28x28, uint8 labels 0..9).
import sys
import numpy as np

n_train = int(sys.argv[1]) if len(sys.argv) > 1 else 60000
n_test = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
rng = np.random.default_rng(0)
templates = rng.integers(0, 256, size=(10, 28, 28)).astype(np.float32)

def make(n):
    y = rng.integers(0, 10, size=n).astype(np.uint8)
    x = 0.6 * templates[y] + 0.4 * rng.integers(0, 256, size=(n, 28, 28))
    return np.clip(x, 0, 255).astype(np.uint8), y

x_train, y_train = make(n_train)
x_test, y_test = make(n_test)
np.savez("mnist.npz", x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test)
print(x_train.shape, x_train.dtype, y_train.shape, y_train.dtype, x_test.shape)
