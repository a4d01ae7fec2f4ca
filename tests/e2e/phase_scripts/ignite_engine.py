"""PyTorch Ignite as its README and examples write it: ``create_supervised_trainer`` and an
evaluator run on the validation loader after each epoch (a handler on the trainer's
EPOCH_COMPLETED), a test-set evaluation when the run completes, ``trainer.run(loader,
max_epochs=40)`` - a loop of its own, which no loop of the program says - then the trained model
used. 40 batches a pass of 32. Modes (argv[1]): ``early`` adds an EarlyStopping(patience=3) on
the validation loss (the loss never stops falling here: it never comes), ``epoch_length`` runs
epochs of 10 iterations over the same loader (4 an epoch pass), ``iters`` runs max_iters=1200
(Ignite 0.5), ``twice`` fine-tunes with a second run of 20 epochs at a lower rate, ``every``
validates after every 3rd epoch only (Ignite's cifar10 example: ``EPOCH_COMPLETED(every=3)``),
saves a checkpoint every 100 iterations and prints the loss every 10."""
import sys

import torch
from ignite.engine import Events, create_supervised_evaluator, create_supervised_trainer
from ignite.handlers import EarlyStopping
from ignite.metrics import Loss
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.set_num_threads(1)
torch.manual_seed(0)
mode = sys.argv[1] if len(sys.argv) > 1 else ""
x = torch.randn(1280 + 256, 16)
y = x @ torch.randn(16, 1)
train = DataLoader(TensorDataset(x[:1280], y[:1280]), batch_size=32, shuffle=True)
val = DataLoader(TensorDataset(x[1280:], y[1280:]), batch_size=64)
model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
trainer = create_supervised_trainer(model, optimizer, nn.MSELoss())
evaluator = create_supervised_evaluator(model, metrics={"loss": Loss(nn.MSELoss())})
tested = []


@trainer.on(Events.EPOCH_COMPLETED(every=3) if mode == "every" else Events.EPOCH_COMPLETED)
def validate(engine):
    evaluator.run(val)


if mode == "every":  # a checkpoint every 100 iterations, a loss logged every 10: not work
    trainer.add_event_handler(Events.ITERATION_COMPLETED(every=100),
                              lambda engine: torch.save(model.state_dict(), "checkpoint.pt"))
    trainer.add_event_handler(Events.ITERATION_COMPLETED(every=10),
                              lambda engine: print(engine.state.output, end="\r"))


@trainer.on(Events.COMPLETED)
def test(engine):
    evaluator.run(val)
    tested.append(evaluator.state.metrics["loss"])


if mode == "early":
    evaluator.add_event_handler(Events.COMPLETED, EarlyStopping(
        patience=3, score_function=lambda e: -e.state.metrics["loss"], trainer=trainer))
if mode == "epoch_length":
    trainer.run(train, max_epochs=120, epoch_length=10)
elif mode == "iters":
    trainer.run(train, max_iters=1200)
else:
    trainer.run(train, max_epochs=40)
if mode == "twice":  # a new run from epoch 0, as Ignite's docs restart one
    trainer.state.max_epochs = None
    for group in optimizer.param_groups:
        group["lr"] = 0.001
    trainer.run(train, max_epochs=20)
with torch.no_grad():
    error = nn.functional.mse_loss(model(x[1280:]), y[1280:]).item()
print(f"after run: tested {len(tested)} time(s), the model's error {error:.3f}")
