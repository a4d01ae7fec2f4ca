import sys
import torch
from transformers import (BertConfig, BertForSequenceClassification, EarlyStoppingCallback, Trainer,
                          TrainingArguments)

class Data(torch.utils.data.Dataset):
    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(5, 100, (n, 24), generator=g)
        self.labels = (self.ids[:, 0] > 50).long()
    def __len__(self):
        return len(self.ids)
    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "attention_mask": torch.ones(24, dtype=torch.long),
                "labels": self.labels[i]}

cfg = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                 intermediate_size=64, max_position_embeddings=32)
model = BertForSequenceClassification(cfg)
if sys.argv[2:] == ["early"]:  # 30 epochs with an EarlyStoppingCallback: no improvement ever
    # counts (a threshold of 100), so it stops after its soonest 3 evaluations, one every 10
    # steps: after 30 of its 20-step epochs' 600
    args = TrainingArguments(output_dir=sys.argv[1], num_train_epochs=30,
                             per_device_train_batch_size=16, per_device_eval_batch_size=64,
                             eval_strategy="steps", eval_steps=10,
                             save_strategy="no",  # (no checkpoints:
                             metric_for_best_model="loss",  # the best metric is kept anyway)
                             report_to=[], logging_strategy="no", use_cpu=True, disable_tqdm=False)
    stop = EarlyStoppingCallback(early_stopping_patience=2, early_stopping_threshold=100.0)
    trainer = Trainer(model=model, args=args, train_dataset=Data(320, 0),
                      eval_dataset=Data(64, 1), callbacks=[stop])
else:
    args = TrainingArguments(output_dir=sys.argv[1], num_train_epochs=8,
                             per_device_train_batch_size=16, per_device_eval_batch_size=64,
                             eval_strategy="epoch", save_strategy="no", report_to=[],
                             logging_strategy="no", use_cpu=True, disable_tqdm=False)
    trainer = Trainer(model=model, args=args, train_dataset=Data(1600, 0),
                      eval_dataset=Data(256, 1))
result = trainer.train()
print("after train: global step", result.global_step, flush=True)
