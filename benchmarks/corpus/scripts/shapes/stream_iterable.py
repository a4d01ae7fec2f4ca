"""Streaming pretraining from an IterableDataset: adapted from huggingface/transformers
`examples/research_projects/codeparrot/scripts/codeparrot_training.py` (commit 06ac4e0) with its
`arguments.py` (TrainingArguments) - the CodeParrot training script of the "Natural Language
Processing with Transformers" book, which streams its data with
`load_dataset(..., streaming=True)`.

Kept from the original: the dataclass TrainingArguments parsed by HfArgumentParser (flags
`--train_batch_size --valid_batch_size --max_train_steps --save_checkpoint_steps
--gradient_accumulation_steps --gradient_checkpointing --seq_length --max_eval_steps
--learning_rate --lr_scheduler_type --num_warmup_steps --weight_decay --shuffle_buffer --seed
--save_dir ...`); ConstantLengthDataset, a torch IterableDataset with no __len__ that packs a
stream of examples into seq_length-token sequences through a buffer (infinite for training:
it restarts the stream and logs "Dataset epoch"; finite for validation); the streamed training
data shuffled with a buffer; plain DataLoaders over them; AdamW on grouped parameters (no decay
for biases and LayerNorm weights) with get_scheduler (cosine, warmup); the loop
`for step, batch in enumerate(train_dataloader, start=1)` with a log line every step,
gradient accumulation (optimizer step every gradient_accumulation_steps forward passes),
gradient clipping, "tflops" / time_per_iteration logs, evaluate() (loss and perplexity over the
validation stream, max_eval_steps) and a checkpoint every save_checkpoint_steps forward passes,
`if completed_steps >= args.max_train_steps: break`; after the loop a last evaluation, the model
saved with save_pretrained and a last checkpoint.

Changed: no network - the "streaming dataset" is a small reader of local JSON-lines shards
(written once to `<tmp>/probecast_shapes/stream_data/`, synthetic pre-tokenized examples of 30-400
tokens over a 1 000-token vocabulary) with the same `.shuffle(buffer_size, seed)` / iteration
behaviour as a datasets.IterableDataset, and the data are read pre-tokenized
(`--tokenized True` in the original's terms), so there is no tokenizer; the model is a tiny
GPT2LMHeadModel built from a GPT2Config (2 layers, 128 wide) instead of the checkpoint in
`model_ckpt`; Accelerate, wandb / tensorboard trackers and the hub Repository (clone, push) are
left out: plain PyTorch on the CPU, checkpoints written with torch.save into
save_dir/step_N/; defaults shrunk (train_batch_size 8, seq_length 128, gradient_accumulation_steps
2 (16), num_warmup_steps 50 (750), max_train_steps 300 (50 000), save_checkpoint_steps 100
forward passes (1 024), save_dir in the temp folder). The brief's suggested flag was
--max-steps: this script keeps the original's --max_train_steps (optimizer steps; each is
gradient_accumulation_steps batches).

Batch size flag: `--train_batch_size N`. Full run, as recorded:
    python stream_iterable.py --train_batch_size 8 --max_train_steps 300
    python stream_iterable.py --train_batch_size 32 --max_train_steps 80
"""
import glob
import json
import logging
import os
import random
import tempfile
import time
from argparse import Namespace
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import torch
from torch.utils.data import IterableDataset
from torch.utils.data.dataloader import DataLoader

import transformers
from transformers import GPT2Config, GPT2LMHeadModel, HfArgumentParser, get_scheduler, set_seed


