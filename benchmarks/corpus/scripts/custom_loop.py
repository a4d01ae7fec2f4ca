"""A custom training loop in the style of keras.io 'Writing a training loop from scratch':
GradientTape in a tf.function, a tf.data dataset, a validation loop after each epoch."""
import keras
import tensorflow as tf
from keras import layers

from common import args, images

ns = args(default_batch=64, default_epochs=5, default_samples=8000)
x, y = images(ns.samples, (28, 28, 1))
xv, yv = images(1000, (28, 28, 1), seed=1)
train = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(len(x)).batch(ns.batch_size)
val = tf.data.Dataset.from_tensor_slices((xv, yv)).batch(ns.batch_size)
model = keras.Sequential([keras.Input((28, 28, 1)), layers.Conv2D(16, 3, activation="relu"),
                          layers.Flatten(), layers.Dense(64, activation="relu"), layers.Dense(10)])
optimizer = keras.optimizers.Adam(1e-3)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
train_acc = keras.metrics.SparseCategoricalAccuracy()
val_acc = keras.metrics.SparseCategoricalAccuracy()


@tf.function
def train_step(xb, yb):
    with tf.GradientTape() as tape:
        logits = model(xb, training=True)
        loss = loss_fn(yb, logits)
    grads = tape.gradient(loss, model.trainable_weights)
    optimizer.apply_gradients(zip(grads, model.trainable_weights))
    train_acc.update_state(yb, logits)
    return loss


@tf.function
def test_step(xb, yb):
    val_acc.update_state(yb, model(xb, training=False))


for epoch in range(ns.epochs):
    for xb, yb in train:
        train_step(xb, yb)
    for xb, yb in val:
        test_step(xb, yb)
    print(f"epoch {epoch}: train acc {float(train_acc.result()):.3f} "
          f"val acc {float(val_acc.result()):.3f}", flush=True)
    train_acc.reset_state()
    val_acc.reset_state()
