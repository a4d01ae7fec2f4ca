"""Synthetic MNIST in torchvision's raw idx format (what datasets.MNIST reads when the files exist)."""
import struct, sys, numpy as np
from pathlib import Path
raw = Path(sys.argv[1]); raw.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(0)
for prefix, n in (("train", int(sys.argv[2])), ("t10k", int(sys.argv[3]))):
    y = rng.integers(0, 10, n).astype(np.uint8)
    x = (rng.random((n, 28, 28)) * 60).astype(np.uint8)
    for i in range(10):  # a class-dependent stripe, so the losses fall
        x[y == i, 2 + 2 * i: 4 + 2 * i, 4:24] = 255
    (raw / f"{prefix}-images-idx3-ubyte").write_bytes(struct.pack(">IIII", 2051, n, 28, 28) + x.tobytes())
    (raw / f"{prefix}-labels-idx1-ubyte").write_bytes(struct.pack(">II", 2049, n) + y.tobytes())
