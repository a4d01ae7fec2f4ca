"""In the style of the Lightning docs' image classifier: a LightningModule, validation every
epoch, the default ModelCheckpoint and progress bar, then trainer.test()."""
import tempfile

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from torch_common import args, images


class LitCNN(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(1, 16, 3), nn.ReLU(), nn.MaxPool2d(2),
                                 nn.Conv2d(16, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                                 nn.Linear(32 * 5 * 5, 64), nn.ReLU(), nn.Linear(64, 10))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.net(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_acc", (self.net(x).argmax(1) == y).float().mean(), prog_bar=True)

    def test_step(self, batch, batch_idx):
        x, y = batch
        self.log("test_acc", (self.net(x).argmax(1) == y).float().mean())

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


ns = args(default_batch=64, default_epochs=4, default_samples=12000)
L.seed_everything(0)
train = DataLoader(TensorDataset(*images(ns.samples)), batch_size=ns.batch_size, shuffle=True)
val = DataLoader(TensorDataset(*images(1000, seed=1)), batch_size=256)
root = tempfile.mkdtemp(prefix="probecast-lightning-")
trainer = L.Trainer(max_epochs=ns.epochs, accelerator="gpu" if ns.device == "cuda" else "cpu", default_root_dir=root, logger=False)
model = LitCNN()
trainer.fit(model, train, val)
trainer.test(model, val)
