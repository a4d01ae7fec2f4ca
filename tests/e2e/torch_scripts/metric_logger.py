"""torchvision's reference scripts' shape (timm, DeiT, MAE and DETR copy it): ``main()`` runs
``for epoch in range(...): train_one_epoch(...)``, which iterates the DataLoader through
``metric_logger.log_every(data_loader, print_freq, header)`` - a generator of the program's own
that yields each batch and prints every ``print_freq``. The generator's loop over the loader is
the pass; the epochs loop, in the caller, counts the passes."""
import time

import torch
from torch import nn


class MetricLogger:
    def log_every(self, iterable, print_freq, header=""):
        start = time.time()
        for i, obj in enumerate(iterable):
            yield obj
            if i % print_freq == 0 or i == len(iterable) - 1:
                print(f"{header} [{i}/{len(iterable)}] {time.time() - start:.2f}s", flush=True)


def train_one_epoch(model, optimizer, data_loader, epoch, print_freq=50):
    metric_logger = MetricLogger()
    for x, y in metric_logger.log_every(data_loader, print_freq, f"Epoch: [{epoch}]"):
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()


def main(epochs=40):
    torch.manual_seed(0)
    x = torch.randn(4096, 32); y = (x[:, 0] > 0).long()
    data_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y),
                                              batch_size=32, shuffle=True)
    model = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for epoch in range(0, epochs):
        train_one_epoch(model, optimizer, data_loader, epoch)
    print("post-training code ran", flush=True)


if __name__ == "__main__":
    main()
