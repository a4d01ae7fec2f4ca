"""A plain PyTorch loop evaluated every 10th epoch (`if epoch % 10 == 0: evaluate()`), over
100 epochs: 10 validation passes, not 100."""

import torch
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
train = DataLoader(TensorDataset(torch.randn(2048, 64), torch.randint(0, 4, (2048,))),
                   batch_size=32, shuffle=True)
test = DataLoader(TensorDataset(torch.randn(4096, 64), torch.randint(0, 4, (4096,))),
                  batch_size=64)
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)


def evaluate():
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
    if epoch % 10 == 0:
        evaluate()
print("trained")
