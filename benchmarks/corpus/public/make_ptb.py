# Writes a synthetic Penn-Treebank-like data/train.txt (one sentence per line,
# space separated lower-case tokens, <unk> and N as in PTB). Vocabulary is 10000
# words incl. <eos> (as PTB), every word used at least once; the rest Zipf-distributed.
# The corpus is small (default ~12600 tokens incl. <eos> -> 21 steps of 20x30 per epoch)
# so that the 5 hard-coded epochs fit in about a minute on 2 CPU cores.
# Usage: python gen_ptb.py [n_tokens]
import os, sys
import numpy as np

n_tokens = int(sys.argv[1]) if len(sys.argv) > 1 else 12600
rng = np.random.default_rng(0)
letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
words, seen = ["the", "<unk>", "N", "of", "to", "a", "in", "and", "'s", "for"], set()
seen.update(words)
while len(words) < 9999:  # + <eos> added by the reader = 10000
    w = "".join(rng.choice(letters, rng.integers(2, 10)))
    if w not in seen:
        seen.add(w); words.append(w)
p = 1.0 / np.arange(1, len(words) + 1); p /= p.sum()
order = list(rng.permutation(len(words)))  # guarantees full vocab coverage
os.makedirs("data", exist_ok=True)
total = 0
with open("data/train.txt", "w") as f:
    while order or total < n_tokens:
        L = int(rng.integers(8, 35))
        ids = [order.pop() if order and rng.random() < 0.85 else int(rng.choice(len(words), p=p)) for _ in range(L)]
        f.write(" " + " ".join(words[i] for i in ids) + " \n")
        total += L + 1
print("wrote data/train.txt,", total, "tokens incl. <eos>")
