"""Stand-in for a Hugging Face Hub checkpoint (`--tokenizer_name gpt2`, `--model_name_or_path
sshleifer/tiny-gpt2` in transformers' examples): a byte-level BPE trained on a local text file and
saved as a GPT2TokenizerFast directory, so `AutoTokenizer.from_pretrained(DIR)` loads it offline;
GPT-2's special token (<|endoftext|>) and model_max_length (1024), a vocabulary smaller than
GPT-2's 50 257 (VOCAB, default 8 000). With LAYERS,EMBD,HEADS,POSITIONS a randomly initialised
GPT-2 of that size is saved beside it, so `AutoModelForCausalLM.from_pretrained(DIR)` loads too.
Usage: python make_hf_tokenizer.py TEXT_FILE OUT_DIR [VOCAB] [LAYERS,EMBD,HEADS,POSITIONS]
"""
import sys

import torch

from tokenizers import ByteLevelBPETokenizer
from transformers import GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast


def main():
    text, out = sys.argv[1], sys.argv[2]
    vocab = int(sys.argv[3]) if len(sys.argv) > 3 else 8000
    bpe = ByteLevelBPETokenizer()
    bpe.train([text], vocab_size=vocab, special_tokens=["<|endoftext|>"])
    tok = GPT2TokenizerFast(tokenizer_object=bpe._tokenizer, bos_token="<|endoftext|>",
                            eos_token="<|endoftext|>", unk_token="<|endoftext|>",
                            model_max_length=1024)
    tok.save_pretrained(out)
    if len(sys.argv) > 4:
        layers, embd, heads, positions = (int(v) for v in sys.argv[4].split(","))
        config = GPT2Config(vocab_size=len(tok), n_layer=layers, n_embd=embd, n_head=heads,
                            n_positions=positions, bos_token_id=tok.bos_token_id,
                            eos_token_id=tok.eos_token_id)
        torch.manual_seed(0)
        GPT2LMHeadModel(config).save_pretrained(out)


if __name__ == "__main__":
    main()
