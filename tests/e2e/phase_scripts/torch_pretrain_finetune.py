"""Pretrain, then fine-tune: two training loops one after another, two optimizers, two
loaders (the fine-tune's a smaller batch: another step time). Synthetic data, CPU."""
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
torch.set_num_threads(1)
x = torch.randn(6400, 64)
y = (x[:, 0] + x[:, 1] > 0).long()
pretrain = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True)  # 100 batches a pass
finetune = DataLoader(TensorDataset(x[:2400], y[:2400]), batch_size=32, shuffle=True)  # 75
body = nn.Sequential(nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU())
head = nn.Linear(512, 2)
loss_fn = nn.CrossEntropyLoss()

opt = torch.optim.SGD([*body.parameters(), *head.parameters()], lr=0.05)
for epoch in range(4):  # phase 1: pretrain
    for xb, yb in pretrain:
        opt.zero_grad()
        loss_fn(head(body(xb)), yb).backward()
        opt.step()
    print(f"pretrain epoch {epoch} loss {loss_fn(head(body(x[:512])), y[:512]).item():.3f}",
          flush=True)


def fine_tune(model: nn.Module, loader: DataLoader, epochs: int) -> None:
    tuner = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        for xb, yb in loader:
            tuner.zero_grad()
            loss_fn(model(xb), yb).backward()
            tuner.step()
        print(f"fine-tune epoch {epoch}", flush=True)


time.sleep(0.5)  # between the phases: the program sets up the next one
fine_tune(nn.Sequential(body, nn.Dropout(0.1), head), finetune, epochs=6)  # phase 2
time.sleep(0.3)
print("post-training work done", flush=True)
