"""An Optuna study of 4 trials, as Optuna's PyTorch example writes one: each trial builds an MLP
of its own size and trains it 3 epochs over a DataLoader whose loop leaves after 24 of its 64
batches ("limiting training data": `if batch_idx * BATCHSIZE >= N_TRAIN_EXAMPLES: break`),
reporting its accuracy to the study's pruner each epoch (the default MedianPruner prunes no
trial before its sixth), with a timeout no trial starts after; the program prints the best
trial after. Synthetic data, CPU. With ``open``: no n_trials, trials start until the timeout; with ``quiet``: the objective
reports nothing (its pruner can end no trial)."""
import sys

import optuna
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.set_num_threads(1)
torch.manual_seed(0)
BATCHSIZE, EPOCHS = 32, 3
QUIET = sys.argv[1:] == ["quiet"]  # the objective reports nothing to the study
N_TRAIN_EXAMPLES = BATCHSIZE * 24
x = torch.randn(2048, 64)
y = (x[:, 0] + x[:, 1] > 0).long()


def objective(trial: optuna.Trial) -> float:
    units = trial.suggest_int("units", 64, 512)
    model = nn.Sequential(nn.Linear(64, units), nn.ReLU(), nn.Linear(units, 2))
    optimizer = torch.optim.Adam(model.parameters(),
                                 lr=trial.suggest_float("lr", 1e-4, 1e-2, log=True))
    loader = DataLoader(TensorDataset(x, y), batch_size=BATCHSIZE, shuffle=True)
    accuracy = 0.0
    for epoch in range(EPOCHS):
        model.train()
        for batch_idx, (data, target) in enumerate(loader):
            if batch_idx * BATCHSIZE >= N_TRAIN_EXAMPLES:
                break
            optimizer.zero_grad()
            F.cross_entropy(model(data), target).backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            accuracy = (model(x[:256]).argmax(1) == y[:256]).float().mean().item()
        if not QUIET:
            trial.report(accuracy, epoch)
            if trial.should_prune():
                raise optuna.TrialPruned()
    return accuracy


optuna.logging.set_verbosity(optuna.logging.WARNING)
study = optuna.create_study(direction="maximize", sampler=optuna.samplers.RandomSampler(seed=0))
if sys.argv[1:] == ["open"]:  # no n_trials: trials start until the timeout
    study.optimize(objective, timeout=600)
elif QUIET:  # more trials than the pruner's startup (5): it could prune the later three
    study.optimize(objective, n_trials=8)
else:
    study.optimize(objective, n_trials=4, timeout=600)  # (the four trials end long before)
print("best trial:", study.best_trial.number, "of", len(study.trials), flush=True)
