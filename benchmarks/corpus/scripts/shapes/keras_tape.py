"""A GradientTape training loop written from scratch: adapted from keras-team/keras-io
`guides/writing_a_custom_training_loop_in_tensorflow.py` ("Writing a training loop from scratch
in TensorFlow", fchollet; Keras 3, TensorFlow backend; commit 1806537) - its loop with metrics
and a `@tf.function` train_step / test_step.

Kept from the original: KERAS_BACKEND=tensorflow; get_model() (784 -> Dense 64 relu -> Dense
64 relu -> Dense 10 logits); Adam(1e-3), SparseCategoricalCrossentropy(from_logits=True) and
SparseCategoricalAccuracy train / val metrics; the last 10 000 training samples held out for
validation; tf.data datasets (`from_tensor_slices(...).shuffle(buffer_size=1024).batch(batch_size)`
for training, `.batch(batch_size)` for validation); the module-level `epochs = ...` and the loop
`for epoch in range(epochs)`: "Start of epoch", the tf.function train_step over the dataset with
the loss logged every 100 steps, the training accuracy at the end of the epoch, a validation
loop with test_step, "Validation acc" and "Time taken".

Changed: the data are synthetic MNIST-shaped arrays (60 000 x 784 uint8-range floats, 10
classes, learnable) instead of keras.datasets.mnist.load_data(); epochs is 35 (the guide: 2);
added: `--batch-size` on the command line (the guide's module-level batch_size = 32 is its
default; epochs has no flag, as in the guide).

Batch size flag: `--batch-size N`. Full run, as recorded:
    python keras_tape.py --batch-size 32
    python keras_tape.py --batch-size 64
"""

"""
## Setup
"""

import argparse
import time
import os

# This guide can only be run with the TensorFlow backend.
os.environ["KERAS_BACKEND"] = "tensorflow"

import tensorflow as tf
import keras
import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int, default=32)
batch_size = parser.parse_args().batch_size


def get_model():
    inputs = keras.Input(shape=(784,), name="digits")
    x1 = keras.layers.Dense(64, activation="relu")(inputs)
    x2 = keras.layers.Dense(64, activation="relu")(x1)
    outputs = keras.layers.Dense(10, name="predictions")(x2)
    model = keras.Model(inputs=inputs, outputs=outputs)
    return model


def synthetic_mnist(n, seed=0):
    """Stand-in for keras.datasets.mnist.load_data(): 10 prototype "digits" plus noise, 0-255."""
    rng = np.random.default_rng(seed)
    protos = np.random.default_rng(99).uniform(0, 255, size=(10, 28, 28))
    y = rng.integers(0, 10, size=n)
    x = np.clip(protos[y] + rng.normal(0, 90, size=(n, 28, 28)), 0, 255)
    return x.astype("float32"), y.astype("uint8")


model = get_model()

# Instantiate an optimizer to train the model.
optimizer = keras.optimizers.Adam(learning_rate=1e-3)
# Instantiate a loss function.
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

# Prepare the metrics.
train_acc_metric = keras.metrics.SparseCategoricalAccuracy()
val_acc_metric = keras.metrics.SparseCategoricalAccuracy()

# Prepare the training dataset.
x_train, y_train = synthetic_mnist(60000)
x_train = np.reshape(x_train, (-1, 784))

# Reserve 10,000 samples for validation.
x_val = x_train[-10000:]
y_val = y_train[-10000:]
x_train = x_train[:-10000]
y_train = y_train[:-10000]

# Prepare the training dataset.
train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train))
train_dataset = train_dataset.shuffle(buffer_size=1024).batch(batch_size)

# Prepare the validation dataset.
val_dataset = tf.data.Dataset.from_tensor_slices((x_val, y_val))
val_dataset = val_dataset.batch(batch_size)

"""
## Speeding-up your training step with `tf.function`
"""


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss_value = loss_fn(y, logits)
    grads = tape.gradient(loss_value, model.trainable_weights)
    optimizer.apply(grads, model.trainable_weights)
    train_acc_metric.update_state(y, logits)
    return loss_value


@tf.function
def test_step(x, y):
    val_logits = model(x, training=False)
    val_acc_metric.update_state(y, val_logits)


epochs = 35
for epoch in range(epochs):
    print(f"\nStart of epoch {epoch}")
    start_time = time.time()

    # Iterate over the batches of the dataset.
    for step, (x_batch_train, y_batch_train) in enumerate(train_dataset):
        loss_value = train_step(x_batch_train, y_batch_train)

        # Log every 100 batches.
        if step % 100 == 0:
            print(
                f"Training loss (for 1 batch) at step {step}: {float(loss_value):.4f}"
            )
            print(f"Seen so far: {(step + 1) * batch_size} samples")

    # Display metrics at the end of each epoch.
    train_acc = train_acc_metric.result()
    print(f"Training acc over epoch: {float(train_acc):.4f}")

    # Reset training metrics at the end of each epoch
    train_acc_metric.reset_state()

    # Run a validation loop at the end of each epoch.
    for x_batch_val, y_batch_val in val_dataset:
        test_step(x_batch_val, y_batch_val)

    val_acc = val_acc_metric.result()
    val_acc_metric.reset_state()
    print(f"Validation acc: {float(val_acc):.4f}")
    print(f"Time taken: {time.time() - start_time:.2f}s")
