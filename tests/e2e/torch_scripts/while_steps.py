"""A trainer of one loop of steps around the loader (diffusion and GAN trainers' shape): the
while's counter is advanced by each step, so its bound is the job's steps, not its passes."""
import torch
from torch import nn

torch.manual_seed(0)
data = torch.utils.data.TensorDataset(torch.randn(2048, 16), torch.randint(0, 4, (2048,)))
loader = torch.utils.data.DataLoader(data, batch_size=32, shuffle=True)  # 64 batches a pass
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
train_num_steps = 20000
step = 0
while step < train_num_steps:
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if step >= train_num_steps:
            break
print("post-training code ran", step)
