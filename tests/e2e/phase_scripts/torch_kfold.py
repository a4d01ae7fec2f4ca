"""k-fold cross-validation as Lightning Fabric's example writes it: a model and an optimizer per
fold, made up front; for each epoch, for each fold, a new DataLoader of that fold's samples
trained on, then its held-out samples evaluated. A fold's optimizer first steps after the last
fold's whole pass, in the same loop entered again - as a layer-wise trainer's next layer does -
but the loop over epochs around the folds runs every fold again: one job of epochs x folds
passes, not a phase a fold."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Subset, TensorDataset

torch.manual_seed(0)
torch.set_num_threads(1)
x = torch.randn(2000, 32)
y = (x[:, 0] > 0).long()
data = TensorDataset(x, y)
FOLDS, EPOCHS = 4, 6
models = [nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 2)) for _ in range(FOLDS)]
optimizers = [torch.optim.SGD(m.parameters(), lr=0.05) for m in models]
folds = [(list(range(0, f * 500)) + list(range((f + 1) * 500, 2000)),
          list(range(f * 500, (f + 1) * 500))) for f in range(FOLDS)]


def train(model, loader, optimizer):
    for xb, yb in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(xb), yb).backward()
        optimizer.step()


for epoch in range(EPOCHS):
    for fold in range(FOLDS):
        train_ids, val_ids = folds[fold]
        train_loader = DataLoader(Subset(data, train_ids), batch_size=10, shuffle=True)
        val_loader = DataLoader(Subset(data, val_ids), batch_size=100)
        train(models[fold], train_loader, optimizers[fold])
        with torch.no_grad():
            correct = sum((models[fold](xb).argmax(1) == yb).sum().item() for xb, yb in val_loader)
        print(f"epoch {epoch} fold {fold} accuracy {correct / 500:.3f}", flush=True)
print("post-training work done", flush=True)
