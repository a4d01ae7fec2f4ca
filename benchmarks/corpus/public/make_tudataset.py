"""A stand-in for a TU graph-classification dataset in its raw text form (PyTorch Geometric's
``TUDataset(root, NAME)`` reads ``root/NAME/raw/NAME_*.txt`` and downloads nothing where they
are): GRAPHS graphs of about NODES nodes each (a ring and random chords: about 3.7 edges a
node), LABELS node labels (one-hot features), two graph classes - random content, a fixed seed.
PROTEINS' counts by default (1 113 graphs, 39 nodes, 3 node labels); MUTAG's are 188 18 7.

    python make_tudataset.py ROOT NAME [GRAPHS NODES LABELS]
"""

import sys
from pathlib import Path

import numpy as np


def main(root: Path, name: str, graphs: int = 1113, nodes: int = 39, labels: int = 3) -> None:
    rng = np.random.default_rng(0)
    raw = root / name / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    edges, indicator, node_labels = [], [], []
    first = 1                                             # TU files count nodes from 1
    for g in range(1, graphs + 1):
        n = max(4, int(rng.normal(nodes, nodes / 4)))
        ring = [(i, (i + 1) % n) for i in range(n)]
        chords = [tuple(c) for c in rng.integers(0, n, (int(0.85 * n), 2)) if c[0] != c[1]]
        for a, b in ring + chords:
            edges += [(first + a, first + b), (first + b, first + a)]
        indicator += [g] * n
        node_labels += rng.integers(0, labels, n).tolist()
        first += n
    out = {"A": "\n".join(f"{a}, {b}" for a, b in edges),
           "graph_indicator": "\n".join(map(str, indicator)),
           "node_labels": "\n".join(map(str, node_labels)),
           "graph_labels": "\n".join(str(v) for v in rng.integers(0, 2, graphs))}
    for key, text in out.items():
        (raw / f"{name}_{key}.txt").write_text(text + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], *map(int, sys.argv[3:6]))
