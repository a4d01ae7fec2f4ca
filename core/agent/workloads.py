"""Built-in workloads on deterministic, learnable synthetic data (no downloads): Keras, and one
PyTorch workload (``torch-cnn``, in torch_workloads.py) for hosts with PyTorch only.

- ``mnist-cnn``: the simple MNIST CNN (two conv layers, dropout, Adadelta) of the runs
  sample_logs/reconstructed-dissertation reconstructs, on 28x28x1 images.
- ``cifar-resnet``: a small ResNet (3 stages of residual blocks) on 32x32x3 images, SGD+momentum.
- ``tabular-mlp``: a 3-layer MLP on 256 features, Adam: cheap steps, input-pipeline bound.

The data: each class has a fixed random smooth prototype; a sample is its class prototype, shifted
by a few pixels, scaled, and buried in Gaussian noise. Models learn it over several epochs, so
validation accuracy rises and then stabilises as on real data.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

KERAS_WORKLOADS = ("mnist-cnn", "cifar-resnet", "tabular-mlp")
WORKLOADS = (*KERAS_WORKLOADS, "torch-cnn")  # torch-*: PyTorch (torch_workloads.py)


@dataclass
class WorkloadConfig:
    name: str = "mnist-cnn"
    batch_size: int = 64
    epochs: int = 10
    train_size: int = 12000
    val_size: int = 2000
    seed: int = 0
    noise: float = 5.5
    threads: int = 0
    gpus: int = 0
    pipeline: str = "numpy"
    learning_rate: float | None = None
    explicit_steps: bool = False
    autotune: bool = True


def add_workload_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", choices=WORKLOADS, help="built-in workload")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--epochs", type=int, default=10, help="planned epochs (N_ep)")
    p.add_argument("--train-size", type=int, default=12000, help="training samples")
    p.add_argument("--val-size", type=int, default=2000, help="validation samples")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--noise", type=float, default=5.5, help="noise level of the synthetic data")
    p.add_argument("--threads", type=int, default=0, help="TensorFlow intra/inter-op threads (0: all)")
    p.add_argument("--gpus", type=int, default=0, help="use tf.distribute.MirroredStrategy over N GPUs")
    p.add_argument("--pipeline", choices=("numpy", "tfdata"), default="numpy",
                   help="feed fit() NumPy arrays (shuffled by Keras) or a shuffled tf.data pipeline")
    p.add_argument("--lr", dest="learning_rate", type=float, default=None)
    p.add_argument("--no-autotune", dest="autotune", action="store_false",
                   help="tfdata pipeline: disable tf.data autotuning (see the epoch-boundary stall)")
    p.add_argument("--explicit-steps", action="store_true",
                   help="pass steps_per_epoch to fit() (avoids Keras' per-epoch iterator stall)")


def synthetic_images(n: int, shape: tuple[int, int, int], classes: int, seed: int,
                     noise: float) -> tuple[Any, Any]:
    import numpy as np

    rng = np.random.default_rng(seed)
    proto_rng = np.random.default_rng(12345)  # prototypes are the same for train and validation
    h, w, c = shape
    coarse = proto_rng.normal(size=(classes, h // 4 + 1, w // 4 + 1, c))
    protos = coarse.repeat(4, axis=1).repeat(4, axis=2)[:, :h, :w, :]
    labels = rng.integers(0, classes, size=n)
    shifts = rng.integers(-2, 3, size=(n, 2))
    x = np.empty((n, h, w, c), dtype=np.float32)
    for i in range(n):
        x[i] = np.roll(protos[labels[i]], tuple(shifts[i]), axis=(0, 1))
    x *= rng.uniform(0.6, 1.4, size=(n, 1, 1, 1)).astype(np.float32)
    x += rng.normal(scale=noise, size=x.shape).astype(np.float32)
    return x, labels.astype(np.int32)


def synthetic_tabular(n: int, features: int, classes: int, seed: int, noise: float) -> tuple[Any, Any]:
    import numpy as np

    rng = np.random.default_rng(seed)
    proto = np.random.default_rng(54321).normal(size=(classes, features))
    labels = rng.integers(0, classes, size=n)
    x = proto[labels] + rng.normal(scale=noise * 1.8, size=(n, features))
    return x.astype(np.float32), labels.astype(np.int32)


def build_model(cfg: WorkloadConfig) -> Any:
    import keras
    from keras import layers

    if cfg.name == "mnist-cnn":
        model = keras.Sequential([
            keras.Input((28, 28, 1)),
            layers.Conv2D(32, 3, activation="relu"),
            layers.Conv2D(64, 3, activation="relu"),
            layers.MaxPooling2D(2),
            layers.Dropout(0.25),
            layers.Flatten(),
            layers.Dense(128, activation="relu"),
            layers.Dropout(0.5),
            layers.Dense(10, activation="softmax"),
        ])
        # Those runs used Adadelta at 0.001; on synthetic data that barely moves in a
        # few epochs, so the default is Keras' classic mnist_cnn setting (1.0). --lr overrides.
        opt: Any = keras.optimizers.Adadelta(learning_rate=cfg.learning_rate or 1.0)
    elif cfg.name == "cifar-resnet":
        inputs = keras.Input((32, 32, 3))
        x = layers.Conv2D(16, 3, padding="same", use_bias=False)(inputs)
        x = layers.BatchNormalization()(x)
        x = layers.Activation("relu")(x)
        for filters, stride in ((16, 1), (32, 2), (64, 2)):
            shortcut = x
            y = layers.Conv2D(filters, 3, strides=stride, padding="same", use_bias=False)(x)
            y = layers.BatchNormalization()(y)
            y = layers.Activation("relu")(y)
            y = layers.Conv2D(filters, 3, padding="same", use_bias=False)(y)
            y = layers.BatchNormalization()(y)
            if stride != 1 or shortcut.shape[-1] != filters:
                shortcut = layers.Conv2D(filters, 1, strides=stride, use_bias=False)(shortcut)
            x = layers.Activation("relu")(layers.Add()([y, shortcut]))
        x = layers.GlobalAveragePooling2D()(x)
        outputs = layers.Dense(10, activation="softmax")(x)
        model = keras.Model(inputs, outputs)
        opt = keras.optimizers.SGD(learning_rate=cfg.learning_rate or 0.05, momentum=0.9)
    elif cfg.name == "tabular-mlp":
        model = keras.Sequential([
            keras.Input((256,)),
            layers.Dense(256, activation="relu"),
            layers.Dropout(0.2),
            layers.Dense(128, activation="relu"),
            layers.Dense(10, activation="softmax"),
        ])
        opt = keras.optimizers.Adam(learning_rate=cfg.learning_rate or 1e-3)
    else:
        raise ValueError(f"unknown workload {cfg.name!r}; one of {', '.join(WORKLOADS)}")
    model.compile(optimizer=opt, loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def load_data(cfg: WorkloadConfig) -> tuple[Any, Any, Any, Any]:
    if cfg.name == "tabular-mlp":
        xt, yt = synthetic_tabular(cfg.train_size, 256, 10, cfg.seed, cfg.noise)
        xv, yv = synthetic_tabular(cfg.val_size, 256, 10, cfg.seed + 1, cfg.noise)
    else:
        shape = (28, 28, 1) if cfg.name == "mnist-cnn" else (32, 32, 3)
        xt, yt = synthetic_images(cfg.train_size, shape, 10, cfg.seed, cfg.noise)
        xv, yv = synthetic_images(cfg.val_size, shape, 10, cfg.seed + 1, cfg.noise)
    return xt, yt, xv, yv


def run_workload(cfg: WorkloadConfig) -> None:
    """Train the workload with plain Keras `fit`, or a plain PyTorch loop for torch-* (the
    agent's hook does the probing)."""
    if cfg.name.startswith("torch-"):
        from .torch_workloads import run_torch_workload

        run_torch_workload(cfg.name, cfg.batch_size, cfg.epochs, cfg.train_size, cfg.val_size,
                           cfg.seed, cfg.noise, cfg.threads, cfg.learning_rate)
        return
    import tensorflow as tf

    if cfg.threads:
        tf.config.threading.set_intra_op_parallelism_threads(cfg.threads)
        tf.config.threading.set_inter_op_parallelism_threads(cfg.threads)
    xt, yt, xv, yv = load_data(cfg)
    if cfg.gpus and cfg.gpus > 1:
        gpus = [f"/gpu:{i}" for i in range(cfg.gpus)]
        with tf.distribute.MirroredStrategy(gpus).scope():
            model = build_model(cfg)
    else:
        model = build_model(cfg)
    if cfg.pipeline == "tfdata":
        train = (tf.data.Dataset.from_tensor_slices((xt, yt)).shuffle(len(xt), seed=cfg.seed)
                 .batch(cfg.batch_size).prefetch(tf.data.AUTOTUNE if cfg.autotune else 2))
        val = tf.data.Dataset.from_tensor_slices((xv, yv)).batch(cfg.batch_size)
        if not cfg.autotune:
            opts = tf.data.Options()
            opts.autotune.enabled = False
            train, val = train.with_options(opts), val.with_options(opts)
        model.fit(train, epochs=cfg.epochs, validation_data=val if len(xv) else None, verbose=0)
    else:
        steps = -(-len(xt) // cfg.batch_size) if cfg.explicit_steps else None
        model.fit(xt, yt, batch_size=cfg.batch_size, epochs=cfg.epochs, steps_per_epoch=steps,
                  validation_data=(xv, yv) if len(xv) else None, verbose=0, shuffle=True)


def main(argv: list[str] | None = None) -> None:
    """``python -m probecast_agent.workloads NAME ...``: the workload as a program of its own,
    run by the agent's launcher like any user command."""
    import argparse

    p = argparse.ArgumentParser(prog="probecast-workload")
    add_workload_arguments(p)
    ns = p.parse_args(argv)
    run_workload(WorkloadConfig(
        name=ns.name, batch_size=ns.batch_size, epochs=ns.epochs, train_size=ns.train_size,
        val_size=ns.val_size, seed=ns.seed, noise=ns.noise, threads=ns.threads, gpus=ns.gpus,
        pipeline=ns.pipeline, learning_rate=ns.learning_rate, explicit_steps=ns.explicit_steps,
        autotune=ns.autotune))


if __name__ == "__main__":
    main()
