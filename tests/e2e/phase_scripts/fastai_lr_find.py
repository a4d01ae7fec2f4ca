"""fastai's lr_find, then fit_one_cycle: lr_find is a fit() its LRFinder ends after num_it
batches (sooner where the loss diverges) - a phase of 60 steps at most, not the epochs that
cover them - then the training itself. Synthetic data, CPU (fastai_data.py)."""
from fastai.callback.schedule import fit_one_cycle, lr_find  # noqa: F401 - Learner's (patches)

from fastai_data import learner

learn = learner()
suggested = learn.lr_find(num_it=60, show_plot=False)
learn.fit_one_cycle(3, suggested.valley)
print("post-training work done", flush=True)