@dataclass
class TrainingArguments:
    """
    Configuration for training model.
    """

    save_dir: Optional[str] = field(
        default=os.path.join(tempfile.gettempdir(), "probecast_shapes", "codeparrot"),
        metadata={"help": "Save dir where model updates are saved to."},
    )
    dataset_name_train: Optional[str] = field(
        default=os.path.join(tempfile.gettempdir(), "probecast_shapes", "stream_data", "train-*.jsonl"),
        metadata={"help": "Name or path of training dataset."},
    )
    dataset_name_valid: Optional[str] = field(
        default=os.path.join(tempfile.gettempdir(), "probecast_shapes", "stream_data", "valid-*.jsonl"),
        metadata={"help": "Name or path of validation dataset."},
    )
    train_batch_size: Optional[int] = field(default=8, metadata={"help": "Batch size for training."})
    valid_batch_size: Optional[int] = field(default=8, metadata={"help": "Batch size for evaluation."})
    weight_decay: Optional[float] = field(default=0.1, metadata={"help": "Value of weight decay."})
    shuffle_buffer: Optional[int] = field(
        default=1000, metadata={"help": "Size of buffer used to shuffle streaming dataset."}
    )
    learning_rate: Optional[float] = field(default=5e-4, metadata={"help": "Learning rate fo training."})
    lr_scheduler_type: Optional[str] = field(default="cosine", metadata={"help": "Learning rate."})
    num_warmup_steps: Optional[int] = field(
        default=50, metadata={"help": "Number of warmup steps in the learning rate schedule."}
    )
    gradient_accumulation_steps: Optional[int] = field(
        default=2, metadata={"help": "Number of gradient accumulation steps."}
    )
    gradient_checkpointing: Optional[bool] = field(
        default=True, metadata={"help": "Use gradient checkpointing to reduce memory footprint."}
    )
    max_train_steps: Optional[int] = field(default=300, metadata={"help": "Maximum number of training steps."})
    max_eval_steps: Optional[int] = field(
        default=-1, metadata={"help": "Maximum number of evaluation steps. If -1 the full dataset is evaluated."}
    )
    seq_length: Optional[int] = field(default=128, metadata={"help": "Sequence lengths used for training."})
    seed: Optional[int] = field(default=1, metadata={"help": "Training seed."})
    save_checkpoint_steps: Optional[int] = field(
        default=100,
        metadata={"help": "Interval to save checkpoints. Measured as number of forward passes not training steps."},
    )
    tokenized: Optional[bool] = field(default=True, metadata={"help": "If True the data is pretokenized."})


# ---- a local stand-in for datasets.load_dataset(..., streaming=True) ------------------------

VOCAB_SIZE = 1000
BOS = 0


class StreamingJsonl:
    """Iterates JSON-lines shards lazily, one example at a time, like a streaming
    datasets.IterableDataset; shuffle(buffer_size, seed) shuffles the shard order and the
    examples through a buffer, as datasets does."""

    def __init__(self, pattern, buffer_size=0, seed=None):
        self.files = sorted(glob.glob(pattern))
        assert self.files, f"no files match {pattern}"
        self.buffer_size, self.seed, self.epoch = buffer_size, seed, 0

    def shuffle(self, buffer_size, seed=None):
        return StreamingJsonl.__new__(StreamingJsonl)._init_from(self, buffer_size, seed)

    def _init_from(self, other, buffer_size, seed):
        self.files, self.buffer_size, self.seed, self.epoch = other.files, buffer_size, seed, 0
        return self

    def _examples(self, rng):
        files = list(self.files)
        if rng is not None:
            rng.shuffle(files)
        for name in files:
            with open(name) as f:
                for line in f:
                    yield json.loads(line)

    def __iter__(self):
        if not self.buffer_size:
            yield from self._examples(None)
            return
        rng = random.Random(None if self.seed is None else self.seed + self.epoch)
        self.epoch += 1
        buf = []
        for ex in self._examples(rng):
            if len(buf) < self.buffer_size:
                buf.append(ex)
                continue
            i = rng.randrange(self.buffer_size)
            yield buf[i]
            buf[i] = ex
        rng.shuffle(buf)
        yield from buf


def load_dataset(pattern, split="train", streaming=True):
    return StreamingJsonl(pattern)


def write_synthetic_shards(data_dir, seed=0):
    """Pre-tokenized "source files": each a run of tokens from a few local motifs."""
    rng = random.Random(seed)
    motifs = [[rng.randrange(1, VOCAB_SIZE) for _ in range(rng.randint(3, 12))] for _ in range(300)]
    os.makedirs(data_dir, exist_ok=True)
    for split, shards, per_shard in (("train", 8, 500), ("valid", 1, 120)):
        for s in range(shards):
            with open(os.path.join(data_dir, f"{split}-{s:05d}.jsonl"), "w") as f:
                for _ in range(per_shard):
                    ids = []
                    n = rng.randint(30, 400)
                    while len(ids) < n:
                        ids += rng.choice(motifs)
                    f.write(json.dumps({"input_ids": ids[:n]}) + "\n")
    print(f"wrote synthetic streaming shards to {data_dir}")


# ---- codeparrot_training.py -----------------------------------------------------------------

