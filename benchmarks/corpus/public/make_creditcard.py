"""A stand-in for Kaggle's credit-card fraud CSV (keras.io's imbalanced_classification reads
it): a header, then rows of Time, V1..V28, Amount and a quoted Class, 0.17 % of them fraud -
the real file's columns and balance, random values, fewer rows.

    python make_creditcard.py PATH [ROWS]     # ROWS: 100 000 by default (the real one: 284 807)
"""

import random
import sys


def main(path: str, rows: int = 100_000) -> None:
    rng = random.Random(0)
    header = ['"Time"'] + [f'"V{i}"' for i in range(1, 29)] + ['"Amount"', '"Class"']
    with open(path, "w") as f:
        f.write(",".join(header) + "\n")
        for i in range(rows):
            fraud = rng.random() < 0.0017
            v = [f"{rng.gauss(1.5 if fraud else 0.0, 1.0):.6f}" for _ in range(28)]
            f.write(f"{i * 0.6:.1f}," + ",".join(v) + f",{rng.expovariate(1 / 88):.2f},"
                    f'"{int(fraud)}"\n')


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 100_000)
