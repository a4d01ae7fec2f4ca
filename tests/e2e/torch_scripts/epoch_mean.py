"""An epoch loop around a loop over a DataLoader whose per-epoch code divides by the batches the
epoch ran (aladdinpersson's lr-scheduler example: ``mean_loss = sum(losses)/len(losses)``), and
a checkpoint saved each epoch: a pass with no batches raises, and each later epoch saves."""
import torch
from torch import nn

torch.manual_seed(0)
data = torch.utils.data.TensorDataset(torch.randn(4096, 32), torch.randint(0, 2, (4096,)))
loader = torch.utils.data.DataLoader(data, batch_size=64, shuffle=True)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 2))
opt = torch.optim.Adam(model.parameters(), 1e-3)
saves = 0

for epoch in range(1, 40):
    losses = []
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        losses.append(loss.item())
        opt.zero_grad()
        loss.backward()
        opt.step()
    mean_loss = sum(losses) / len(losses)
    saves += 1
    print(f"epoch {epoch}: {mean_loss:.3f}")

print(f"after training: {saves} epochs ended", flush=True)
