"""A stand-in for LLMs-from-scratch's Project Gutenberg files as its `prepare_dataset.py` leaves
them (books joined into files of one size, the last one smaller): words drawn from a text of
English, ``combined_1.txt`` ... in OUT, of the sizes given (default three of 400 kB and one of
150 kB).

    python make_books.py OUT WORDS.txt [CHARS ...]
"""
import random
import sys
from pathlib import Path

out, source = Path(sys.argv[1]), Path(sys.argv[2])
sizes = [int(a) for a in sys.argv[3:]] or [400_000, 400_000, 400_000, 150_000]
random.seed(0)
words = source.read_text().split()
out.mkdir(parents=True, exist_ok=True)
for i, n_chars in enumerate(sizes, 1):
    book, size = [], 0
    while size < n_chars:
        word = random.choice(words)
        book.append(word)
        size += len(word) + 1
    (out / f"combined_{i}.txt").write_text(" ".join(book))
