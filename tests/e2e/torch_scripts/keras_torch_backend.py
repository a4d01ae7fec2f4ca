"""Keras 3 on the PyTorch backend, as keras.io's backend-agnostic examples run: fit() trains
through torch autograd (a backward pass a batch) with Keras' own optimizer."""
import os
os.environ["KERAS_BACKEND"] = "torch"
import numpy as np
import keras

rng = np.random.default_rng(0)
x = rng.normal(size=(1280, 32)).astype("float32"); y = (x[:, 0] > 0).astype("int64")
model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(64, activation="relu"),
                          keras.layers.Dense(2, activation="softmax")])
model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(x, y, batch_size=32, epochs=8, validation_split=0.2, verbose=2)
print("evaluated", model.evaluate(x, y, verbose=0))
