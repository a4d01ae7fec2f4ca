"""In the style of the Hugging Face text-classification examples: a (tiny, untrained) BERT, the
Trainer with evaluation each epoch, then evaluate() and save_model()."""
import tempfile

import torch
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

from torch_common import args, tokens


class Data(torch.utils.data.Dataset):
    def __init__(self, n, seed):
        self.ids, self.labels = tokens(n, seed=seed)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "attention_mask": torch.ones_like(self.ids[i]),
                "labels": self.labels[i]}


ns = args(default_batch=32, default_epochs=3, default_samples=4000)
out = tempfile.mkdtemp(prefix="probecast-hf-")
model = BertForSequenceClassification(BertConfig(
    vocab_size=200, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
    intermediate_size=128, max_position_embeddings=64))
targs = TrainingArguments(output_dir=out, num_train_epochs=ns.epochs,
                          per_device_train_batch_size=ns.batch_size, per_device_eval_batch_size=128,
                          eval_strategy="epoch", save_strategy="no", logging_steps=20,
                          report_to=[], use_cpu=ns.device == "cpu", seed=0)
trainer = Trainer(model=model, args=targs, train_dataset=Data(ns.samples, 0),
                  eval_dataset=Data(500, 1))
trainer.train()
print(trainer.evaluate())
trainer.save_model(out)
