"""Two GradientTape training loops one after another (a classifier, then an autoencoder on the
same data), each with its own traced step. The second steps two optimizers a batch, as a GAN
does (a critic, then the autoencoder against it): one training step, not two. Synthetic data,
CPU."""
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)
rng = np.random.default_rng(0)
x = rng.normal(size=(4096, 64)).astype("float32")
y = (x[:, 0] + x[:, 1] > 0).astype("int32")
data = tf.data.Dataset.from_tensor_slices((x, y)).batch(64)  # 64 batches a pass

classifier = keras.Sequential([keras.Input((64,)), keras.layers.Dense(512, activation="relu"),
                               keras.layers.Dense(512, activation="relu"), keras.layers.Dense(2)])
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
opt = keras.optimizers.SGD(0.05)


@tf.function
def classify_step(xb, yb):
    with tf.GradientTape() as tape:
        loss = loss_fn(yb, classifier(xb, training=True))
    opt.apply_gradients(zip(tape.gradient(loss, classifier.trainable_variables),
                            classifier.trainable_variables))
    return loss


for epoch in range(5):  # phase 1
    for xb, yb in data:
        loss = classify_step(xb, yb)
    print(f"classifier epoch {epoch} loss {float(loss):.3f}", flush=True)

autoencoder = keras.Sequential([keras.Input((64,)), keras.layers.Dense(256, activation="relu"),
                                keras.layers.Dense(64)])
ae_opt = keras.optimizers.Adam(1e-3)
critic = keras.Sequential([keras.Input((64,)), keras.layers.Dense(64, activation="relu"),
                           keras.layers.Dense(1)])
critic_opt = keras.optimizers.Adam(1e-3)
pairs = tf.data.Dataset.from_tensor_slices(x).batch(32)  # 128 batches a pass


@tf.function
def reconstruct_step(xb):
    with tf.GradientTape() as tape:
        critic_loss = (tf.reduce_mean(critic(autoencoder(xb), training=True))
                       - tf.reduce_mean(critic(xb, training=True)))
    critic_opt.apply_gradients(zip(tape.gradient(critic_loss, critic.trainable_variables),
                                   critic.trainable_variables))
    with tf.GradientTape() as tape:
        out = autoencoder(xb, training=True)
        loss = tf.reduce_mean(tf.square(out - xb)) - 0.01 * tf.reduce_mean(critic(out))
    ae_opt.apply_gradients(zip(tape.gradient(loss, autoencoder.trainable_variables),
                               autoencoder.trainable_variables))
    return loss


epochs = 4
for epoch in range(epochs):  # phase 2
    for xb in pairs:
        loss = reconstruct_step(xb)
    print(f"autoencoder epoch {epoch} loss {float(loss):.4f}", flush=True)
time.sleep(0.3)
print("post-training work done", flush=True)
