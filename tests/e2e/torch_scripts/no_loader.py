"""Batches sliced by hand, no DataLoader to run dry: the probe leaves the loop at its next line,
as a break would, and the post-training code runs."""
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(8192, 32); y = (x[:, 0] > 0).long()
model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 2))
opt = torch.optim.Adam(model.parameters(), 1e-3)
for epoch in range(50):
    for i in range(0, len(x), 32):
        opt.zero_grad()
        nn.functional.cross_entropy(model(x[i:i + 32]), y[i:i + 32]).backward()
        opt.step()
print("post-training code ran", flush=True)
