import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
x = torch.randn(4096, 32); y = (x[:, 0] > 0).long()
ds = TensorDataset(x, y)
sampler = DistributedSampler(ds, shuffle=True)
train = DataLoader(ds, batch_size=32, sampler=sampler)
model = DDP(nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 2)))
opt = torch.optim.SGD(model.parameters(), 0.05)
for epoch in range(30):
    sampler.set_epoch(epoch)
    for xb, yb in train:
        opt.zero_grad()
        nn.functional.cross_entropy(model(xb), yb).backward()
        opt.step()
dist.barrier()
print(f"rank {rank} finished", flush=True)
dist.destroy_process_group()
