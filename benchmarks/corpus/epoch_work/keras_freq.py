"""A Keras fit of 30 epochs validating every 5th (`validation_freq=5`) on a validation set three
times the training set's size: 6 passes, not 30."""
import numpy as np
import keras
from keras import layers

rng = np.random.default_rng(0)
x = rng.normal(size=(6400, 32)).astype("float32")
y = (x[:, 0] > 0).astype("int32")
xv = rng.normal(size=(20000, 32)).astype("float32")
yv = (xv[:, 0] > 0).astype("int32")
model = keras.Sequential([keras.Input((32,)), layers.Dense(256, activation="relu"),
                          layers.Dense(2, activation="softmax")])
model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(x, y, batch_size=32, epochs=30, validation_data=(xv, yv), validation_freq=5, verbose=0)
print("done")
