"""fit() called once per epoch in a loop, with an evaluation after each (a common pattern in
scripts that log or checkpoint between epochs)."""
import keras
from keras import layers

from common import args, images

ns = args(default_batch=128, default_epochs=6, default_samples=10000)
x, y = images(ns.samples, (28, 28, 1))
xv, yv = images(1500, (28, 28, 1), seed=1)
model = keras.Sequential([keras.Input((28, 28, 1)), layers.Conv2D(16, 3, activation="relu"),
                          layers.MaxPooling2D(), layers.Flatten(), layers.Dense(64, activation="relu"),
                          layers.Dense(10, activation="softmax")])
model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
for epoch in range(ns.epochs):
    model.fit(x, y, batch_size=ns.batch_size, epochs=1, verbose=0)
    loss, acc = model.evaluate(xv, yv, verbose=0)
    print(f"epoch {epoch}: val accuracy {acc:.3f}", flush=True)
