"""Synthetic tinyshakespeare-like input.txt (no download), deterministic.
  python make_play.py OUT_FILE N_CHARS
Speaker blocks as in the original ('NAME:' line, 1-4 lines of text, blank line), words drawn from a fixed
vocabulary with a first-order word Markov chain, so the character statistics are learnable."""
import sys, random
from pathlib import Path

SPEAKERS = ["First Citizen", "Second Citizen", "MENENIUS", "MARCIUS", "COMINIUS", "BRUTUS", "SICINIUS",
            "VOLUMNIA", "KING RICHARD III", "GLOUCESTER", "QUEEN ELIZABETH", "ROMEO", "JULIET", "Nurse",
            "BENVOLIO", "MERCUTIO", "LADY CAPULET", "DUKE VINCENTIO", "ISABELLA", "ANGELO", "LUCIO", "PETRUCHIO"]
WORDS = ("the and I to of a my you that in is not with me it be his your this but for have he thou thy "
         "what so will as by all shall her no do we are our him if good lord now come let love o more sir "
         "then here let there well which king how would they make hath upon their know say speak man heart "
         "go death such us own may day hear tell night life blood sweet fair see them should give honour "
         "noble father gentle grace eyes hand heaven true mine yet nor doth ere art whose hence tis anon").split()

if __name__ == "__main__":
    out, n = Path(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(0)
    nxt = {w: rng.sample(WORDS, 12) for w in WORDS}  # each word has 12 likely successors
    chunks, size = [], 0
    while size < n:
        block = [rng.choice(SPEAKERS) + ":"]
        for _ in range(rng.randint(1, 4)):
            w = rng.choice(WORDS); line = [w.capitalize()]
            for _ in range(rng.randint(4, 11)):
                w = rng.choice(nxt[w]) if rng.random() < 0.85 else rng.choice(WORDS)
                line.append("I" if w == "i" else w)
            punct = rng.choice([",", ".", ";", "!", "?", ":", "."])
            block.append(" ".join(line) + punct)
        s = "\n".join(block) + "\n\n"
        chunks.append(s); size += len(s)
    text = "".join(chunks)[:n]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(f"wrote {len(text)} chars to {out}")
