"""tensorflow/docs' Core API optimizer guide's shape: no Keras optimizer, no dataset - each
convergence test a `for` over `range` of eager gradient steps, updated by hand, one test per
learning rate, one loop of tests per optimizer, then the program's own post-training work.
The probe leaves each loop at its next line, as a break would, and goes on to the next."""
import os
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf


def loss(x):
    return 2 * x ** 4 + 3 * x ** 3 + 2


def descend(learning_rate, momentum, max_iters=100_000):
    x = tf.Variable(2.0)
    change = 0.0
    for it in range(1, max_iters + 1):
        with tf.GradientTape() as tape:
            y = loss(x)
        g = tape.gradient(y, x)
        change = learning_rate * g + momentum * change
        x.assign_sub(change)
    return x.numpy()


learning_rates = [1e-4, 1e-3]
plain = {}
for learning_rate in learning_rates:
    plain[learning_rate] = descend(learning_rate, 0.0)
with_momentum = {}
for learning_rate in learning_rates:
    with_momentum[learning_rate] = descend(learning_rate, 0.7)
print("post-training work done:", len(plain), len(with_momentum), flush=True)
