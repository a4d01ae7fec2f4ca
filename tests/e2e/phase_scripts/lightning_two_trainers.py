"""Two Lightning trainers one after another (pretrain, then fine-tune with a new Trainer and a
smaller batch): two phases, each stopped through its own trainer's flag. Synthetic data, CPU."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
import lightning as L


class Model(L.LightningModule):
    def __init__(self, lr: float) -> None:
        super().__init__()
        self.lr = lr
        self.net = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 2))

    def training_step(self, batch, i):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), self.lr)


torch.manual_seed(0)
torch.set_num_threads(1)
x = torch.randn(4096, 32)
y = (x[:, 0] > 0).long()
model = Model(1e-3)
pretrain = L.Trainer(max_epochs=6, accelerator="cpu", logger=False, enable_checkpointing=False,
                     enable_progress_bar=False)
pretrain.fit(model, DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True))  # 64 a pass
model.lr = 1e-4
finetune = L.Trainer(max_epochs=4, accelerator="cpu", logger=False, enable_checkpointing=False,
                     enable_progress_bar=False)
finetune.fit(model, DataLoader(TensorDataset(x[:1024], y[:1024]), batch_size=16))  # 64 a pass
print("post-training work done", flush=True)
