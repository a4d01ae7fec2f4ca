"""Synthetic CIFAR-10 in its python pickle format (``cifar-10-batches-py``: five training batches,
``test_batch``, ``batches.meta``), what ``torchvision.datasets.CIFAR10`` reads where the files
exist. Its md5 checks fail on bytes that are not CIFAR's: the laid-out torchvision checks that
the files exist instead (see README.md).

    python make_cifar.py ROOT [N_TRAIN N_TEST]     (CIFAR's 50 000 / 10 000 by default)
"""
import pickle
import sys
from pathlib import Path

import numpy as np

out = Path(sys.argv[1]) / "cifar-10-batches-py"
out.mkdir(parents=True, exist_ok=True)
n_train, n_test = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (50000, 10000)
rng = np.random.default_rng(0)


def batch(n: int) -> dict:
    labels = rng.integers(0, 10, n)
    data = (rng.random((n, 3, 32, 32)) * 80).astype(np.uint8)
    for i in range(10):  # a class-dependent stripe, so the losses fall
        data[labels == i, i % 3, 3 * i: 3 * i + 3, 4:28] = 255
    return {"data": data.reshape(n, 3072), "labels": labels.tolist()}


for k in range(5):
    lo, hi = n_train * k // 5, n_train * (k + 1) // 5
    (out / f"data_batch_{k + 1}").write_bytes(pickle.dumps(batch(hi - lo)))
(out / "test_batch").write_bytes(pickle.dumps(batch(n_test)))
names = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]
(out / "batches.meta").write_bytes(pickle.dumps({"label_names": names}))
