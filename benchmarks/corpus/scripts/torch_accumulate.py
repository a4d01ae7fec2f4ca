"""A tabular MLP as people write one for a bigger effective batch: gradient accumulation (4),
AdamW with a cosine schedule, a validation pass each epoch, a final evaluation and a checkpoint."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from torch_common import args, tabular

ACCUMULATE = 4
ns = args(default_batch=64, default_epochs=6, default_samples=40000)
torch.manual_seed(0)
train = DataLoader(TensorDataset(*tabular(ns.samples)), batch_size=ns.batch_size, shuffle=True)
val = DataLoader(TensorDataset(*tabular(4000, seed=1)), batch_size=512)
model = nn.Sequential(nn.Linear(64, 512), nn.GELU(), nn.Linear(512, 512), nn.GELU(),
                      nn.Linear(512, 4))
opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=ns.epochs * len(train) // ACCUMULATE)
for epoch in range(ns.epochs):
    model.train()
    for i, (x, y) in enumerate(train):
        loss = nn.functional.cross_entropy(model(x), y) / ACCUMULATE
        loss.backward()
        if (i + 1) % ACCUMULATE == 0:
            opt.step()
            sched.step()
            opt.zero_grad()
    model.eval()
    with torch.no_grad():
        acc = sum((model(x).argmax(1) == y).sum().item() for x, y in val) / 4000
    print(f"epoch {epoch}: val acc {acc:.3f}", flush=True)
with torch.no_grad():
    final = sum((model(x).argmax(1) == y).sum().item() for x, y in val) / 4000
print(f"final accuracy {final:.3f}")
torch.save({"model": model.state_dict(), "opt": opt.state_dict()}, "/tmp/probecast_corpus_mlp.pt")
