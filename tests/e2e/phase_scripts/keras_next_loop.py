"""A GradientTape loop that draws its batches with next() from an endless dataset: the probe
cannot end it by running the dataset dry (next() would raise StopIteration into the program),
so it unwinds it, as before phases."""
import os
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np, tensorflow as tf, keras
x = np.random.default_rng(0).normal(size=(2048, 16)).astype("float32"); y = (x[:, 0] > 0).astype("int32")
ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(32).repeat()
model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(2)])
opt = keras.optimizers.Adam(); loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
@tf.function
def step(xb, yb):
    with tf.GradientTape() as t:
        loss = loss_fn(yb, model(xb, training=True))
    opt.apply_gradients(zip(t.gradient(loss, model.trainable_variables), model.trainable_variables))
it = iter(ds)
for i in range(1_000_000):  # longer than the probe waits for a program's own end
    xb, yb = next(it)
    step(xb, yb)
print("never printed after a probe", flush=True)
