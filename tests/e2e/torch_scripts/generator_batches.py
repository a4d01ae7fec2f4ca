"""Minibatches from a generator function of the program's own (Lasagne's iterate_minibatches,
common in older and research code) instead of a DataLoader: the generator's own loop makes the
pass, the epochs loop counts the passes."""
import torch
from torch import nn


def iterate_minibatches(inputs, targets, batchsize, shuffle=False):
    indices = torch.randperm(len(inputs)) if shuffle else torch.arange(len(inputs))
    for start_idx in range(0, len(inputs) - batchsize + 1, batchsize):
        excerpt = indices[start_idx:start_idx + batchsize]
        yield inputs[excerpt], targets[excerpt]


torch.manual_seed(0)
x = torch.randn(8192, 32); y = (x[:, 0] > 0).long()
model = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 2))
opt = torch.optim.Adam(model.parameters(), 1e-3)
for epoch in range(40):
    for xb, yb in iterate_minibatches(x, y, 32, shuffle=True):
        opt.zero_grad()
        nn.functional.cross_entropy(model(xb), yb).backward()
        opt.step()
print("post-training code ran", flush=True)
