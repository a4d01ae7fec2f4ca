# Writes a synthetic data/eng-fra.txt in the format of the tutorial's download
# (https://download.pytorch.org/tutorial/data.zip): one "English<TAB>French" pair per line, UTF-8.
# About 40% of the pairs start with the English prefixes the tutorial keeps ("I am", "He's", ...),
# the rest are longer / other sentences that its filter drops. The French sentences the tutorial
# evaluates at the end are included so that every word it looks up is in the vocabulary.
# Usage: python gen_eng_fra.py [n_lines]
import os, sys, random

n_lines = int(sys.argv[1]) if len(sys.argv) > 1 else 30000
random.seed(0)
syll = ["ba", "ce", "di", "fo", "gu", "la", "me", "ni", "po", "ru", "sa", "te", "vi", "zo", "qu", "re", "mo", "an"]
def vocab(n, k):
    out = set()
    while len(out) < n:
        out.add("".join(random.choice(syll) for _ in range(random.randint(1, k))))
    return sorted(out)
eng_words = vocab(2800, 4)
fra_words = vocab(4300, 4)
eng_pref = ["I am", "I'm", "He is", "He's", "She is", "She's", "You are", "You're",
            "We are", "We're", "They are", "They're"]
fra_pref = ["Je suis", "Il est", "Elle est", "Tu es", "Vous êtes", "Nous sommes", "Ils sont", "Elles sont"]
fixed = [("I am too cold.", "Je suis trop froid."),
         ("She is five years younger than me.", "Elle a cinq ans de moins que moi."),
         ("She is too short.", "Elle est trop petit."),
         ("I am not scared of dying.", "Je ne crains pas de mourir."),
         ("He is a talented young director.", "C'est un jeune directeur plein de talent.")]
os.makedirs("data", exist_ok=True)
with open("data/eng-fra.txt", "w", encoding="utf-8") as f:
    for i in range(n_lines):
        if random.random() < 0.4:
            e = random.choice(eng_pref) + " " + " ".join(random.choices(eng_words, k=random.randint(1, 6))) + random.choice([".", "!", "?"])
            fr = random.choice(fra_pref) + " " + " ".join(random.choices(fra_words, k=random.randint(1, 6))) + random.choice([".", "!", "?"])
        else:
            e = " ".join(random.choices(eng_words, k=random.randint(1, 14))).capitalize() + "."
            fr = " ".join(random.choices(fra_words, k=random.randint(1, 15))).capitalize() + " é."
        f.write(e + "\t" + fr + "\n")
        if i % 1000 == 0:
            e, fr = fixed[(i // 1000) % len(fixed)]
            f.write(e + "\t" + fr + "\n")
print("wrote data/eng-fra.txt")
