"""Gradient accumulation, and no DataLoader for validation: a loop as people write it."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

ACCUMULATE = 4
torch.manual_seed(0)
x = torch.randn(4096, 32); y = (x[:, 0] > 0).long()
train = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 2))
opt = torch.optim.SGD(model.parameters(), 0.05)
for epoch in range(12):
    for i, (xb, yb) in enumerate(train):
        (nn.functional.cross_entropy(model(xb), yb) / ACCUMULATE).backward()
        if (i + 1) % ACCUMULATE == 0:
            opt.step()
            opt.zero_grad()
print("saved", flush=True)
