"""Synthetic stand-in for the WikiText-2 train split that lightning.pytorch.demos.WikiText2 downloads
(https://raw.githubusercontent.com/pytorch/examples/main/word_language_model/data/wikitext-2/train.txt)
to ./data/wikitext-2.txt; when that file exists nothing is downloaded.

Same layout as the real file: space-tokenised lines, " = Title = " headings, " = = Section = = "
subheadings, blank " " lines, paragraphs with "<unk>", " @-@ ", " @,@ " and punctuation tokens.
Words are drawn from a Zipf-distributed vocabulary. Deterministic (seed 0).
Usage: python make_wikitext2.py [OUT_FILE] [N_TOKENS] [VOCAB]
"""
import os
import sys

import numpy as np

OUT = sys.argv[1] if len(sys.argv) > 1 else "../lightning-transformer/data/wikitext-2.txt"
N_TOKENS = int(sys.argv[2]) if len(sys.argv) > 2 else 146000
VOCAB = int(sys.argv[3]) if len(sys.argv) > 3 else 2000

COMMON = ("the , . of and in to a was The @-@ that on as for with by 's is from his at were it "
          "an had which be first are this also after not its but he or their have one two game "
          "series new they been who her has season film would more other when all during time "
          "<unk> \" ( ) @,@ @.@ ; :").split()


def main():
    rng = np.random.default_rng(0)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = list(dict.fromkeys(COMMON))
    seen = set(words)
    while len(words) < VOCAB:
        w = "".join(rng.choice(letters, int(rng.integers(3, 11))))
        if rng.random() < 0.15:
            w = w.capitalize()
        if w not in seen:
            seen.add(w)
            words.append(w)
    words = np.array(words)
    p = 1.0 / np.arange(1, VOCAB + 1) ** 1.05
    p /= p.sum()

    lines, n = [], 0
    while n < N_TOKENS:
        title = " ".join(words[rng.integers(60, VOCAB, int(rng.integers(1, 4)))])
        lines += [" ", " = %s = " % title, " "]
        for _ in range(int(rng.integers(2, 6))):
            if rng.random() < 0.4:
                sub = " ".join(words[rng.integers(60, VOCAB, int(rng.integers(1, 3)))])
                lines += [" = = %s = = " % sub, " "]
            for _ in range(int(rng.integers(1, 4))):
                k = int(rng.integers(40, 160))
                toks = words[rng.choice(VOCAB, k, p=p)]
                lines += [" " + " ".join(toks) + " . ", " "]
                n += k + 1
    os.makedirs(os.path.dirname(OUT) or ".", exist_ok=True)
    with open(OUT, "w", encoding="utf8") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote", OUT, "tokens ~", n, "vocab", VOCAB, "lines", len(lines))


if __name__ == "__main__":
    main()
