"""fastai's fine_tune: one line, two fit()s - 3 epochs with the body frozen, then 4 unfrozen -
each a phase of its own; fastai's own DataLoader and optimizer (no torch.optim one: each
backward pass is the step). Synthetic data, CPU (fastai_data.py)."""
from fastai.callback.schedule import fine_tune  # noqa: F401 - Learner.fine_tune (a patch)

from fastai_data import learner

learner().fine_tune(4, freeze_epochs=3)
print("post-training work done", flush=True)
