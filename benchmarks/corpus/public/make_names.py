"""Synthetic name lists (no download), deterministic.
  python make_names.py makemore OUT_FILE N          -> one lowercase a-z name per line (makemore names.txt layout)
  python make_names.py langs OUT_DIR N_PER_LANG     -> OUT_DIR/<Language>.txt, one capitalised name per line
                                                       (layout of the tutorial's data/names/*.txt, 18 languages)
Names are built from per-language syllable sets, so the language is learnable from the spelling."""
import sys, random
from pathlib import Path

LANGS = {  # language -> (onsets, vowels, codas, endings)
    "Arabic": ("b d f h j k kh m n q r s sh t z", "a aa i ou u", "b d f l m n r s", "ah i oun ar"),
    "Chinese": ("b ch d g h j l m n p q s sh t w x y zh", "a ai an ang ao e ei en i ong u", "", "ng n"),
    "Czech": ("b c d h k l m n p r s t v z", "a e i o u y", "k l n r s", "ova ek ik cek"),
    "Dutch": ("b d g h j k l m n p r s t v w", "a aa e ee i oo u", "d k l n r s t", "en er ink stra"),
    "English": ("b c d f g h j l m p r s t w", "a e i o u", "d k l n r s t", "son ton ley er ford"),
    "French": ("b c d f g j l m n p r s t v", "a e eau i ou", "l n r s t", "ette ier eau ard"),
    "German": ("b d f g h k l m n r s sch t w", "a e ei i o u", "ck l n r t", "mann er berg hardt"),
    "Greek": ("d g k l m n p s t th", "a e i o ou", "s", "os is opoulos akis"),
    "Irish": ("b c d f g k l m n r s", "a ai ea o ua", "n l r", "an ey agh"),
    "Italian": ("b c d f g l m n p r s t v", "a e i o", "", "ini etti ucci one"),
    "Japanese": ("h k m n s t w y", "a e i o u", "", "moto shita ta no"),
    "Korean": ("b ch h j k m n p s y", "a e eo o u", "m n ng", "ng k"),
    "Polish": ("b c d g k l m n p r s w z", "a e i o y", "k r sz", "ski wicz ak czyk"),
    "Portuguese": ("b c d f g l m n p r s t v", "a ao e i o u", "l r s", "es eira inho"),
    "Russian": ("b d g k l m n p r s t v z zh", "a e i o u", "k l n r v", "ov ev in sky enko"),
    "Scottish": ("b c d f g k l m n r s t", "a ai e o", "n r", "ie son"),
    "Spanish": ("b c d f g l m n p r s t v", "a e i o u", "l n r s", "ez ero ado ia"),
    "Vietnamese": ("b d h l n ph t th tr v", "a ai an ang o u uy", "", "n ng"),
}

def make_name(rng, lang):
    onsets, vowels, codas, endings = (s.split() for s in LANGS[lang])
    parts = []
    for _ in range(rng.randint(1, 3)):
        parts.append(rng.choice(onsets) + rng.choice(vowels) + (rng.choice(codas) if codas and rng.random() < 0.4 else ""))
    if rng.random() < 0.6:
        parts.append(rng.choice(endings))
    return "".join(parts)

if __name__ == "__main__":
    mode, out, n = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(0)
    if mode == "makemore":
        langs = sorted(LANGS)
        names = [make_name(rng, rng.choice(langs)) for _ in range(n)]
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("\n".join(names) + "\n")
        print(f"wrote {n} names to {out}")
    elif mode == "langs":
        out.mkdir(parents=True, exist_ok=True)
        for lang in sorted(LANGS):
            names = [make_name(rng, lang).capitalize() for _ in range(n)]
            (out / f"{lang}.txt").write_text("\n".join(names) + "\n", encoding="utf-8")
        print(f"wrote {len(LANGS)} files of {n} names to {out}")
    else:
        sys.exit("mode must be makemore or langs")
