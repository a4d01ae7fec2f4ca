"""A Hydra-style program: its settings an OmegaConf config (defaults merged with key=value
overrides from the command line, as Hydra composes them), read as cfg.train.epochs and
cfg["data"]["batch_size"] by the loops, no DataLoader."""
import torch
from omegaconf import OmegaConf
from torch import nn

DEFAULTS = """
train:
  epochs: 10
  lr: 0.001
data:
  n: 4096
  batch_size: 64
"""
cfg = OmegaConf.merge(OmegaConf.create(DEFAULTS), OmegaConf.from_cli())
torch.manual_seed(0)
x = torch.randn(cfg.data.n, 32); y = (x[:, 0] > 0).long()
model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 2))
opt = torch.optim.Adam(model.parameters(), cfg.train.lr)
for epoch in range(cfg.train.epochs):
    for i in range(0, len(x), cfg["data"]["batch_size"]):
        opt.zero_grad()
        nn.functional.cross_entropy(model(x[i:i + 64]), y[i:i + 64]).backward()
        opt.step()
print("post-training code ran", flush=True)
