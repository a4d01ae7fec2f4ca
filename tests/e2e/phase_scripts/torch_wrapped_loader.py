"""pytorch/tutorials' nn_tutorial, its last loops: fit() called twice, each time over a
WrappedDataLoader whose __iter__ is a generator (``batches = iter(self.dl)`` then
``for b in batches: yield ...``), a validation pass after each epoch. Synthetic data, CPU."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
torch.set_num_threads(1)
x = torch.randn(6400, 64)
y = (x[:, 0] + x[:, 1] > 0).long()
loss_fn = nn.CrossEntropyLoss()


class WrappedDataLoader:
    def __init__(self, dl, func):
        self.dl = dl
        self.func = func

    def __len__(self):
        return len(self.dl)

    def __iter__(self):
        batches = iter(self.dl)
        for b in batches:
            yield (self.func(*b))


def fit(epochs, model, opt, train_dl, valid_dl):
    for epoch in range(epochs):
        model.train()
        for xb, yb in train_dl:
            loss_fn(model(xb), yb).backward()
            opt.step()
            opt.zero_grad()
        model.eval()
        with torch.no_grad():
            val = sum(loss_fn(model(xb), yb).item() for xb, yb in valid_dl)
        print(epoch, val, flush=True)


def get_data():
    return (DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True),  # 100 batches a pass
            DataLoader(TensorDataset(x[:512], y[:512]), batch_size=128))


def train(width):  # a model, new loaders, one fit
    train_dl, valid_dl = get_data()
    train_dl = WrappedDataLoader(train_dl, lambda a, b: (a, b))
    valid_dl = WrappedDataLoader(valid_dl, lambda a, b: (a, b))
    model = nn.Sequential(nn.Linear(64, width), nn.ReLU(), nn.Linear(width, 2))
    fit(3, model, torch.optim.SGD(model.parameters(), lr=0.05), train_dl, valid_dl)
    print("fit done", width, flush=True)


# two fits one after the other, as the tutorial's are: two phases (in a loop over the widths,
# the loop is counted - the job is its passes - and the probe ends it after the first pass)
train(256)
train(512)
print("post-training work done", flush=True)
