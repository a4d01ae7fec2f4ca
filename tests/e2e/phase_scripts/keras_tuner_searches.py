"""Two KerasTuner searches, one after another, each followed by the best model's use (as
KerasTuner's guide writes them): a RandomSearch of 1 trial of 2 executions of 2 epochs, then a
Hyperband (max_epochs=2, factor=2: two 1-epoch trials, the best going on 1 epoch more, then two
of 2 epochs - 7 epochs, set by its schedule, not by search()'s epochs). Each trial (each
execution) builds a new model; the search fits them from one line, in KerasTuner's own loop.
Few: KerasTuner clears the session and collects garbage for each, a second or more apiece.
Synthetic data, CPU."""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras
import keras_tuner

tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)
rng = np.random.default_rng(0)
x = rng.normal(size=(6144, 64)).astype("float32")
y = (x[:, 0] + x[:, 1] > 0).astype("int32")
x_val, y_val = x[:512], y[:512]
folder = sys.argv[1] if len(sys.argv) > 1 else "tuner"


def build(hp: keras_tuner.HyperParameters) -> keras.Model:
    model = keras.Sequential([keras.Input((64,)),
                              keras.layers.Dense(hp.Int("units", 128, 512, step=64),
                                                 activation="relu"),
                              keras.layers.Dense(2)])
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


first = keras_tuner.RandomSearch(build, objective="val_accuracy", max_trials=1, seed=1,
                                 executions_per_trial=2, overwrite=True, directory=folder,
                                 project_name="first")
first.search(x, y, batch_size=128, epochs=2, validation_data=(x_val, y_val), verbose=0)
print("first search's best:", first.get_best_models()[0].count_params(), flush=True)

second = keras_tuner.Hyperband(build, objective="val_accuracy", max_epochs=2, factor=2, seed=2,
                               overwrite=True, directory=folder, project_name="second")
second.search(x, y, batch_size=64, epochs=50, validation_data=(x_val, y_val), verbose=0)
print("second search's best:", second.get_best_models()[0].count_params(), flush=True)
