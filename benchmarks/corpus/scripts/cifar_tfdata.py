"""A tf.data input pipeline in the style of the Keras/TF tutorials: shuffle, augmentation in
map(), batch, prefetch(AUTOTUNE); validation on a dataset; no progress bars (verbose=2); the model
is saved at the end."""
import os
import tempfile

import keras
import tensorflow as tf
from keras import layers

from common import args, images

ns = args(default_batch=64, default_epochs=5, default_samples=6000)
x, y = images(ns.samples, (32, 32, 3))
xv, yv = images(1000, (32, 32, 3), seed=1)


def augment(img, label):
    return tf.image.random_flip_left_right(img), label


train = (tf.data.Dataset.from_tensor_slices((x, y)).shuffle(len(x))
         .map(augment, num_parallel_calls=tf.data.AUTOTUNE).batch(ns.batch_size)
         .prefetch(tf.data.AUTOTUNE))
val = tf.data.Dataset.from_tensor_slices((xv, yv)).batch(ns.batch_size)
model = keras.Sequential([
    keras.Input((32, 32, 3)),
    layers.Conv2D(32, 3, padding="same", activation="relu"), layers.MaxPooling2D(),
    layers.Conv2D(64, 3, padding="same", activation="relu"), layers.MaxPooling2D(),
    layers.GlobalAveragePooling2D(), layers.Dense(10, activation="softmax")])
model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(train, epochs=ns.epochs, validation_data=val, verbose=2)
model.save(os.path.join(tempfile.mkdtemp(), "model.keras"))
print("saved")
