"""fastai's lr_find, then fit_one_cycle: lr_find is a fit() its LRFinder ends after num_it
batches (sooner where the loss diverges) - a phase of 60 steps at most, not the epochs that
cover them - then the training itself. Synthetic data, CPU."""
import torch
from fastai.callback.schedule import fit_one_cycle, lr_find  # noqa: F401 - Learner's (patches)
from fastai.data.core import DataLoaders
from fastai.data.load import DataLoader
from fastai.learner import Learner
from torch import nn

torch.manual_seed(0)
torch.set_num_threads(1)
x = torch.randn(4096, 32)
y = (x[:, :1] > 0).float()
pairs = list(zip(x, y))
dls = DataLoaders(DataLoader(pairs[:3584], bs=32, shuffle=True, drop_last=True),  # 112 a pass
                  DataLoader(pairs[3584:], bs=64))
learn = Learner(dls, nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 1)),
                loss_func=nn.BCEWithLogitsLoss())
suggested = learn.lr_find(num_it=60, show_plot=False)
learn.fit_one_cycle(3, suggested.valley)
print("post-training work done", flush=True)
