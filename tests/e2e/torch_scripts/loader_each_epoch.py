"""A DataLoader made again at every epoch, and iterated through a wrapper that moves each batch to
the device (the DeviceDataLoader of many tutorials; Lightning Fabric's setup_dataloaders does
the same): each new loader's pass is the next epoch, and running it dry ends the loop.
60 epochs of 112 steps: more than the probe's steady floor goes on for on the fastest machine
(STEADY_STEP_CAP x 30 = 3 000 steps of a fraction of a millisecond, then two boundaries)."""
import time
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class DeviceDataLoader:
    def __init__(self, dl, device):
        self.dl, self.device = dl, device

    def __iter__(self):
        for xb, yb in self.dl:
            yield xb.to(self.device), yb.to(self.device)

    def __len__(self):
        return len(self.dl)


torch.manual_seed(0)
x = torch.randn(4096, 32); y = (x[:, 0] > 0).long()
data, held_out = TensorDataset(x[:3584], y[:3584]), TensorDataset(x[3584:], y[3584:])
model = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 2))
opt = torch.optim.Adam(model.parameters(), 1e-3)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(60):
    train = DeviceDataLoader(DataLoader(data, batch_size=32, shuffle=True), "cpu")
    val = DeviceDataLoader(DataLoader(held_out, batch_size=256), "cpu")
    model.train()
    for xb, yb in train:
        opt.zero_grad()
        loss_fn(model(xb), yb).backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        correct = sum((model(xb).argmax(1) == yb).sum().item() for xb, yb in val)
    print(f"epoch {epoch} val acc {correct / 512:.3f}", flush=True)
time.sleep(0.3)
print("post-training work done")