class ConstantLengthDataset(IterableDataset):
    """
    Iterable dataset that returns constant length chunks of tokens from stream of text files.
        Args:
            tokenizer (Tokenizer): The processor used for proccessing the data.
            dataset (dataset.Dataset): Dataset with text files.
            infinite (bool): If True the iterator is reset after dataset reaches end else stops.
            seq_length (int): Length of token sequences to return.
            num_of_sequences: Number of token sequences to keep in buffer.
            chars_per_token: Number of characters per token used to estimate number of tokens in text buffer.
            tokenized: If true we use a pretokenized dataset.
    """

    def __init__(
        self, tokenizer, dataset, infinite=False, seq_length=1024, num_of_sequences=1024, chars_per_token=3.6, tokenized=False
    ):
        self.tokenizer = tokenizer
        self.concat_token_id = tokenizer.bos_token_id
        self.dataset = dataset
        self.seq_length = seq_length
        self.epoch = 0
        self.infinite = infinite
        self.current_size = 0
        self.tokenized = tokenized

        if self.tokenized:
            self.max_buffer_size = seq_length * num_of_sequences
            self.content_field = "input_ids"
        else:
            self.max_buffer_size = seq_length * chars_per_token * num_of_sequences
            self.content_field = "content"

    def __iter__(self):
        iterator = iter(self.dataset)
        more_examples = True
        while more_examples:
            buffer, buffer_len = [], 0
            while True:
                if buffer_len >= self.max_buffer_size:
                    break
                try:
                    buffer.append(next(iterator)[self.content_field])
                    buffer_len += len(buffer[-1])
                except StopIteration:
                    if self.infinite:
                        iterator = iter(self.dataset)
                        self.epoch += 1
                        logger.info(f"Dataset epoch: {self.epoch}")
                    else:
                        more_examples = False
                        break
            if self.tokenized:
                tokenized_inputs = buffer
            else:
                tokenized_inputs = self.tokenizer(buffer, truncation=False)["input_ids"]
            all_token_ids = []
            for tokenized_input in tokenized_inputs:
                all_token_ids.extend(tokenized_input + [self.concat_token_id])
            for i in range(0, len(all_token_ids), self.seq_length):
                input_ids = all_token_ids[i : i + self.seq_length]
                if len(input_ids) == self.seq_length:
                    self.current_size += 1
                    yield torch.tensor(input_ids)


def setup_logging(args):
    logger = logging.getLogger(__name__)
    log_dir = Path(args.save_dir) / "log/"
    log_dir.mkdir(parents=True, exist_ok=True)
    filename = "debug_0.log"
    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
        datefmt="%m/%d/%Y %H:%M:%S",
        level=logging.INFO,
        handlers=[logging.FileHandler(log_dir / filename), logging.StreamHandler()],
    )
    run_name = f"run-{int(time.time())}"
    logger.setLevel(logging.INFO)
    transformers.utils.logging.set_verbosity_info()
    return logger, run_name


def create_dataloaders(args):
    ds_kwargs = {"streaming": True}
    train_data = load_dataset(args.dataset_name_train, split="train", **ds_kwargs)
    train_data = train_data.shuffle(buffer_size=args.shuffle_buffer, seed=args.seed)
    valid_data = load_dataset(args.dataset_name_valid, split="train", **ds_kwargs)
    train_dataset = ConstantLengthDataset(tokenizer, train_data, infinite=True, seq_length=args.seq_length, tokenized=args.tokenized)
    valid_dataset = ConstantLengthDataset(tokenizer, valid_data, infinite=False, seq_length=args.seq_length, tokenized=args.tokenized)
    train_dataloader = DataLoader(train_dataset, batch_size=args.train_batch_size)
    eval_dataloader = DataLoader(valid_dataset, batch_size=args.valid_batch_size)
    return train_dataloader, eval_dataloader


def get_grouped_params(model, args, no_decay=["bias", "ln_1.weight", "ln_2.weight", "ln_f.weight"]):
    params_with_wd, params_without_wd = [], []
    for n, p in model.named_parameters():
        if any(nd in n for nd in no_decay):
            params_without_wd.append(p)
        else:
            params_with_wd.append(p)
    return [
        {"params": params_with_wd, "weight_decay": args.weight_decay},
        {"params": params_without_wd, "weight_decay": 0.0},
    ]


def log_metrics(step, metrics):
    logger.info(f"Step {step}: {metrics}")


