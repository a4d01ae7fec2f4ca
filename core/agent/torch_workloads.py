"""The built-in PyTorch workload: a plain training loop, as people write it, with no probecast
in it (the agent's hook times it like any user script). For hosts with PyTorch only.

- ``torch-cnn``: the same simple CNN and the same synthetic 28x28 images as ``mnist-cnn`` (two
  conv layers, dropout, Adadelta), fed by DataLoaders, validated each epoch. The data is made
  with torch alone (no NumPy needed).
"""

from __future__ import annotations

from typing import Any

TORCH_WORKLOADS = ("torch-cnn",)


def synthetic_images(n: int, classes: int, seed: int, noise: float) -> tuple[Any, Any]:
    """Each class: a fixed coarse random prototype; a sample: it, shifted a few pixels, scaled,
    buried in noise (learnable over several epochs, like the Keras workloads' data)."""
    import torch

    protos_rng = torch.Generator().manual_seed(12345)  # the same for train and validation
    coarse = torch.randn(classes, 1, 8, 8, generator=protos_rng)
    protos = coarse.repeat_interleave(4, 2).repeat_interleave(4, 3)[:, :, :28, :28]
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, classes, (n,), generator=g)
    shifts = torch.randint(-2, 3, (n, 2), generator=g)
    x = torch.empty(n, 1, 28, 28)
    for i in range(n):
        x[i] = torch.roll(protos[labels[i]], (int(shifts[i, 0]), int(shifts[i, 1])), (1, 2))
    x *= torch.empty(n, 1, 1, 1).uniform_(0.6, 1.4, generator=g)
    x += noise * torch.randn(x.shape, generator=g)
    return x, labels


def run_torch_workload(name: str, batch_size: int, epochs: int, train_size: int, val_size: int,
                       seed: int, noise: float, threads: int, learning_rate: float | None) -> None:
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset

    if name not in TORCH_WORKLOADS:
        raise ValueError(f"unknown PyTorch workload {name!r}; one of {', '.join(TORCH_WORKLOADS)}")
    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    xt, yt = synthetic_images(train_size, 10, seed, noise)
    xv, yv = synthetic_images(val_size, 10, seed + 1, noise)
    train = DataLoader(TensorDataset(xt, yt), batch_size=batch_size, shuffle=True)
    val = DataLoader(TensorDataset(xv, yv), batch_size=batch_size) if val_size else None
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.ReLU(), nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Dropout(0.25), nn.Flatten(), nn.Linear(64 * 12 * 12, 128), nn.ReLU(),
        nn.Dropout(0.5), nn.Linear(128, 10)).to(device)
    optimizer = torch.optim.Adadelta(model.parameters(), lr=learning_rate or 1.0)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        model.train()
        for xb, yb in train:
            xb, yb = xb.to(device), yb.to(device)
            optimizer.zero_grad()
            loss_fn(model(xb), yb).backward()
            optimizer.step()
        if val is not None:
            model.eval()
            correct = seen = 0
            with torch.no_grad():
                for xb, yb in val:
                    out = model(xb.to(device))
                    correct += int((out.argmax(1).cpu() == yb).sum())
                    seen += len(yb)
            print(f"epoch {epoch + 1}/{epochs}: val accuracy {correct / max(1, seen):.3f}",
                  flush=True)
