"""Evaluates on one training batch (and one validation batch) every 5 optimizer steps, inside
the training pass - LLMs-from-scratch's gpt_train.py (evaluate_model -> calc_loss_loader(
train_loader, ..., num_batches=1)): a second pass over the training loader, from another line,
while the training pass is under way. Then a pass over the training data at each epoch's end
(the training accuracy, a common tutorial form) once the epoch's pass ran out."""
import torch
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
train = DataLoader(TensorDataset(torch.randn(640, 32), torch.randint(0, 4, (640,))),
                   batch_size=16, shuffle=True)
val = DataLoader(TensorDataset(torch.randn(64, 32), torch.randint(0, 4, (64,))), batch_size=16)
model = torch.nn.Sequential(torch.nn.Linear(32, 256), torch.nn.ReLU(), torch.nn.Linear(256, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)


def loss_on(loader, n):
    total = 0.0
    for i, (x, y) in enumerate(loader):
        if i < n:
            total += torch.nn.functional.cross_entropy(model(x), y).item()
        else:
            break
    return total / n


def accuracy(loader):
    right = 0
    with torch.no_grad():
        for x, y in loader:
            right += (model(x).argmax(1) == y).sum().item()
    return right / len(loader.dataset)


global_step = -1
for epoch in range(30):
    for x, y in train:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        global_step += 1
        if global_step % 5 == 0:
            with torch.no_grad():
                print(global_step, loss_on(train, 1), loss_on(val, 1))
    print("epoch", epoch, "training accuracy", accuracy(train))
print("post-training work done")
