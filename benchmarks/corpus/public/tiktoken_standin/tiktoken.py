"""Stand-in for tiktoken (its BPE files download from a host this machine cannot reach): GPT-2's
pre-tokenizer pattern, each piece one id (a stable hash into GPT-2's 50 257) - about the BPE's
token count on English text."""
import re
import zlib

_PAT = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""")


class Encoding:
    n_vocab = 50257
    eot_token = 50256

    def __init__(self):
        self._words = {}

    def encode(self, text, allowed_special=()):
        ids = []
        for piece in _PAT.findall(text.replace("<|endoftext|>", "\0")):
            if piece == "\0":
                ids.append(self.eot_token)
                continue
            i = zlib.crc32(piece.encode()) % 50256
            self._words.setdefault(i, piece)
            ids.append(i)
        return ids

    def decode(self, ids):
        return "".join(self._words.get(int(i), " ?") for i in ids)


def get_encoding(name):
    return Encoding()
