"""A tutorial's loops, one after another, each refactoring the last (pytorch/tutorials'
nn_tutorial): hand-written updates with no optimizer, then a new model and optimizer in a loop of
its own, then another over a DataLoader. Each loop is a phase: its steps are backward passes,
then optimizer steps; each new model's loop is as long as it is written (two epochs), not one
pass of a layer-wise trainer."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
torch.set_num_threads(1)
x = torch.randn(3200, 64)
y = (x[:, 0] > 0).long()
bs = 32

weights = torch.zeros(64, 2, requires_grad=True)
for epoch in range(2):  # phase 1: no optimizer - each backward pass is a step
    for i in range(100):
        xb, yb = x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]
        nn.functional.cross_entropy(xb @ weights, yb).backward()
        with torch.no_grad():
            weights -= weights.grad * 0.1
            weights.grad.zero_()
print("hand-written loop done", flush=True)


def get_model():
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 2))
    return model, torch.optim.SGD(model.parameters(), lr=0.05)


model, opt = get_model()
for epoch in range(2):  # phase 2: an optimizer now
    for i in range(100):
        xb, yb = x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]
        nn.functional.cross_entropy(model(xb), yb).backward()
        opt.step()
        opt.zero_grad()
print("optimizer loop done", flush=True)

train_dl = DataLoader(TensorDataset(x, y), batch_size=bs)
model, opt = get_model()
for epoch in range(2):  # phase 3: a new model, over a DataLoader
    for xb, yb in train_dl:
        nn.functional.cross_entropy(model(xb), yb).backward()
        opt.step()
        opt.zero_grad()
print("post-training work done", flush=True)
