"""Hogwild training of an MNIST CNN: adapted from pytorch/examples `mnist_hogwild/main.py` and
`mnist_hogwild/train.py` (commit 77f55b9).

Kept from the original: the argparse flags (`--batch-size --test-batch-size --epochs --lr
--momentum --seed --log-interval --num-processes --save_model --dry-run`); the Net;
`mp.set_start_method('spawn', force=True)`, `model.share_memory()` and `--num-processes`
torch.multiprocessing Processes, each running train(rank, ...): its own DataLoader over the
dataset (shuffle=True) and SGD optimizer on the shared parameters, `--epochs` epoch loops with
the "pid Train Epoch: ..." line every log-interval batches; the parent joins them and then runs
test() on the test set (and saves the state_dict with --save_model).

Changed: the data are synthetic MNIST-shaped tensors (1x28x28, 10 classes, learnable; no
torchvision download): 15 000 training and 1 000 test images; train.py's functions are in this
file (the children are spawned, so they import it as __mp_main__); --cuda / --mps are left out;
the saved model goes to the temp folder. With --num-processes 2 on one core the two trainers
share the core.

Batch size flag: `--batch-size N`. Full run, as recorded:
    python hogwild.py --epochs 12 --num-processes 2 --batch-size 64
    python hogwild.py --epochs 12 --num-processes 2 --batch-size 256
"""
from __future__ import print_function
import argparse
import os
import tempfile
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.multiprocessing as mp
import torch.optim as optim
from torch.utils.data import TensorDataset

# Training settings
parser = argparse.ArgumentParser(description='PyTorch MNIST Example')
parser.add_argument('--batch-size', type=int, default=64, metavar='N',
                    help='input batch size for training (default: 64)')
parser.add_argument('--test-batch-size', type=int, default=1000, metavar='N',
                    help='input batch size for testing (default: 1000)')
parser.add_argument('--epochs', type=int, default=10, metavar='N',
                    help='number of epochs to train (default: 10)')
parser.add_argument('--lr', type=float, default=0.01, metavar='LR',
                    help='learning rate (default: 0.01)')
parser.add_argument('--momentum', type=float, default=0.5, metavar='M',
                    help='SGD momentum (default: 0.5)')
parser.add_argument('--seed', type=int, default=1, metavar='S',
                    help='random seed (default: 1)')
parser.add_argument('--log-interval', type=int, default=10, metavar='N',
                    help='how many batches to wait before logging training status')
parser.add_argument('--num-processes', type=int, default=2, metavar='N',
                    help='how many training processes to use (default: 2)')
parser.add_argument('--save_model', action='store_true', default=False,
                    help='save the trained model to state_dict')
parser.add_argument('--dry-run', action='store_true', default=False,
                    help='quickly check a single pass')

class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


# ---- train.py ---------------------------------------------------------------

def train(rank, args, model, device, dataset, dataloader_kwargs):
    torch.manual_seed(args.seed + rank)

    train_loader = torch.utils.data.DataLoader(dataset, **dataloader_kwargs)

    optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    for epoch in range(1, args.epochs + 1):
        train_epoch(epoch, args, model, device, train_loader, optimizer)


def test(args, model, device, dataset, dataloader_kwargs):
    torch.manual_seed(args.seed)

    test_loader = torch.utils.data.DataLoader(dataset, **dataloader_kwargs)

    test_epoch(model, device, test_loader)


def train_epoch(epoch, args, model, device, data_loader, optimizer):
    model.train()
    pid = os.getpid()
    for batch_idx, (data, target) in enumerate(data_loader):
        optimizer.zero_grad()
        output = model(data.to(device))
        loss = F.nll_loss(output, target.to(device))
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print('{}\tTrain Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                pid, epoch, batch_idx * len(data), len(data_loader.dataset),
                100. * batch_idx / len(data_loader), loss.item()))
            if args.dry_run:
                break


def test_epoch(model, device, data_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in data_loader:
            output = model(data.to(device))
            test_loss += F.nll_loss(output, target.to(device), reduction='sum').item() # sum up batch loss
            pred = output.max(1)[1] # get the index of the max log-probability
            correct += pred.eq(target.to(device)).sum().item()

    test_loss /= len(data_loader.dataset)
    print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        test_loss, correct, len(data_loader.dataset),
        100. * correct / len(data_loader.dataset)))

# -----------------------------------------------------------------------------

def synthetic_mnist(n, seed):
    """ MNIST-shaped stand-in: 10 prototype images plus noise, already normalized """
    g = torch.Generator().manual_seed(seed)
    protos = torch.randn(10, 1, 28, 28, generator=torch.Generator().manual_seed(99))
    y = torch.randint(0, 10, (n,), generator=g)
    return TensorDataset(protos[y] + 1.5 * torch.randn(n, 1, 28, 28, generator=g), y)


if __name__ == '__main__':
    args = parser.parse_args()

    device = torch.device("cpu")

    dataset1 = synthetic_mnist(15000, seed=0)
    dataset2 = synthetic_mnist(1000, seed=1)
    kwargs = {'batch_size': args.batch_size,
              'shuffle': True}

    torch.manual_seed(args.seed)
    mp.set_start_method('spawn', force=True)

    model = Net().to(device)
    model.share_memory() # gradients are allocated lazily, so they are not shared here

    processes = []
    for rank in range(args.num_processes):
        p = mp.Process(target=train, args=(rank, args, model, device,
                                           dataset1, kwargs))
        # We first train the model across `num_processes` processes
        p.start()
        processes.append(p)
    for p in processes:
        p.join()

    if args.save_model:
        torch.save(model.state_dict(), os.path.join(tempfile.gettempdir(), "MNIST_hogwild.pt"))

    # Once training is complete, we can test the model
    test(args, model, device, dataset2, kwargs)
