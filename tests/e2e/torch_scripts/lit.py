import sys
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
import lightning as L

class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 2))
    def training_step(self, batch, i):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)
    def validation_step(self, batch, i):
        x, y = batch
        self.log("val_loss", nn.functional.cross_entropy(self.net(x), y))
    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), 1e-3)

# "early": 40 epochs with an EarlyStopping that stops them after its soonest 3 (no improvement
# counts), on a quarter of the data; "every4": validation after every 4th epoch; "half":
# validation twice an epoch (val_check_interval=0.5), 4 batches accumulated a step
EARLY = sys.argv[1:] == ["early"]
EVERY = 4 if sys.argv[1:] == ["every4"] else 1
HALF = {"val_check_interval": 0.5, "accumulate_grad_batches": 4} if sys.argv[1:] == ["half"] else {}
torch.manual_seed(0)
n = 1024 if EARLY else 4096
x = torch.randn(n, 32); y = (x[:, 0] > 0).long()
train = DataLoader(TensorDataset(x[:n * 7 // 8], y[:n * 7 // 8]), batch_size=32, shuffle=True)
val = DataLoader(TensorDataset(x[n * 7 // 8:], y[n * 7 // 8:]), batch_size=128)
stop = [L.pytorch.callbacks.EarlyStopping("val_loss", patience=2, min_delta=100.0)] if EARLY else []
trainer = L.Trainer(max_epochs=40 if EARLY else 60, callbacks=stop, accelerator="cpu",
                    logger=False, enable_checkpointing=False, enable_progress_bar=True,
                    check_val_every_n_epoch=EVERY, **HALF)
trainer.fit(Model(), train, val)
print("after fit: epochs run", trainer.current_epoch)
