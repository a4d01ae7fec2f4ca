"""timm's PrefetchLoader shape: a class of the program's own whose ``__iter__`` is a generator
over a DataLoader, one batch behind (it yields the previous batch, then the last after its
loop) - so a pass with no batches at all crashes it (``input`` unbound). Validation goes
through it each epoch; the probe ends training partway through the run."""
import torch
from torch import nn


class PrefetchLoader:
    def __init__(self, loader):
        self.loader = loader

    def __iter__(self):
        first = True
        for next_input, next_target in self.loader:
            if not first:
                yield input, target  # noqa: F821 - bound below, as timm writes it
            else:
                first = False
            input, target = next_input, next_target
        yield input, target

    def __len__(self):
        return len(self.loader)


def loader(n, shuffle):
    x = torch.randn(n, 32)
    return torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(x, (x[:, 0] > 0).long()), batch_size=32, shuffle=shuffle)


torch.manual_seed(0)
train, val = loader(4096, True), PrefetchLoader(loader(1024, False))
model = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
for epoch in range(40):
    model.train()
    for x, y in train:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        correct = sum(int((model(x).argmax(1) == y).sum()) for x, y in val)
    print(f"epoch {epoch} val {correct / 1024:.3f}", flush=True)
print("post-training code ran", flush=True)
