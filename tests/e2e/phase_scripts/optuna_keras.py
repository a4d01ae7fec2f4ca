"""An Optuna study of 3 trials over a Keras objective, as Optuna's Keras example writes one: each
trial clears the session, builds a model of its own size and fit()s it 4 epochs; the program
prints the best trial after. Synthetic data, CPU."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import keras
import numpy as np
import optuna
import tensorflow as tf

tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)
rng = np.random.default_rng(0)
x = rng.normal(size=(4096, 32)).astype("float32")
y = (x[:, 0] > 0).astype("int32")


def objective(trial: optuna.Trial) -> float:
    keras.backend.clear_session()
    model = keras.Sequential([keras.Input((32,)),
                              keras.layers.Dense(trial.suggest_int("units", 32, 256),
                                                 activation="relu"),
                              keras.layers.Dense(2, activation="softmax")])
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x, y, batch_size=32, epochs=4, validation_split=0.25, verbose=0)
    return float(model.evaluate(x[:512], y[:512], verbose=0)[1])


optuna.logging.set_verbosity(optuna.logging.WARNING)
study = optuna.create_study(direction="maximize", sampler=optuna.samplers.RandomSampler(seed=0))
study.optimize(objective, n_trials=3)
print("best trial:", study.best_trial.number, "of", len(study.trials), flush=True)
