"""The fastai phase scripts' data: 4 096 synthetic rows, fastai's own DataLoaders - 112 training
batches of 32 a pass, 8 validation batches of 64 - and a small Learner on them, CPU."""
import torch
from fastai.data.core import DataLoaders
from fastai.data.load import DataLoader
from fastai.learner import Learner
from torch import nn


def learner() -> Learner:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    x = torch.randn(4096, 32)
    y = (x[:, :1] > 0).float()
    pairs = list(zip(x, y))
    dls = DataLoaders(DataLoader(pairs[:3584], bs=32, shuffle=True, drop_last=True),
                      DataLoader(pairs[3584:], bs=64))
    model = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 1))
    return Learner(dls, model, loss_func=nn.BCEWithLogitsLoss())
