"""A stand-in for the Cora citation graph (pytorch/examples' gcn and gat read it from
./cora/): 2 708 papers of 1 433 binary word features (about 18 set each) in 7 classes,
and 5 429 citations between them - Cora's counts and file layout, random content.

    python make_cora.py DIR      # writes DIR/cora.content and DIR/cora.cites
"""

import random
import sys
from pathlib import Path

PAPERS, WORDS, CITES = 2708, 1433, 5429
CLASSES = ("Case_Based", "Genetic_Algorithms", "Neural_Networks", "Probabilistic_Methods",
           "Reinforcement_Learning", "Rule_Learning", "Theory")


def main(out: Path) -> None:
    rng = random.Random(0)
    out.mkdir(parents=True, exist_ok=True)
    ids = rng.sample(range(30, 1_200_000), PAPERS)
    with (out / "cora.content").open("w") as f:
        for pid in ids:
            on = set(rng.sample(range(WORDS), rng.randint(5, 30)))
            words = "\t".join("1" if w in on else "0" for w in range(WORDS))
            f.write(f"{pid}\t{words}\t{rng.choice(CLASSES)}\n")
    with (out / "cora.cites").open("w") as f:
        for _ in range(CITES):
            a, b = rng.sample(ids, 2)
            f.write(f"{a}\t{b}\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
