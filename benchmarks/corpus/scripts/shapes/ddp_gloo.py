"""DDP under torchrun on CPU (gloo): adapted from pytorch/examples
`distributed/ddp-tutorial-series/multigpu_torchrun.py` with its `datautils.py` (commit 77f55b9).

Kept from the original: its command line - positional `total_epochs` and `save_every`, and
`--batch_size` (per process); ddp_setup() from torchrun's environment and
init_process_group; the Trainer class with _run_batch / _run_epoch / _save_snapshot /
_load_snapshot / train(max_epochs); the "[GPUn] Epoch e | Batchsize: b | Steps: s" line that
each rank prints at each epoch start (it builds an extra iterator to read the batch size);
`self.train_data.sampler.set_epoch(epoch)`; a DataLoader with pin_memory=True, shuffle=False and
`sampler=DistributedSampler(dataset)`; rank 0 saving the snapshot every save_every epochs, and
resuming from an existing snapshot at start; destroy_process_group at the end.

Changed: backend gloo and CPU tensors instead of NCCL and cuda:LOCAL_RANK (DDP without
device_ids); MyTrainDataset holds 48 000 synthetic samples of 20 features with a 4-class label
(the original's 2 048 random (x, y) pairs for a Linear(20, 1) with cross_entropy on a
one-column float target, whose loss is always 0) and the model is an MLP 20 -> 512 -> 512 -> 4,
so that an epoch takes seconds; SGD lr 1e-2 as there; the snapshot lives in the temp folder and
rank 0 removes it once training ends, so a second run starts from scratch instead of resuming.

Batch size flag: `--batch_size N` (per process; 2 processes). Full run, as recorded:
    torchrun --standalone --nproc_per_node 2 ddp_gloo.py 10 2 --batch_size 32
    torchrun --standalone --nproc_per_node 2 ddp_gloo.py 20 2 --batch_size 128
"""
import os
import tempfile

import torch
import torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader

from torch.utils.data.distributed import DistributedSampler
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.distributed import init_process_group, destroy_process_group


class MyTrainDataset(Dataset):
    def __init__(self, size):
        self.size = size
        g = torch.Generator().manual_seed(0)
        w = torch.randn(20, 4, generator=g)
        x = torch.rand(size, 20, generator=g)
        y = (x @ w + 0.1 * torch.randn(size, 4, generator=g)).argmax(dim=1)
        self.data = [(x[i], y[i]) for i in range(size)]

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        return self.data[index]


def ddp_setup():
    init_process_group(backend="gloo")

class Trainer:
    def __init__(
        self,
        model: torch.nn.Module,
        train_data: DataLoader,
        optimizer: torch.optim.Optimizer,
        save_every: int,
        snapshot_path: str,
    ) -> None:
        self.gpu_id = int(os.environ["LOCAL_RANK"])
        self.model = model
        self.train_data = train_data
        self.optimizer = optimizer
        self.save_every = save_every
        self.epochs_run = 0
        self.snapshot_path = snapshot_path
        if os.path.exists(snapshot_path):
            print("Loading snapshot")
            self._load_snapshot(snapshot_path)

        self.model = DDP(self.model)

    def _load_snapshot(self, snapshot_path):
        snapshot = torch.load(snapshot_path, map_location="cpu")
        self.model.load_state_dict(snapshot["MODEL_STATE"])
        self.epochs_run = snapshot["EPOCHS_RUN"]
        print(f"Resuming training from snapshot at Epoch {self.epochs_run}")

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        output = self.model(source)
        loss = F.cross_entropy(output, targets)
        loss.backward()
        self.optimizer.step()

    def _run_epoch(self, epoch):
        b_sz = len(next(iter(self.train_data))[0])
        print(f"[GPU{self.gpu_id}] Epoch {epoch} | Batchsize: {b_sz} | Steps: {len(self.train_data)}")
        self.train_data.sampler.set_epoch(epoch)
        for source, targets in self.train_data:
            self._run_batch(source, targets)

    def _save_snapshot(self, epoch):
        snapshot = {
            "MODEL_STATE": self.model.module.state_dict(),
            "EPOCHS_RUN": epoch,
        }
        torch.save(snapshot, self.snapshot_path)
        print(f"Epoch {epoch} | Training snapshot saved at {self.snapshot_path}")

    def train(self, max_epochs: int):
        for epoch in range(self.epochs_run, max_epochs):
            self._run_epoch(epoch)
            if self.gpu_id == 0 and epoch % self.save_every == 0:
                self._save_snapshot(epoch)


def load_train_objs():
    train_set = MyTrainDataset(48000)  # load your dataset
    model = torch.nn.Sequential(  # load your model
        torch.nn.Linear(20, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    return train_set, model, optimizer


def prepare_dataloader(dataset: Dataset, batch_size: int):
    return DataLoader(
        dataset,
        batch_size=batch_size,
        pin_memory=True,
        shuffle=False,
        sampler=DistributedSampler(dataset)
    )


def main(save_every: int, total_epochs: int, batch_size: int,
         snapshot_path: str = os.path.join(tempfile.gettempdir(), "probecast_shapes_ddp_snapshot.pt")):
    ddp_setup()
    dataset, model, optimizer = load_train_objs()
    train_data = prepare_dataloader(dataset, batch_size)
    trainer = Trainer(model, train_data, optimizer, save_every, snapshot_path)
    trainer.train(total_epochs)
    if trainer.gpu_id == 0 and os.path.exists(snapshot_path):
        os.remove(snapshot_path)  # this run is done: the next one starts from scratch
    destroy_process_group()


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(description='simple distributed training job')
    parser.add_argument('total_epochs', type=int, help='Total epochs to train the model')
    parser.add_argument('save_every', type=int, help='How often to save a snapshot')
    parser.add_argument('--batch_size', default=32, type=int, help='Input batch size on each device (default: 32)')
    args = parser.parse_args()

    main(args.save_every, args.total_epochs, args.batch_size)
