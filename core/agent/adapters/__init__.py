"""The framework adapters, one module each, behind one protocol (base.Adapter):

    keras_fit.py     Keras Model.fit (its callback: keras_callback.py)
    keras_loops.py   Keras / TensorFlow custom loops: optimizer steps outside fit(), tf.data passes
    keras_tuner.py   KerasTuner's searches: a phase of fit()s, one a trial, ended after the probe
    optuna_study.py  Optuna's studies: a phase of the objective's training, n_trials times
    torch_loops.py   PyTorch loops: optimizer steps or backward passes, DataLoader passes
                     (torch_devices.py: CUDA step clocks, rank 0's stop shared by all ranks)
    lightning.py     Lightning's Trainer        } trainer adapters (base.TrainerAdapter): their
    hf_trainer.py    the Hugging Face Trainer   } steps are torch_loops.py's
    fastai_learner.py  fastai's Learner         } (fastai's DataLoader passes: torch_data.py's)
    sb3_learn.py     Stable-Baselines3's learn() } (its rollouts: epochs with no DataLoader)
    ignite_engine.py PyTorch Ignite's Engine.run }

Every framework name an adapter touches comes from compat.py. The hook (hook.py) makes the
adapters for its process (``for_session``) and ``install``s them: each when the program imports
one of its modules.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from ..imports import when_imported
from ..probe_session import ProbeSession
from .base import Adapter, TrainerAdapter, Trainers
from .fastai_learner import FastaiAdapter
from .hf_trainer import HfTrainerAdapter
from .ignite_engine import IgniteAdapter
from .keras_fit import KerasFitAdapter
from .keras_loops import KerasLoopsAdapter
from .keras_tuner import KerasTunerAdapter
from .lightning import LightningAdapter
from .optuna_study import OptunaAdapter
from .sb3_learn import Sb3Adapter
from .torch_loops import TorchLoopsAdapter

# (the adapter that could not hook, the module just imported, what was raised)
AdapterFailed = Callable[[Adapter, str, Exception], None]

__all__ = ["Adapter", "AdapterFailed", "TrainerAdapter", "Trainers", "for_session", "install"]


def for_session(session: ProbeSession, config: dict[str, Any]) -> list[Adapter]:
    """Every adapter, for the hook's session, in the order they install on the same import:
    Keras fit before Keras loops (the loops leave fit's steps to its callback)."""
    steps_per_epoch = config.get("steps_per_epoch")
    loops = KerasLoopsAdapter(session, steps_per_epoch) if session.under_agent else None
    fit = KerasFitAdapter(session, val_batches=int(config.get("val_batches", 5)), loops=loops)
    fit.searches = KerasTunerAdapter(session)
    made = Trainers()  # the trainers the program makes: Lightning's, the Hugging Face one,
    torch = TorchLoopsAdapter(session, steps_per_epoch, trainers=made)  # fastai's fit()s
    trainers: tuple[TrainerAdapter, ...] = (LightningAdapter(made), HfTrainerAdapter(made),
                                            FastaiAdapter(made, torch), Sb3Adapter(made),
                                            IgniteAdapter(made))
    made.adapters = trainers
    return [fit, *([loops] if loops is not None else []), fit.searches, torch, *trainers,
            OptunaAdapter(session)]


def install(adapters: Sequence[Adapter], failed: AdapterFailed) -> None:
    """Install each adapter when the program imports one of its modules (now, if it has). The
    adapters on one module install in order; once one fails, the rest of that module's are not
    tried (they rely on it: Keras loops on Keras fit), so a framework that moved a name is said
    once per process. A failure goes to ``failed``, never to the program's import."""
    by_module: dict[str, list[Adapter]] = {}
    for adapter in adapters:
        for module in adapter.modules:
            by_module.setdefault(module, []).append(adapter)
    for module, group in by_module.items():
        when_imported(module, functools.partial(_install_group, module, group, failed))


def _install_group(module: str, group: list[Adapter], failed: AdapterFailed) -> None:
    for adapter in group:
        try:
            adapter.install(module)
        except Exception as exc:  # noqa: BLE001 - never break the program's import
            try:
                failed(adapter, module, exc)
            except Exception:  # noqa: BLE001 - nor by reporting it
                pass
            return
