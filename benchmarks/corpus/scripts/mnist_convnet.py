"""In the style of keras.io 'Simple MNIST convnet': fit on NumPy arrays with a validation split,
verbose progress bars, then evaluate and print the test score."""
import keras
from keras import layers

from common import args, images

ns = args(default_batch=128, default_epochs=6, default_samples=12000)
x, y = images(ns.samples, (28, 28, 1))
xt, yt = images(2000, (28, 28, 1), seed=1)
y, yt = keras.utils.to_categorical(y, 10), keras.utils.to_categorical(yt, 10)
model = keras.Sequential([
    keras.Input(shape=(28, 28, 1)),
    layers.Conv2D(32, kernel_size=(3, 3), activation="relu"),
    layers.MaxPooling2D(pool_size=(2, 2)),
    layers.Conv2D(64, kernel_size=(3, 3), activation="relu"),
    layers.MaxPooling2D(pool_size=(2, 2)),
    layers.Flatten(),
    layers.Dropout(0.5),
    layers.Dense(10, activation="softmax"),
])
model.summary()
model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
model.fit(x, y, batch_size=ns.batch_size, epochs=ns.epochs, validation_split=0.1)
score = model.evaluate(xt, yt, verbose=0)
print("Test loss:", score[0])
print("Test accuracy:", score[1])
