# Copyright 2021 The HuggingFace Inc. team. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
"""A Hugging Face Accelerate loop: adapted from huggingface/accelerate `examples/nlp_example.py`
(commit 16cb6eb).

Kept from the original: training_function(config, args) with `Accelerator(cpu=args.cpu,
mixed_precision=args.mixed_precision)`; MAX_GPU_BATCH_SIZE = 16 and EVAL_BATCH_SIZE = 32, with
the gradient accumulation it derives when batch_size > 16 (micro-batches of 16, optimizer
step when `step % gradient_accumulation_steps == 0`); get_dataloaders() with a padding
collate_fn, the train loader shuffled with drop_last=True; AdamW, get_linear_schedule_with_warmup
(100 warmup steps); `accelerator.prepare(model, optimizer, train_dataloader, eval_dataloader,
lr_scheduler)`; per epoch a training pass with `batch.to(accelerator.device)`,
`outputs = model(**batch)`, `accelerator.backward(loss)`, then an evaluation pass with
`accelerator.gather_for_metrics`, the `=====  {predictions}` print of each eval batch, a
metric's add_batch / compute and `accelerator.print(f"epoch {epoch}:", eval_metric)`;
accelerator.end_training().

Changed: no hub downloads - the model is a tiny BertForSequenceClassification built from a
BertConfig (2 layers, hidden 128, 4 heads, vocab 2 000) instead of bert-base-cased, the data are
synthetic MRPC-shaped sentence pairs of token ids (3 668 train / 408 validation pairs, 10-40
tokens per sentence, a learnable label) instead of load_dataset("nyu-mll/glue", "mrpc") and the
tokenizer (collate_fn pads them itself into a BatchEncoding), and the metric is a small
accuracy / F1 class in place of evaluate.load("glue", "mrpc"); added: `--num_epochs` and
`--batch_size` flags (the original hard-codes config = {"lr": 2e-5, "num_epochs": 3, "seed": 42,
"batch_size": 16}; lr here 1e-4).

Batch size flag: `--batch_size N` (above 16, micro-batches of 16 with gradient accumulation, as
in the original). Full run, as recorded (the venv's accelerate, next to its python):
    accelerate launch accelerate_loop.py --num_epochs 4 --batch_size 16
    accelerate launch accelerate_loop.py --num_epochs 4 --batch_size 32
"""
import argparse

import torch
from torch.optim import AdamW
from torch.utils.data import DataLoader
from transformers import BatchEncoding, BertConfig, BertForSequenceClassification, get_linear_schedule_with_warmup, set_seed

from accelerate import Accelerator, DistributedType


########################################################################
# This is a fully working simple example to use Accelerate
#
# This example trains a Bert base model on GLUE MRPC
# in any of the following settings (with the same script):
#   - single CPU or single GPU
#   - multi GPUS (using PyTorch distributed mode)
#   - (multi) TPUs
#   - fp16 (mixed-precision) or fp32 (normal precision)
#
# (here: a tiny BERT on synthetic MRPC-shaped pairs, see the docstring)
########################################################################


MAX_GPU_BATCH_SIZE = 16
EVAL_BATCH_SIZE = 32
VOCAB_SIZE = 2000
CLS, SEP, PAD = 1, 2, 0


def synthetic_mrpc(n, seed):
    """Sentence pairs as token ids: label 1 when the second sentence paraphrases the first
    (shares most of its tokens), 0 when it is another sentence."""
    g = torch.Generator().manual_seed(seed)
    examples = []
    for _ in range(n):
        a = torch.randint(5, VOCAB_SIZE, (int(torch.randint(10, 41, (1,), generator=g)),), generator=g)
        label = int(torch.rand(1, generator=g) < 0.68)  # MRPC is ~68 % positive
        if label:
            b = a.clone()
            swap = torch.rand(len(b), generator=g) < 0.2
            b[swap] = torch.randint(5, VOCAB_SIZE, (int(swap.sum()),), generator=g)
        else:
            b = torch.randint(5, VOCAB_SIZE, (int(torch.randint(10, 41, (1,), generator=g)),), generator=g)
        ids = [CLS, *a.tolist(), SEP, *b.tolist(), SEP]
        types = [0] * (len(a) + 2) + [1] * (len(b) + 1)
        examples.append({"input_ids": ids, "token_type_ids": types, "labels": label})
    return examples


class GlueMrpcMetric:
    """What evaluate.load("glue", "mrpc") computes: accuracy and F1."""

    def __init__(self):
        self.preds, self.refs = [], []

    def add_batch(self, predictions, references):
        self.preds += predictions.tolist()
        self.refs += references.tolist()

    def compute(self):
        p, r = torch.tensor(self.preds), torch.tensor(self.refs)
        self.preds, self.refs = [], []
        tp = int(((p == 1) & (r == 1)).sum())
        fp = int(((p == 1) & (r == 0)).sum())
        fn = int(((p == 0) & (r == 1)).sum())
        f1 = 2 * tp / max(1, 2 * tp + fp + fn)
        return {"accuracy": float((p == r).float().mean()), "f1": f1}


