"""A plain PyTorch loop of 60 epochs under a tqdm bar, evaluated every 5th epoch once past a
warm-up (`if epoch >= args.eval_start and epoch % args.eval_every == 0`): after epochs 6, 11,
... 56 (counted from 1) - 11 passes, each over a validation loader about an epoch long."""

import argparse

import torch
from torch.utils.data import DataLoader, TensorDataset
from tqdm import tqdm

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=60)
parser.add_argument("--eval_start", type=int, default=3)
parser.add_argument("--eval_every", type=int, default=5)
args = parser.parse_args()

torch.manual_seed(0)
train = DataLoader(TensorDataset(torch.randn(16384, 64), torch.randint(0, 4, (16384,))),
                   batch_size=32, shuffle=True)
val = DataLoader(TensorDataset(torch.randn(65536, 64), torch.randint(0, 4, (65536,))),
                 batch_size=64)
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)


def evaluate():
    model.eval()
    with torch.no_grad():
        for x, _ in val:
            model(x)
    model.train()


for epoch in tqdm(range(args.epochs), desc="epochs"):
    for x, y in train:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    if epoch >= args.eval_start and epoch % args.eval_every == 0:
        evaluate()
print("trained")
