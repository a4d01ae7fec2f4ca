"""fastai's fine_tune: one line, two fit()s - 3 epochs with the body frozen, then 4 unfrozen -
each a phase of its own; fastai's own DataLoader and optimizer (no torch.optim one: each
backward pass is the step). Synthetic data, CPU."""
import torch
from fastai.data.core import DataLoaders
from fastai.data.load import DataLoader
from fastai.callback.schedule import fine_tune  # noqa: F401 - Learner.fine_tune (a patch)
from fastai.learner import Learner
from torch import nn

torch.manual_seed(0)
torch.set_num_threads(1)
x = torch.randn(4096, 32)
y = (x[:, :1] > 0).float()
pairs = list(zip(x, y))
dls = DataLoaders(DataLoader(pairs[:3584], bs=32, shuffle=True, drop_last=True),  # 112 a pass
                  DataLoader(pairs[3584:], bs=64))
model = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 1))
learn = Learner(dls, model, loss_func=nn.BCEWithLogitsLoss())
learn.fine_tune(4, freeze_epochs=3)
print("post-training work done", flush=True)