def get_dataloaders(accelerator: Accelerator, batch_size: int = 16):
    """
    Creates a set of `DataLoader`s for the (synthetic) `glue` mrpc dataset.

    Args:
        accelerator (`Accelerator`):
            An `Accelerator` object
        batch_size (`int`, *optional*):
            The batch size for the train and validation DataLoaders.
    """
    with accelerator.main_process_first():
        tokenized_datasets = {"train": synthetic_mrpc(3668, seed=0),
                              "validation": synthetic_mrpc(408, seed=1)}

    def collate_fn(examples):
        # For Torchxla, it's best to pad everything to the same length or training will be very slow.
        max_length = 128 if accelerator.distributed_type == DistributedType.XLA else None
        # When using mixed precision we want round multiples of 8/16
        if accelerator.mixed_precision == "fp8":
            pad_to_multiple_of = 16
        elif accelerator.mixed_precision != "no":
            pad_to_multiple_of = 8
        else:
            pad_to_multiple_of = None
        # what tokenizer.pad(examples, padding="longest", ...) does
        length = max_length or max(len(e["input_ids"]) for e in examples)
        if pad_to_multiple_of:
            length = -(-length // pad_to_multiple_of) * pad_to_multiple_of
        def pad(seq):
            return seq + [PAD] * (length - len(seq))
        return BatchEncoding({
            "input_ids": torch.tensor([pad(e["input_ids"]) for e in examples]),
            "token_type_ids": torch.tensor([pad(e["token_type_ids"]) for e in examples]),
            "attention_mask": torch.tensor([pad([1] * len(e["input_ids"])) for e in examples]),
            "labels": torch.tensor([e["labels"] for e in examples]),
        })

    # Instantiate dataloaders.
    train_dataloader = DataLoader(
        tokenized_datasets["train"], shuffle=True, collate_fn=collate_fn, batch_size=batch_size, drop_last=True
    )
    eval_dataloader = DataLoader(
        tokenized_datasets["validation"],
        shuffle=False,
        collate_fn=collate_fn,
        batch_size=EVAL_BATCH_SIZE,
        drop_last=(accelerator.mixed_precision == "fp8"),
    )

    return train_dataloader, eval_dataloader


def training_function(config, args):
    # Initialize accelerator
    accelerator = Accelerator(cpu=args.cpu, mixed_precision=args.mixed_precision)
    # Sample hyper-parameters for learning rate, batch size, seed and a few other HPs
    lr = config["lr"]
    num_epochs = int(config["num_epochs"])
    seed = int(config["seed"])
    batch_size = int(config["batch_size"])

    metric = GlueMrpcMetric()

    # If the batch size is too big we use gradient accumulation
    gradient_accumulation_steps = 1
    if batch_size > MAX_GPU_BATCH_SIZE and accelerator.distributed_type != DistributedType.XLA:
        gradient_accumulation_steps = batch_size // MAX_GPU_BATCH_SIZE
        batch_size = MAX_GPU_BATCH_SIZE

    set_seed(seed)
    train_dataloader, eval_dataloader = get_dataloaders(accelerator, batch_size)
    # Instantiate the model (we build the model here so that the seed also control new weights initialization)
    model = BertForSequenceClassification(BertConfig(
        vocab_size=VOCAB_SIZE, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=512, max_position_embeddings=128, num_labels=2))

    # We could avoid this line since the accelerator is set with `device_placement=True` (default value).
    # Note that if you are placing tensors on devices manually, this line absolutely needs to be before the optimizer
    # creation otherwise training will not work on TPU (`accelerate` will kindly throw an error to make us aware of that).
    model = model.to(accelerator.device)
    # Instantiate optimizer
    optimizer = AdamW(params=model.parameters(), lr=lr)

    # Instantiate scheduler
    lr_scheduler = get_linear_schedule_with_warmup(
        optimizer=optimizer,
        num_warmup_steps=100,
        num_training_steps=(len(train_dataloader) * num_epochs) // gradient_accumulation_steps,
    )

    # Prepare everything
    # There is no specific order to remember, we just need to unpack the objects in the same order we gave them to the
    # prepare method.

    model, optimizer, train_dataloader, eval_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, eval_dataloader, lr_scheduler
    )

    # Now we train the model
    for epoch in range(num_epochs):
        model.train()
        for step, batch in enumerate(train_dataloader):
            # We could avoid this line since we set the accelerator with `device_placement=True`.
            batch.to(accelerator.device)
            outputs = model(**batch)
            loss = outputs.loss
            loss = loss / gradient_accumulation_steps
            accelerator.backward(loss)
            if step % gradient_accumulation_steps == 0:
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()

        model.eval()
        for step, batch in enumerate(eval_dataloader):
            # We could avoid this line since we set the accelerator with `device_placement=True`.
            batch.to(accelerator.device)
            with torch.no_grad():
                outputs = model(**batch)
            predictions = outputs.logits.argmax(dim=-1)
            predictions, references = accelerator.gather_for_metrics((predictions, batch["labels"]))
            print(f"=====  {predictions}")
            metric.add_batch(
                predictions=predictions,
                references=references,
            )

        eval_metric = metric.compute()
        # Use accelerator.print to print only on the main process.
        accelerator.print(f"epoch {epoch}:", eval_metric)
    accelerator.end_training()


def main():
    parser = argparse.ArgumentParser(description="Simple example of training script.")
    parser.add_argument(
        "--mixed_precision",
        type=str,
        default=None,
        choices=["no", "fp16", "bf16", "fp8"],
        help="Whether to use mixed precision. Choose"
        "between fp16 and bf16 (bfloat16). Bf16 requires PyTorch >= 1.10."
        "and an Nvidia Ampere GPU.",
    )
    parser.add_argument("--cpu", action="store_true", help="If passed, will train on the CPU.")
    parser.add_argument("--num_epochs", type=int, default=3, help="Number of training epochs.")
    parser.add_argument("--batch_size", type=int, default=16, help="Training batch size.")
    args = parser.parse_args()
    config = {"lr": 1e-4, "num_epochs": args.num_epochs, "seed": 42, "batch_size": args.batch_size}
    training_function(config, args)


if __name__ == "__main__":
    main()
