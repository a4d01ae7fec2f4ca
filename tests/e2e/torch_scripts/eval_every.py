"""A plain PyTorch loop evaluated every 10th epoch (`if epoch % 10 == 0`), over 100 epochs: 10
validation passes, not 100. With `after`: `(epoch + 1) % 4 == 0`, after the 4th, 8th, ... - 25
passes, the first past the 3 000 steps the probe goes on for by itself (1 024 steps an epoch).
With `hand`: every 10th, a test by hand over a tensor (no loader: no validation pass, work in the
boundary after its epoch)."""

import sys

import torch
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
train = DataLoader(TensorDataset(torch.randn(32768, 64), torch.randint(0, 4, (32768,))),
                   batch_size=32, shuffle=True)
test = DataLoader(TensorDataset(torch.randn(4096, 64), torch.randint(0, 4, (4096,))),
                  batch_size=64)
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)


every, plus = (4, 1) if sys.argv[1:] == ["after"] else (10, 0)
X = torch.randn(65536, 64)


def by_hand():
    with torch.no_grad():
        for _ in range(8):
            model(X)


def evaluate():
    if sys.argv[1:] == ["hand"]:
        return by_hand()
    model.eval()
    with torch.no_grad():
        for x, _ in test:
            model(x)
    model.train()


for epoch in range(100):
    for x, y in train:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    if (epoch + plus) % every == 0:
        evaluate()
print("trained")
