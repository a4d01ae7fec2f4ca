"""PyTorch's transfer-learning tutorial's loop, which many scripts copy: each epoch runs
``for phase in ["train", "val"]`` over ``dataloaders[phase]``, stepping only where
``phase == "train"`` - once a training pass an epoch, the validation pass between them."""
import torch
from torch import nn

torch.manual_seed(0)


def loader(n, shuffle):
    x = torch.randn(n, 32)
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, (x[:, 0] > 0).long()),
                                       batch_size=32, shuffle=shuffle)


dataloaders = {"train": loader(4096, True), "val": loader(1024, False)}
model = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)


def train_model(model, optimizer, num_epochs=25):
    for epoch in range(num_epochs):
        for phase in ["train", "val"]:
            model.train() if phase == "train" else model.eval()
            corrects = 0
            for inputs, labels in dataloaders[phase]:
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == "train"):
                    outputs = model(inputs)
                    loss = nn.functional.cross_entropy(outputs, labels)
                    if phase == "train":
                        loss.backward()
                        optimizer.step()
                corrects += int((outputs.argmax(1) == labels).sum())
            print(f"{epoch} {phase} acc {corrects / len(dataloaders[phase].dataset):.3f}")
    return model


model = train_model(model, optimizer, num_epochs=30)
print("post-training code ran", flush=True)
