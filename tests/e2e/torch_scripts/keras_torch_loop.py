"""A Keras custom training loop on the PyTorch backend, on a host with no TensorFlow (a torch
image): Keras' own optimizer applies the gradients torch autograd took, outside fit(). TensorFlow
is made unimportable, as on such a host."""
import os
import sys

sys.modules["tensorflow"] = None  # type: ignore[assignment] - import tensorflow fails here
os.environ["KERAS_BACKEND"] = "torch"
import keras  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

rng = np.random.default_rng(0)
x = torch.tensor(rng.normal(size=(2048, 32)), dtype=torch.float32)
y = (x[:, 0] > 0).long()
model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(64, activation="relu"),
                          keras.layers.Dense(2)])
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.Adam(1e-3)
for epoch in range(40):
    for i in range(0, len(x), 32):
        logits = model(x[i:i + 32])
        loss = loss_fn(y[i:i + 32], logits)
        model.zero_grad()
        loss.backward()
        grads = [v.value.grad for v in model.trainable_weights]
        with torch.no_grad():
            optimizer.apply(grads, model.trainable_weights)
print("post-training code ran", flush=True)
