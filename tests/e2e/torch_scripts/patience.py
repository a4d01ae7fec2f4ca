"""A loop that stops itself once its validation loss has not improved for `--patience` epochs,
as pyGAT's train.py does (``if bad_counter == args.patience: break``) - full-batch, one step an
epoch, 10 000 planned - or, with `loader`, pytorchtools' EarlyStopping helper around a loop over
a DataLoader (``if early_stopping.early_stop: break``). Random labels: the validation loss stops
improving within a few epochs."""
import argparse

import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("mode", nargs="?", default="full")
parser.add_argument("--epochs", type=int, default=10000)
parser.add_argument("--patience", type=int, default=5)
args = parser.parse_args()

torch.manual_seed(0)
x, y = torch.randn(2048, 64), torch.randint(0, 2, (2048,))
xv, yv = torch.randn(512, 64), torch.randint(0, 2, (512,))
model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 2))
opt = torch.optim.Adam(model.parameters(), 1e-2)


def validate():
    with torch.no_grad():
        return nn.functional.cross_entropy(model(xv), yv).item()


class EarlyStopping:
    def __init__(self, patience):
        self.patience, self.counter, self.best, self.early_stop = patience, 0, None, False

    def __call__(self, val_loss):
        if self.best is None or val_loss < self.best:
            self.best, self.counter = val_loss, 0
        else:
            self.counter += 1
            self.early_stop = self.counter >= self.patience


def train_full(epoch):
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    return validate()


if args.mode == "loader":
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=256)
    early_stopping = EarlyStopping(patience=args.patience)
    for epoch in range(args.epochs):
        for xb, yb in loader:
            opt.zero_grad()
            nn.functional.cross_entropy(model(xb), yb).backward()
            opt.step()
        early_stopping(validate())
        if early_stopping.early_stop:
            break
else:
    best, bad_counter = float("inf"), 0
    for epoch in range(args.epochs):
        loss = train_full(epoch)
        if loss < best:
            best, bad_counter = loss, 0
        else:
            bad_counter += 1
        if bad_counter == args.patience:
            break
print(f"stopped after {epoch + 1} epochs")
