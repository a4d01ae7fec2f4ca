# Synthetic stand-in for nietzsche.txt (keras.utils.get_file download):
# plain UTF-8 English-like text built from random words, default 100k characters.
import sys
import random

n_chars = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
random.seed(0)
letters = "etaoinshrdlcumwfgypbvkjxqz"
weights = [12, 9, 8, 8, 7, 7, 6, 6, 6, 4, 4, 3, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1]
vocab = ["".join(random.choices(letters, weights, k=random.randint(1, 9))) for _ in range(3000)]
out, length, line = [], 0, 0
while length < n_chars:
    w = random.choice(vocab)
    if random.random() < 0.08:
        w = w.capitalize()
    r = random.random()
    if r < 0.06:
        w += random.choice([",", ";", ":"])
    elif r < 0.1:
        w += random.choice([".", "!", "?", '"', ")"])
    line += len(w) + 1
    sep = "\n" if line > 70 else " "
    if sep == "\n":
        line = 0
    out.append(w + sep)
    length += len(w) + 1
with open("nietzsche.txt", "w", encoding="utf-8") as f:
    f.write("".join(out)[:n_chars])
print("wrote", n_chars, "chars")
