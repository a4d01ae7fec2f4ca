"""A stand-in for the IMDB reviews as raw text files (``aclImdb/{train,test}/{pos,neg}/*.txt``,
what keras.io's text classification from scratch reads with ``text_dataset_from_directory``):
reviews of 20-600 words from a 30 000-word vocabulary, some with ``<br />`` tags and
punctuation, a few words leaning positive or negative so the loss falls.

    python make_aclimdb.py OUT [N_TRAIN N_TEST]     (per split, half positive; 25 000 by default)
"""
import sys
from pathlib import Path

import numpy as np

out = Path(sys.argv[1]) / "aclImdb"
n_train, n_test = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (25000, 25000)
rng = np.random.default_rng(0)
vocab = [f"w{i}" for i in range(30000)]
lean = {"pos": ["great", "wonderful", "loved"], "neg": ["awful", "boring", "hated"]}
for split, n in (("train", n_train), ("test", n_test)):
    for label in ("pos", "neg"):
        folder = out / split / label
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(n // 2):
            words = [vocab[j] for j in rng.zipf(1.3, int(rng.integers(20, 600))) % len(vocab)]
            words[:: 37] = [lean[label][k % 3] for k in range(len(words[:: 37]))]
            text = " ".join(words).replace(" w1 ", ". <br /><br />").replace(" w2 ", ", ")
            (folder / f"{i}_{7 if label == 'pos' else 2}.txt").write_text(text)
