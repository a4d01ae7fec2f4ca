"""Two phases, the first a loop over tensors made in the loop that ends its function (no
DataLoader to run dry, no line after it to go on from): the probe can only unwind it, and says
that the estimate covers phase 1 only."""
import torch
from torch import nn

torch.manual_seed(0)
torch.set_num_threads(1)
model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 2))


def pretrain(opt):
    for step in range(400):
        xb = torch.randn(64, 64)
        opt.zero_grad()
        nn.functional.cross_entropy(model(xb), (xb[:, 0] > 0).long()).backward()
        opt.step()


pretrain(torch.optim.SGD(model.parameters(), lr=0.05))
tuner = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(300):  # phase 2
    xb = torch.randn(32, 64)
    tuner.zero_grad()
    nn.functional.cross_entropy(model(xb), (xb[:, 1] > 0).long()).backward()
    tuner.step()
print("post-training work done", flush=True)
