"""A plain PyTorch loop evaluated every 10th epoch and after the last, as DINO's linear
evaluation writes it (`if epoch % args.val_freq == 0 or epoch == args.epochs - 1`): over 45
epochs, after epochs 1, 11, 21, 31, 41 and 45 (counted from 1) - 6 passes."""

import argparse

import torch
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=45)
parser.add_argument("--val_freq", type=int, default=10)
args = parser.parse_args()

torch.manual_seed(0)
train = DataLoader(TensorDataset(torch.randn(32768, 64), torch.randint(0, 4, (32768,))),
                   batch_size=32, shuffle=True)
val = DataLoader(TensorDataset(torch.randn(131072, 64), torch.randint(0, 4, (131072,))),
                 batch_size=64)  # a pass of 2 048 batches: about an epoch
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)


def validate():
    model.eval()
    with torch.no_grad():
        for x, _ in val:
            model(x)
    model.train()


for epoch in range(args.epochs):
    for x, y in train:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    if epoch % args.val_freq == 0 or epoch == args.epochs - 1:
        validate()
print("trained")
