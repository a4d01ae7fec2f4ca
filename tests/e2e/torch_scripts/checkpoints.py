"""Trains 8 epochs and saves a checkpoint after each, as most programs do; writes a results
file as it goes."""
import os
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.randn(2048, 32); y = (x[:, 0] > 0).long()
train = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 2))
opt = torch.optim.SGD(model.parameters(), 0.1)
os.makedirs("checkpoints", exist_ok=True)
for epoch in range(8):
    for xb, yb in train:
        opt.zero_grad()
        nn.functional.cross_entropy(model(xb), yb).backward()
        opt.step()
    torch.save({"epoch": epoch, "model": model.state_dict()}, "checkpoints/last.pt")
    with open("results.txt", "a") as fh:
        fh.write(f"epoch {epoch}\n")
print("trained")
