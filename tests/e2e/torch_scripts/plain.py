import sys, time
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.randn(4096, 32); y = (x[:, 0] > 0).long()
train = DataLoader(TensorDataset(x[:3584], y[:3584]), batch_size=int(sys.argv[1]) if len(sys.argv) > 1 else 32, shuffle=True)
val = DataLoader(TensorDataset(x[3584:], y[3584:]), batch_size=256)
model = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 2))
opt = torch.optim.Adam(model.parameters(), 1e-3)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(60):  # more than the probe goes on for however fast its steps (test_torch)
    model.train()
    for xb, yb in train:
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
    model.eval()
    correct = 0
    with torch.no_grad():
        for xb, yb in val:
            correct += (model(xb).argmax(1) == yb).sum().item()
    print(f"epoch {epoch} val acc {correct / 512:.3f}", flush=True)
time.sleep(0.3)
print("post-training work done")
