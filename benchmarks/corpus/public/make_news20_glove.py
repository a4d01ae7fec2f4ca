"""Synthetic stand-ins for the two inputs of keras.io's pretrained_word_embeddings.py:

1. The extracted news20.tar.gz tree: NEWS_ROOT/20_newsgroup/<group>/<article id>, the 20 real group
   names, one Usenet-style article per file: 10 header lines (Xref, Newsgroups, Path, From,
   Subject, Message-ID, Sender, Organization, Date, Lines; the script drops the first 10 lines),
   a blank line, then a wrapped body of 40-300 words. comp.graphics/38987, which the script
   prints, is always written.
2. GloVe text vectors (glove.6B.100d.txt format): "word v1 ... v100" per line, space-separated.

Words are pronounceable pseudo-words plus common English function words (and "cat", "sat",
"mat", which the script looks up). Word frequencies follow a Zipf law; each group has its own
topic words, drawn more often in its articles, whose GloVe vectors lie near a per-group centroid,
so the frozen embeddings carry class signal. About 90% of the corpus vocabulary has a vector,
and the GloVe file also holds words that never occur in the corpus. Deterministic (seed 0).

    python make_news20_glove.py NEWS_ROOT GLOVE_TXT DOCS_PER_GROUP
"""
import sys
from pathlib import Path

import numpy as np

news_root, glove_path, per_group = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
GROUPS = ["alt.atheism", "comp.graphics", "comp.os.ms-windows.misc", "comp.sys.ibm.pc.hardware",
          "comp.sys.mac.hardware", "comp.windows.x", "misc.forsale", "rec.autos", "rec.motorcycles",
          "rec.sport.baseball", "rec.sport.hockey", "sci.crypt", "sci.electronics", "sci.med",
          "sci.space", "soc.religion.christian", "talk.politics.guns", "talk.politics.mideast",
          "talk.politics.misc", "talk.religion.misc"]
FUNCTION = ("the of and to a in is that it for i you on this be are not with as have was but "
            "they if or at can by from there what so about we an my do all would will one your "
            "any no has just like some more me out know people think only cat sat mat").split()
ONSETS = ["b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w",
          "br", "cr", "dr", "fl", "gr", "pl", "pr", "sh", "st", "str", "th", "tr", "ch"]
VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "io", "ou"]
CODAS = ["", "", "n", "r", "s", "t", "l", "m", "nd", "st", "ck", "ng"]


def make_words(n, taken):
    out = []
    while len(out) < n:
        w = "".join(rng.choice(ONSETS) + rng.choice(VOWELS) for _ in range(rng.integers(1, 4)))
        w += rng.choice(CODAS)
        if w not in taken:
            taken.add(w); out.append(w)
    return out


taken = set(FUNCTION)
general = FUNCTION + make_words(9000, taken)                 # shared vocabulary, Zipf-ranked
topics = [make_words(150, taken) for _ in GROUPS]             # per-group topic words
unused = make_words(3000, taken)                              # GloVe-only words
p_gen = 1.0 / np.arange(1, len(general) + 1) ** 1.05; p_gen /= p_gen.sum()
p_top = 1.0 / np.arange(1, 151) ** 0.9; p_top /= p_top.sum()

# ---- GloVe vectors
dim = 100
centroids = rng.normal(0, 0.5, (len(GROUPS), dim))
with open(glove_path, "w") as fh:
    rows = [(w, rng.normal(0, 0.4, dim)) for w in general]
    for g, words in enumerate(topics):
        rows += [(w, 0.6 * centroids[g] + rng.normal(0, 0.3, dim)) for w in words]
    rows += [(w, rng.normal(0, 0.4, dim)) for w in unused]
    keep = rng.random(len(rows)) < 0.9
    keep[:len(FUNCTION)] = True
    order = rng.permutation(len(rows))
    n_vec = 0
    for i in order:
        if keep[i]:
            w, v = rows[i]
            fh.write(w + " " + " ".join(f"{x:.5f}" for x in v) + "\n"); n_vec += 1
print("wrote", glove_path, n_vec, "vectors of", dim)

# ---- articles
NAMES = ["john", "mary", "alan", "susan", "david", "linda", "mike", "karen", "steve", "paul"]
HOSTS = ["cs.cmu.edu", "netcom.com", "uiuc.edu", "mit.edu", "ucsd.edu", "bnr.ca", "cco.caltech.edu"]
base = news_root / "20_newsgroup"
total = 0
for g, group in enumerate(GROUPS):
    d = base / group; d.mkdir(parents=True, exist_ok=True)
    start = 38900 if group == "comp.graphics" else 49000 + 1000 * g + int(rng.integers(0, 500))
    ids = [start + 1 + 2 * k for k in range(per_group)]
    if group == "comp.graphics" and 38987 not in ids:
        ids[-1] = 38987
    for art in ids:
        n = int(rng.integers(40, 300))
        topical = rng.random(n) < 0.12
        words = np.where(topical, rng.choice(topics[g], n, p=p_top), rng.choice(general, n, p=p_gen))
        lines, line = [], []
        for k, w in enumerate(words):
            line.append(w + ("." if rng.random() < 0.07 else ("," if rng.random() < 0.05 else "")))
            if len(line) >= rng.integers(8, 14):
                lines.append(" ".join(line)); line = []
        if line:
            lines.append(" ".join(line))
        who, host = rng.choice(NAMES), rng.choice(HOSTS)
        subj = " ".join(rng.choice(topics[g], 3))
        header = [f"Xref: cantaloupe.srv.cs.cmu.edu {group}:{art}", f"Newsgroups: {group}",
                  f"Path: cantaloupe.srv.cs.cmu.edu!{host}!{who}", f"From: {who}@{host}",
                  f"Subject: Re: {subj}", f"Message-ID: <{art}.{who}@{host}>", f"Sender: news@{host}",
                  f"Organization: {host.split('.')[0].upper()} University",
                  f"Date: {int(rng.integers(1, 29))} Apr 1993 {int(rng.integers(10, 24))}:0{int(rng.integers(0, 10))}:00 GMT",
                  f"Lines: {len(lines)}"]
        (d / str(art)).write_text("\n".join(header) + "\n\n" + "\n".join(lines) + "\n", encoding="latin-1")
        total += 1
print("wrote", total, "articles in", len(GROUPS), "groups under", base)
