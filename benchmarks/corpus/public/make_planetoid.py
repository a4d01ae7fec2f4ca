"""A stand-in for a Planetoid citation graph in its raw form (PyTorch Geometric's
``Planetoid(root, "Cora")`` reads ``root/Cora/raw/ind.cora.*`` and downloads nothing where they
are): Cora's counts - 2 708 papers of 1 433 binary word features (about 18 set each), 7 classes,
140 labelled for training, 1 000 test papers, 5 429 citations - random content, a fixed seed.

    python make_planetoid.py ROOT [NAME]      # writes ROOT/NAME/raw/ind.name.{x,tx,allx,y,ty,ally,graph,test.index}
"""

import pickle
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import scipy.sparse as sp

NODES, FEATURES, CLASSES, TRAIN, TEST, CITES = 2708, 1433, 7, 140, 1000, 5429


def main(root: Path, name: str = "Cora") -> None:
    rng = np.random.default_rng(0)
    raw = root / name / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    x = (rng.random((NODES, FEATURES)) < 18 / FEATURES).astype(np.float32)
    labels = rng.integers(0, CLASSES, NODES)
    onehot = np.eye(CLASSES, dtype=np.float32)[labels]
    known = NODES - TEST                                  # allx: every node but the test ones
    test_index = rng.permutation(np.arange(known, NODES)) # stored unsorted, as Planetoid's are
    parts = {"x": sp.csr_matrix(x[:TRAIN]), "allx": sp.csr_matrix(x[:known]),
             "tx": sp.csr_matrix(x[known:]), "y": onehot[:TRAIN], "ally": onehot[:known],
             "ty": onehot[known:]}
    graph: dict[int, list[int]] = defaultdict(list)
    for a, b in rng.integers(0, NODES, (CITES, 2)):
        if a != b:
            graph[int(a)].append(int(b))
            graph[int(b)].append(int(a))
    parts["graph"] = graph
    stem = f"ind.{name.lower()}"
    for key, value in parts.items():
        with open(raw / f"{stem}.{key}", "wb") as f:
            pickle.dump(value, f)
    (raw / f"{stem}.test.index").write_text("\n".join(str(i) for i in test_index) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]), *sys.argv[2:3])