def compute_tflops(elapsed_time, args):
    # TFLOPs formula (from Equation 3 in Section 5.1 of https://arxiv.org/pdf/2104.04473.pdf).
    config_model = model.config
    checkpoint_factor = 4 if args.gradient_checkpointing else 3
    batch_size = args.train_batch_size * args.gradient_accumulation_steps
    factor = 24 * checkpoint_factor * batch_size * args.seq_length * config_model.n_layer * (config_model.n_embd**2)
    flops_per_iteration = factor * (
        1.0
        + (args.seq_length / (6.0 * config_model.n_embd))
        + (tokenizer.vocab_size / (16.0 * config_model.n_layer * config_model.n_embd))
    )
    tflops = flops_per_iteration / (elapsed_time * (10**12))
    return tflops


def evaluate(args):
    model.eval()
    losses = []
    for step, batch in enumerate(eval_dataloader):
        with torch.no_grad():
            outputs = model(batch, labels=batch)
        loss = outputs.loss.repeat(args.valid_batch_size)
        losses.append(loss)
        if args.max_eval_steps > 0 and step >= args.max_eval_steps:
            break
    losses = torch.cat(losses)
    loss = losses[: eval_dataloader.dataset.current_size].mean()
    try:
        perplexity = torch.exp(loss)
    except OverflowError:
        perplexity = float("inf")
    return loss.item(), perplexity.item()


def save_state(save_dir):
    # what accelerator.save_state(save_dir) writes, in plain torch
    os.makedirs(save_dir, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(save_dir, "pytorch_model.bin"))
    torch.save(optimizer.state_dict(), os.path.join(save_dir, "optimizer.bin"))
    torch.save(lr_scheduler.state_dict(), os.path.join(save_dir, "scheduler.bin"))


# Settings
parser = HfArgumentParser(TrainingArguments)
args = parser.parse_args()
samples_per_step = args.train_batch_size
set_seed(args.seed)

# Logging
logger, run_name = setup_logging(args)
logger.info(f"Training arguments: {args}")

# the data: written once, then streamed
data_dir = os.path.dirname(args.dataset_name_train)
if not glob.glob(args.dataset_name_train):
    write_synthetic_shards(data_dir)

# Load model and tokenizer
model = GPT2LMHeadModel(GPT2Config(vocab_size=VOCAB_SIZE, n_positions=args.seq_length, n_embd=128,
                                   n_layer=2, n_head=4, bos_token_id=BOS, eos_token_id=BOS))
if args.gradient_checkpointing:
    model.gradient_checkpointing_enable()
tokenizer = Namespace(bos_token_id=BOS, vocab_size=VOCAB_SIZE)  # the data are pre-tokenized

# Load dataset and dataloader
train_dataloader, eval_dataloader = create_dataloaders(args)

# Prepare the optimizer and learning rate scheduler
optimizer = torch.optim.AdamW(get_grouped_params(model, args), lr=args.learning_rate)
lr_scheduler = get_scheduler(
    name=args.lr_scheduler_type,
    optimizer=optimizer,
    num_warmup_steps=args.num_warmup_steps,
    num_training_steps=args.max_train_steps,
)


def get_lr():
    return optimizer.param_groups[0]["lr"]


# Train model
model.train()
completed_steps = 0
t_start = time.time()
for step, batch in enumerate(train_dataloader, start=1):
    loss = model(batch, labels=batch, use_cache=False).loss
    log_metrics(
        step, {"lr": get_lr(), "samples": step * samples_per_step, "steps": completed_steps, "loss/train": loss.item()}
    )
    loss = loss / args.gradient_accumulation_steps
    if step % args.gradient_accumulation_steps != 0:
        loss.backward()
    else:
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad()
        completed_steps += 1
        elapsed_time = time.time() - t_start
        tflops = compute_tflops(elapsed_time, args)
        log_metrics(step, {"steps": completed_steps, "tflops": tflops, "time_per_iteration": elapsed_time})
        t_start = time.time()
    if step % args.save_checkpoint_steps == 0:
        logger.info("Evaluating and saving model checkpoint")
        eval_loss, perplexity = evaluate(args)
        log_metrics(step, {"loss/eval": eval_loss, "perplexity": perplexity})
        save_dir = os.path.join(args.save_dir, f"step_{step}")
        save_state(save_dir)
        model.train()
    if completed_steps >= args.max_train_steps:
        break

# Evaluate and save the last checkpoint
logger.info("Evaluating and saving model after training")
eval_loss, perplexity = evaluate(args)
log_metrics(step, {"loss/eval": eval_loss, "perplexity": perplexity})
model.save_pretrained(args.save_dir)
save_dir = os.path.join(args.save_dir, f"step_{step}")
save_state(save_dir)
