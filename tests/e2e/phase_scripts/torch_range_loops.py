"""Two phases in loops over tensors made in the loop (no DataLoader to run dry), the second
after the first: the probe leaves each loop at its next line, as a break would, and probes both."""
import torch
from torch import nn

torch.manual_seed(0)
torch.set_num_threads(1)
model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(400):  # phase 1
    xb = torch.randn(64, 64)
    opt.zero_grad()
    nn.functional.cross_entropy(model(xb), (xb[:, 0] > 0).long()).backward()
    opt.step()

tuner = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(300):  # phase 2
    xb = torch.randn(32, 64)
    tuner.zero_grad()
    nn.functional.cross_entropy(model(xb), (xb[:, 1] > 0).long()).backward()
    tuner.step()
print("post-training work done", flush=True)
