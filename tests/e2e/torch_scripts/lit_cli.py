"""A Lightning program driven by LightningCLI (as Lightning's own examples are): the CLI builds
its parser from the Trainer's signature and sets the program's trainer defaults on it. A
callback draws a sample at each epoch's end from a loader it makes there, and the program tests
the model after fit (Lightning's autoencoder example)."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
import lightning as L
from lightning.pytorch.cli import LightningCLI


class Model(L.LightningModule):
    def __init__(self, hidden: int = 256):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(32, hidden), nn.ReLU(), nn.Linear(hidden, 2))

    def training_step(self, batch, i):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def validation_step(self, batch, i):
        x, y = batch
        self.log("val_loss", nn.functional.cross_entropy(self.net(x), y))

    def test_step(self, batch, i):
        x, y = batch
        self.log("test_loss", nn.functional.cross_entropy(self.net(x), y))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), 1e-3)


class Data(L.LightningDataModule):
    def __init__(self, batch_size: int = 32):
        super().__init__()
        self.batch_size = batch_size
        torch.manual_seed(0)
        x = torch.randn(4096, 32)
        y = (x[:, 0] > 0).long()
        self.train, self.val = TensorDataset(x[:3584], y[:3584]), TensorDataset(x[3584:], y[3584:])

    def train_dataloader(self):
        return DataLoader(self.train, batch_size=self.batch_size, shuffle=True)

    def val_dataloader(self):
        return DataLoader(self.val, batch_size=128)

    def test_dataloader(self):
        return DataLoader(self.val, batch_size=128)


class Sampler(L.Callback):
    def on_train_epoch_end(self, trainer, module):
        x, _ = next(iter(DataLoader(trainer.datamodule.val, batch_size=3)))
        print("sampled", tuple(x.shape))


cli = LightningCLI(Model, Data, run=False, save_config_kwargs={"overwrite": True},
                   trainer_defaults={"max_epochs": 60, "accelerator": "cpu", "logger": False,
                                     "enable_checkpointing": False, "callbacks": Sampler()})
cli.trainer.fit(cli.model, datamodule=cli.datamodule)
print("after fit: epochs run", cli.trainer.current_epoch)
cli.trainer.test(cli.model, datamodule=cli.datamodule)
print("tested after training")
