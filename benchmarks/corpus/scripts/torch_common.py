"""Synthetic stand-ins for the public datasets, in PyTorch (nothing is downloaded): MNIST-shaped
images, tabular rows and token sequences, learnable and seeded. Imported by the torch scripts."""

import argparse

import torch


def args(default_batch=64, default_epochs=4, default_samples=8000):
    p = argparse.ArgumentParser()
    p.add_argument("--batch-size", type=int, default=default_batch)
    p.add_argument("--epochs", type=int, default=default_epochs)
    p.add_argument("--samples", type=int, default=default_samples)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--device", default="cpu", help="cpu (as the corpus was recorded) or cuda")
    ns = p.parse_args()
    if ns.threads:
        torch.set_num_threads(ns.threads)
    return ns


def images(n, shape=(1, 28, 28), classes=10, seed=0, noise=1.5):
    g = torch.Generator().manual_seed(seed)
    protos = torch.randn(classes, *shape, generator=torch.Generator().manual_seed(99))
    y = torch.randint(0, classes, (n,), generator=g)
    return protos[y] + noise * torch.randn(n, *shape, generator=g), y


def tabular(n, features=64, classes=4, seed=0, noise=2.0):
    g = torch.Generator().manual_seed(seed)
    protos = torch.randn(classes, features, generator=torch.Generator().manual_seed(98))
    y = torch.randint(0, classes, (n,), generator=g)
    return protos[y] + noise * torch.randn(n, features, generator=g), y


def tokens(n, length=32, vocab=200, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, vocab, (n, length), generator=g)
    labels = (ids[:, 0] > vocab // 2).long()
    return ids, labels
