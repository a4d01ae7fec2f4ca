"""Two ranks training in a range loop with no DataLoader (batches sliced by hand), then a
collective after training: every rank leaves the loop at the same step, at its next line, and
the post-training all_reduce finds them all."""
import torch
import torch.distributed as dist
from torch import nn

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(
    nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 2)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(4096, 32)
y = (x[:, 0] > 0).long()
for step in range(20000):
    i = (step * 32) % 4000
    opt.zero_grad()
    nn.functional.cross_entropy(model(x[i:i + 32]), y[i:i + 32]).backward()
    opt.step()
ranks = torch.tensor([1.0])
dist.all_reduce(ranks)
print(f"rank {rank} after training: {int(ranks.item())} ranks", flush=True)
dist.destroy_process_group()
