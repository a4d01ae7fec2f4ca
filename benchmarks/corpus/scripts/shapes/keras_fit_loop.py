"""Keras fit() called once per epoch in a Python loop, with text generation in between: adapted
from keras-team/keras-io `examples/generative/lstm_character_level_text_generation.py`
("Character-level text generation with LSTM", fchollet; commit 0a09cb6).

Kept from the original: the character vocabulary, semi-redundant sequences of maxlen = 40
characters every step = 3, one-hot x / y arrays; the model (LSTM(128) then a softmax Dense)
compiled with RMSprop(0.01) and categorical cross-entropy; module-level `epochs` and
`batch_size`; the loop `for epoch in range(epochs): model.fit(x, y, batch_size=batch_size,
epochs=1)` followed each time by "Generating text after epoch", which for each diversity in
[0.2, 0.5, 1.0, 1.2] prints a seed and generates characters one at a time with
`model.predict(x_pred, verbose=0)` and sample().

Changed: the text is synthetic (no nietzsche.txt download): 75 000 characters of pseudo-words
(about 25 000 sequences instead of 200 000); each generation is 40 characters (400), so the
work between two fit() calls is 160 predict() calls instead of 1 600; `epochs` is 5 (40) and
both it and batch_size can be overridden on the command line (`--epochs`, `--batch-size`);
imports are Keras 3's (`import keras`, np.bool -> bool).

Batch size flag: `--batch-size N` (module-level batch_size = 128 otherwise). Full run, as
recorded:
    python keras_fit_loop.py --epochs 5 --batch-size 128
    python keras_fit_loop.py --epochs 5 --batch-size 512
"""

"""
## Setup
"""
import argparse
import keras
from keras import layers

import numpy as np
import random
import sys

epochs = 5
batch_size = 128

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=epochs)
parser.add_argument("--batch-size", type=int, default=batch_size)
_args = parser.parse_args()
epochs, batch_size = _args.epochs, _args.batch_size

"""
## Prepare the data
"""


def synthetic_text(n_chars=75_000, seed=0):
    """Stand-in for nietzsche.txt: lower-case pseudo-words and punctuation."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(1, 9))) for _ in range(600)]
    weights = [1.0 / (i + 1) for i in range(len(words))]
    out, size = [], 0
    while size < n_chars:
        line = " ".join(rng.choices(words, weights, k=rng.randint(5, 14)))
        line += rng.choice([".", ",", ";", "!", "?", ":", " --"]) + "\n"
        out.append(line)
        size += len(line)
    return "".join(out)[:n_chars]


text = synthetic_text().lower()
print("corpus length:", len(text))

chars = sorted(list(set(text)))
print("total chars:", len(chars))
char_indices = dict((c, i) for i, c in enumerate(chars))
indices_char = dict((i, c) for i, c in enumerate(chars))

# cut the text in semi-redundant sequences of maxlen characters
maxlen = 40
step = 3
sentences = []
next_chars = []
for i in range(0, len(text) - maxlen, step):
    sentences.append(text[i : i + maxlen])
    next_chars.append(text[i + maxlen])
print("nb sequences:", len(sentences))

print("Vectorization...")
x = np.zeros((len(sentences), maxlen, len(chars)), dtype=bool)
y = np.zeros((len(sentences), len(chars)), dtype=bool)
for i, sentence in enumerate(sentences):
    for t, char in enumerate(sentence):
        x[i, t, char_indices[char]] = 1
    y[i, char_indices[next_chars[i]]] = 1


"""
## Build the model: a single LSTM layer
"""

model = keras.Sequential(
    [
        keras.Input(shape=(maxlen, len(chars))),
        layers.LSTM(128),
        layers.Dense(len(chars), activation="softmax"),
    ]
)
optimizer = keras.optimizers.RMSprop(learning_rate=0.01)
model.compile(loss="categorical_crossentropy", optimizer=optimizer)

"""
## Prepare the text sampling function
"""


def sample(preds, temperature=1.0):
    # helper function to sample an index from a probability array
    preds = np.asarray(preds).astype("float64")
    preds = np.log(preds) / temperature
    exp_preds = np.exp(preds)
    preds = exp_preds / np.sum(exp_preds)
    probas = np.random.multinomial(1, preds, 1)
    return np.argmax(probas)


"""
## Train the model
"""

for epoch in range(epochs):
    model.fit(x, y, batch_size=batch_size, epochs=1)

    print()
    print("Generating text after epoch: %d" % epoch)

    start_index = random.randint(0, len(text) - maxlen - 1)
    for diversity in [0.2, 0.5, 1.0, 1.2]:
        print("----- diversity:", diversity)

        generated = ""
        sentence = text[start_index : start_index + maxlen]
        generated += sentence
        print('----- Generating with seed: "' + sentence + '"')
        sys.stdout.write(generated)

        for i in range(40):
            x_pred = np.zeros((1, maxlen, len(chars)))
            for t, char in enumerate(sentence):
                x_pred[0, t, char_indices[char]] = 1.0

            preds = model.predict(x_pred, verbose=0)[0]
            next_index = sample(preds, diversity)
            next_char = indices_char[next_index]

            sentence = sentence[1:] + next_char

            sys.stdout.write(next_char)
            sys.stdout.flush()
        print()
