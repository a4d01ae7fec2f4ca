"""A traced GradientTape step over NumPy slices: no dataset to run dry and no Python-level
point in the loop after its first trace - the probe can only interrupt it (its watchdog)."""
import os
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np, tensorflow as tf, keras
x = np.random.default_rng(0).normal(size=(4096, 16)).astype("float32"); y = (x[:, 0] > 0).astype("int32")
model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(2)])
opt = keras.optimizers.Adam(); loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
@tf.function
def step(xb, yb):
    with tf.GradientTape() as t:
        loss = loss_fn(yb, model(xb, training=True))
    opt.apply_gradients(zip(t.gradient(loss, model.trainable_variables), model.trainable_variables))
for epoch in range(100_000):  # longer than any machine runs it before the watchdog (10 s)
    for i in range(0, 4096, 32):
        step(x[i:i + 32], y[i:i + 32])
print("never printed", flush=True)
