"""Synthetic stand-in for manythings.org's fra-eng.zip (used by keras-io examples/nlp/lstm_seq2seq.py).

Writes <out>/fra-eng.zip holding fra.txt (and _about.txt) like the real archive: one pair per line,
"English<TAB>French<TAB>attribution", short sentences first (the real file is sorted by length).
Deterministic (seed 0). Usage: python make_fra_eng.py [OUT_DIR] [N_LINES]
"""
import os
import random
import sys
import zipfile

OUT = sys.argv[1] if len(sys.argv) > 1 else "../keras-lstm_seq2seq/data"
N = int(sys.argv[2]) if len(sys.argv) > 2 else 600

EN = ("go run stop wait help jump hide fire hello thanks sorry smile attack cheers "
      "i you he she we they it am is are was be see love like want eat drink know "
      "the a cat dog house car book water bread tea wine friend mother father child "
      "happy sad tired cold hot big small new old good bad here there now today").split()
FR = ("va cours arrete attends aide saute cache feu bonjour merci pardon souris attaque sante "
      "je tu il elle nous ils on suis est sont etait etre vois aime veux mange bois sais "
      "le la un une chat chien maison voiture livre eau pain the vin ami mere pere enfant "
      "heureux triste fatigue froid chaud grand petit nouveau vieux bon mauvais ici la maintenant "
      "aujourd'hui tres pas ne de du au à é è ê ç ô").split()


def sentence(rng, words, n, cap_punct):
    s = " ".join(rng.choice(words) for _ in range(n))
    s = s[0].upper() + s[1:]
    return s + rng.choice(cap_punct)


def main():
    rng = random.Random(0)
    pairs = []
    for i in range(N):
        # lengths grow slowly along the file, like the real (length-sorted) corpus
        n_en = 1 + min(2, int(3 * i / N) + rng.randint(0, 1))
        n_fr = n_en + rng.randint(0, 1)
        en = sentence(rng, EN, n_en, [".", "!", "?", "."])
        fr = sentence(rng, FR, n_fr, [" !", ".", " ?", "."])
        attr = "CC-BY 2.0 (France) Attribution: tatoeba.org #%d (CM) & #%d (Wittydev)" % (
            rng.randint(1000, 9999999), rng.randint(1000, 9999999))
        pairs.append((en, fr, attr))
    pairs.sort(key=lambda p: len(p[0]))
    os.makedirs(OUT, exist_ok=True)
    text = "".join("%s\t%s\t%s\n" % p for p in pairs)
    with zipfile.ZipFile(os.path.join(OUT, "fra-eng.zip"), "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("fra.txt", text)
        z.writestr("_about.txt", "Synthetic stand-in for http://www.manythings.org/anki/ (fra-eng).\n")
    print("wrote", os.path.join(OUT, "fra-eng.zip"), "lines:", N)


if __name__ == "__main__":
    main()
