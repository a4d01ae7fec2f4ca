"""In the style of keras.io 'Bidirectional LSTM on IMDB': token sequences, an embedding and two
bidirectional LSTMs, validation_data given, progress bars; then predictions on held-out text."""
import keras
from keras import layers

from common import args, tokens

ns = args(default_batch=64, default_epochs=4, default_samples=3000)
x, y = tokens(ns.samples)
xv, yv = tokens(600, seed=1)
inputs = keras.Input(shape=(None,), dtype="int32")
h = layers.Embedding(5000, 64)(inputs)
h = layers.Bidirectional(layers.LSTM(32, return_sequences=True))(h)
h = layers.Bidirectional(layers.LSTM(32))(h)
outputs = layers.Dense(1, activation="sigmoid")(h)
model = keras.Model(inputs, outputs)
model.compile("adam", "binary_crossentropy", metrics=["accuracy"])
model.fit(x, y, batch_size=ns.batch_size, epochs=ns.epochs, validation_data=(xv, yv))
print("predictions:", model.predict(xv[:256], verbose=0).mean())
