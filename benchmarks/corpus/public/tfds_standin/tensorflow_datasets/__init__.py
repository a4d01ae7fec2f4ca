"""A stand-in for TensorFlow Datasets' ``tfds.load`` (no download here): MNIST (60 000 / 10 000
synthetic digits, 28x28x1 uint8) and penguins ('penguins/simple': a dict of the raw columns;
'penguins/processed': four normalised float32 features and a species label), with the split
slices tfds reads ('train[10000:]', 'train[:20%]'), ``as_supervised``, ``batch_size`` (-1: the
whole split as tensors), ``with_info`` (features, splits' num_examples) and ``as_dataframe``.
Put its folder on PYTHONPATH. Deterministic (seed 0)."""
import re
import types

import numpy as np
import tensorflow as tf

__version__ = "4.9.0-standin"


def _mnist(n):
    rng = np.random.default_rng(0 if n == 60000 else 1)
    y = rng.integers(0, 10, n).astype(np.int64)
    x = (rng.random((n, 28, 28, 1)) * 60).astype(np.uint8)
    for i in range(10):
        x[y == i, 2 + 2 * i: 4 + 2 * i, 4:24, 0] = 255
    return {"image": x, "label": y}


def _penguins(processed):
    rng = np.random.default_rng(2)
    n = 334 if processed else 344
    species = rng.integers(0, 3, n).astype(np.int64)
    mass = 3700 + 600 * species + rng.normal(0, 300, n)
    culmen_l = 39 + 6 * species + rng.normal(0, 2.5, n)
    culmen_d = 18.5 - 2 * (species == 2) + rng.normal(0, 1, n)
    flipper = 190 + 12 * species + rng.normal(0, 6, n)
    if processed:
        cols = [mass, culmen_l, culmen_d, flipper]
        feats = np.stack([(c - c.min()) / (c.max() - c.min()) for c in cols], 1)
        return {"features": feats.astype(np.float32), "species": species}
    islands = np.array(["Biscoe", "Dream", "Torgersen"])
    return {"species": species, "island": rng.integers(0, 3, n).astype(np.int64),
            "culmen_length_mm": culmen_l.astype(np.float32),
            "culmen_depth_mm": culmen_d.astype(np.float32),
            "flipper_length_mm": flipper.astype(np.float32),
            "body_mass_g": mass.astype(np.float32),
            "sex": rng.integers(0, 2, n).astype(np.int64), "_islands": islands}


_SUPERVISED = {"mnist": ("image", "label"), "penguins/processed": ("features", "species"),
               "penguins/simple": None}


def _data(name, split):
    if name == "mnist":
        return _mnist(60000 if split == "train" else 10000)
    if name.startswith("penguins"):
        return _penguins(name.endswith("processed"))
    raise ValueError(f"tfds stand-in: no dataset {name!r}")


def _slice(data, spec):
    m = re.fullmatch(r"(\w+)(?:\[(-?\d*)(%?):(-?\d*)(%?)\])?", spec)
    split, a, ap, b, bp = m.groups()
    whole = {k: v for k, v in _data_cache(split).items() if not k.startswith("_")}
    n = len(next(iter(whole.values())))

    def at(v, pct):
        if v in (None, ""):
            return None
        return int(v) * n // 100 if pct else int(v)

    lo, hi = at(a, ap), at(b, bp)
    return {k: v[lo:hi] for k, v in whole.items()}


_CACHE = {}
_NAME = [None]


def _data_cache(split):
    key = (_NAME[0], split)
    if key not in _CACHE:
        _CACHE[key] = _data(_NAME[0], split)
    return _CACHE[key]


def _info(name):
    splits = {}
    for split in ("train", "test") if name == "mnist" else ("train",):
        _NAME[0] = name
        n = len(next(iter(v for k, v in _data_cache(split).items() if not k.startswith("_"))))
        splits[split] = types.SimpleNamespace(num_examples=n)
    keys = [k for k in _data_cache("train") if not k.startswith("_")]
    return types.SimpleNamespace(name=name, features=f"FeaturesDict({keys})", splits=splits,
                                 supervised_keys=_SUPERVISED.get(name))


def load(name, split=None, batch_size=None, as_supervised=False, with_info=False,
         shuffle_files=False, **_):
    _NAME[0] = name
    pair = _SUPERVISED.get(name) if as_supervised else None

    def one(spec):
        cols = _slice(None, spec)
        if batch_size == -1:
            return (tf.constant(cols[pair[0]]), tf.constant(cols[pair[1]])) if pair else \
                {k: tf.constant(v) for k, v in cols.items()}
        ds = tf.data.Dataset.from_tensor_slices((cols[pair[0]], cols[pair[1]]) if pair else cols)
        return ds.batch(batch_size) if batch_size else ds

    if split is None:
        out = {s: one(s) for s in (("train", "test") if name == "mnist" else ("train",))}
    elif isinstance(split, (list, tuple)):
        out = [one(s) for s in split]
    else:
        out = one(split)
    return (out, _info(name)) if with_info else out


def as_dataframe(ds, info=None):
    import pandas as pd

    rows = []
    for item in ds.as_numpy_iterator():
        if isinstance(item, dict):
            rows.append(item)
        else:
            rows.append({"features": item[0], "label": item[1]})
    return pd.DataFrame(rows)
