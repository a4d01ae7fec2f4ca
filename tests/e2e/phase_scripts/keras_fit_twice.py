"""fit(), then fit() again with other settings (a frozen-body warm-up, then the whole model at
a smaller batch and learning rate): two phases of one model. Synthetic data, CPU."""
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
import keras

tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)
rng = np.random.default_rng(0)
x = rng.normal(size=(6144, 128)).astype("float32")
y = (x[:, 0] + x[:, 1] > 0).astype("int32")
x_val, y_val = x[:512], y[:512]

body = keras.Sequential([keras.Input((128,)), keras.layers.Dense(768, activation="relu"),
                         keras.layers.Dense(768, activation="relu")])
model = keras.Sequential([body, keras.layers.Dense(2)])


def main() -> None:
    """The two fits from one function, as most programs write them (the phases are told apart
    by the lines that call fit(), not by loops)."""
    body.trainable = False
    model.compile(keras.optimizers.SGD(0.05), "sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    model.fit(x, y, batch_size=128, epochs=4, validation_data=(x_val, y_val), verbose=2)  # 1

    body.trainable = True
    model.compile(keras.optimizers.Adam(1e-4), "sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    model.fit(x, y, batch_size=64, epochs=3,  # phase 2
              validation_data=(x_val, y_val), verbose=2)


if __name__ == "__main__":
    main()
    time.sleep(0.3)
    print("post-training work done", flush=True)
