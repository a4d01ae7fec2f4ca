"""A hand-written batch iterator (its own __iter__ and __len__, as much research code has)
instead of a DataLoader: its len() makes the epoch, the epochs loop counts them."""
import torch
from torch import nn
class MyLoader:
    def __init__(self, x, y, bs):
        self.x, self.y, self.bs = x, y, bs
    def __len__(self):
        return len(self.x) // self.bs
    def __iter__(self):
        perm = torch.randperm(len(self.x))
        for i in range(len(self)):
            idx = perm[i * self.bs:(i + 1) * self.bs]
            yield self.x[idx], self.y[idx]
torch.manual_seed(0)
x = torch.randn(8192, 32); y = (x[:, 0] > 0).long()
loader = MyLoader(x, y, 32)
model = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 2))
opt = torch.optim.Adam(model.parameters(), 1e-3)
for epoch in range(40):
    for xb, yb in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(model(xb), yb).backward()
        opt.step()
print("post-training code ran", flush=True)
