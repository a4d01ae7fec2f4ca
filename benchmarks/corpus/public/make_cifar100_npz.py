"""Synthetic stand-in for keras.datasets.cifar100.load_data() (fine labels), as one .npz with
x_train (N,32,32,3) uint8, y_train (N,1) int64 (values 0-99), x_test, y_test: the shapes and dtypes
Keras' loader returns, made as make_cifar10_npz.py makes CIFAR-10's (100 class templates).
Keras checks the real archive's hash, so the script's load_data() line becomes an np.load of this file.
Usage: python make_cifar100_npz.py OUT_NPZ N_TRAIN N_TEST
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_cifar10_npz import write  # noqa: E402

write(sys.argv[1], 100, int(sys.argv[2]), int(sys.argv[3]), label_dtype=np.int64)
