"""Stable-Baselines3's ``learn(total_timesteps)``: the algorithm remembered as a trainer when
learn() is called, read for the length its own loop runs - counted in environment steps, which
no loop of the program says - and stopped through that loop's own exit, so learn() returns and the
program goes on to its post-training work (``model.predict`` over the environment, a save).

- **On-policy** (PPO, A2C): each iteration collects ``n_steps`` in each of ``n_envs``
  environments, then trains ``n_epochs`` passes of minibatches of ``batch_size`` (A2C: one
  batch of the whole rollout). An iteration is an epoch: ``ceil(total_timesteps / (n_steps x
  n_envs))`` of them, ``n_epochs x ceil(n_steps x n_envs / batch_size)`` optimizer steps each;
  the rollout's collection is the epoch's boundary work (the first one is before the first step,
  in T_init). PPO's ``target_kl`` may end an iteration's passes early: said, an upper bound.
- **Off-policy** (DQN, SAC, TD3): each call of ``collect_rollouts`` collects ``train_freq``
  steps in each environment, then - past ``learning_starts`` - trains ``gradient_steps`` steps
  (-1: one per step collected): the job is that many optimizer steps, each with its share of the
  environment's steps. A ``train_freq`` counted in episodes has no length to read.

Once the probe stops, the update under way runs to its end, its steps not timed: they land in
the post-training time (at most one update's steps, ~0.1-0.4 s at PPO's defaults on a CPU); cut
short, PPO's later passes over no minibatches would log the means of empty lists - warnings the
program never prints - and leave the policy half-updated. The next ``collect_rollouts`` collects
nothing and says training is over, as a callback returning False would: learn() leaves its loop
and runs its ``on_training_end``. The PyTorch loops adapter (torch_loops.py) times the optimizer steps
learn() takes; with no DataLoader, this adapter's steps per iteration make its epochs.
"""

from __future__ import annotations

import functools
import math
import sys
from typing import Any

from .. import compat
from ..length import Length
from .base import Trainers


class _Learn:
    """One learn() call: the algorithm and the environment steps it was given."""

    def __init__(self, algorithm: Any, timesteps: int | None, callback: Any = None) -> None:
        self.algorithm = algorithm
        self.timesteps = timesteps
        self.early = _early_ending(callback)  # a callback that may end learn() sooner
        self.on_policy = hasattr(algorithm, compat.SB3_ROLLOUT_BUFFER)
        self.stopped = False  # the probe stopped it: no more minibatches nor rollouts
        self.returned = False  # learn() left (a finished call answers nothing: the next does)

    def _settings(self, names: tuple[str, ...]) -> dict[str, Any]:
        return {n: getattr(self.algorithm, n, None) for n in names}

    def rollout(self) -> int | None:
        """Environment steps an iteration collects (on-policy)."""
        n = self._settings(compat.SB3_ON_POLICY)
        steps, envs = n["n_steps"], n["n_envs"]
        return steps * envs if _count(steps) and _count(envs) else None

    def per_iteration(self) -> int | None:
        """Optimizer steps an on-policy iteration takes: its passes over the rollout's
        minibatches (A2C's one batch)."""
        size = self.rollout()
        if size is None:
            return None
        n = self._settings(compat.SB3_ON_POLICY)
        passes = n["n_epochs"] if _count(n["n_epochs"]) else 1
        batch = n["batch_size"] if _count(n["batch_size"]) else size
        return passes * math.ceil(size / batch)

    def iterations(self) -> int | None:
        size, total = self.rollout(), self.timesteps
        return math.ceil(total / size) if size and total else None

    def off_policy_steps(self) -> tuple[int, str] | None:
        """Optimizer steps an off-policy learn() takes, and how they were counted."""
        n = self._settings(compat.SB3_OFF_POLICY)
        freq, envs, starts, grad = (n["train_freq"], n["n_envs"], n["learning_starts"],
                                    n["gradient_steps"])
        frequency, unit = (getattr(freq, name, None) for name in compat.SB3_TRAIN_FREQ)
        if unit != compat.resolve(compat.SB3_TRAIN_FREQ_STEP) \
                or not _count(frequency) or not _count(envs) or not _count(self.timesteps):
            return None  # collected by episodes: as long as the episodes are
        per_call = frequency * envs
        calls = math.ceil(self.timesteps / per_call)
        starts = starts if isinstance(starts, int) and starts > 0 else 0
        trained = calls - min(calls, starts // per_call)  # calls past learning_starts train
        per_train = grad if isinstance(grad, int) and grad >= 0 else per_call
        return trained * per_train, (f"{trained} rollouts of {per_call} environment steps past "
                                     f"learning_starts={starts}, {per_train} gradient steps each")


def _early_ending(callback: Any, depth: int = 0) -> str:
    """The name of a callback given to learn() that may end it before its timesteps (a reward
    threshold, no improvement, a number of episodes), wherever it sits among the others."""
    if callback is None or depth > 4:
        return ""
    if isinstance(callback, (list, tuple)):
        return next(filter(None, (_early_ending(c, depth + 1) for c in callback)), "")
    name = type(callback).__name__
    if name in {compat.attribute(s) for s in compat.SB3_EARLY_ENDING}:
        return name
    return next(filter(None, (_early_ending(getattr(callback, child, None), depth + 1)
                              for child in compat.SB3_CALLBACK_CHILDREN)), "")


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


class Sb3Adapter:
    name: str = "Stable-Baselines3"
    label: str = "Stable-Baselines3"
    modules: tuple[str, ...] = tuple(compat.module_of(s) for s in compat.SB3_LEARN)

    def __init__(self, trainers: Trainers) -> None:
        self.trainers = trainers

    def install(self, module: str) -> None:
        for learn, collect in zip(compat.SB3_LEARN, compat.SB3_COLLECT):
            if compat.module_of(learn) == module:
                self._patch_learn(learn, collect)

    def _patch_learn(self, learn_symbol: str, collect_symbol: str) -> None:
        cls, learn_name = compat.owner(learn_symbol)
        original_learn = getattr(cls, learn_name)
        if getattr(original_learn, "_probecast", False):
            return
        _, collect_name = compat.owner(collect_symbol)
        original_collect = getattr(cls, collect_name)
        timesteps_name, callback_name = compat.SB3_LEARN_PARAMETERS
        adapter = self

        @functools.wraps(original_learn)
        def learn(algorithm: Any, *args: Any, **kwargs: Any) -> Any:
            timesteps = kwargs.get(timesteps_name, args[0] if args else None)
            callback = kwargs.get(callback_name, args[1] if len(args) > 1 else None)
            record = _Learn(algorithm, timesteps if _count(timesteps) else None, callback)
            adapter.trainers.add(adapter, record)
            algorithm._probecast_learn = record
            try:
                return original_learn(algorithm, *args, **kwargs)
            finally:
                record.returned = True

        @functools.wraps(original_collect)
        def collect_rollouts(algorithm: Any, *args: Any, **kwargs: Any) -> Any:
            record = getattr(algorithm, "_probecast_learn", None)
            if record is not None and record.stopped and not record.returned:
                if record.on_policy:
                    return False  # learn() leaves its loop, as after a callback's False
                return compat.resolve(compat.SB3_ROLLOUT_RETURN)(0, 0, False)
            return original_collect(algorithm, *args, **kwargs)

        learn._probecast = True  # type: ignore[attr-defined]
        setattr(cls, learn_name, learn)
        setattr(cls, collect_name, collect_rollouts)

    def in_use(self) -> bool:
        return any(m in sys.modules for m in self.modules) and any(
            adapter is self for adapter, _ in self.trainers.made)

    def accumulation(self, trainer: Any) -> int | None:
        return None

    def batches(self, trainer: Any) -> int | None:
        """Optimizer steps an on-policy iteration takes (its epoch); off-policy: none."""
        record: _Learn = trainer
        return None if record.returned or not record.on_policy else record.per_iteration()

    def length(self, trainer: Any) -> Length | None:
        if trainer.returned:
            return None
        found = Length()
        algorithm = type(trainer.algorithm).__name__
        if trainer.on_policy:
            iterations, size = trainer.iterations(), trainer.rollout()
            if not iterations:
                return None
            found.epochs = iterations
            found.source = (f"{algorithm}.learn(total_timesteps={trainer.timesteps}): "
                            f"{iterations} rollouts of {size} environment steps, "
                            f"{trainer.per_iteration()} optimizer steps each")
            if getattr(trainer.algorithm, compat.SB3_TARGET_KL, None) is not None:
                found.early = f"{algorithm}(target_kl=...)"  # its passes may end early
            found.early = trainer.early or found.early
            return found
        counted = trainer.off_policy_steps()
        if counted is None or counted[0] < 1:
            return None
        found.steps = counted[0]
        found.source = f"{algorithm}.learn(total_timesteps={trainer.timesteps}): {counted[1]}"
        found.early = trainer.early
        return found

    def planned_epochs(self, trainer: Any) -> int | None:
        record: _Learn = trainer
        return None if record.returned or not record.on_policy else record.iterations()

    def stop(self, trainer: Any) -> None:
        if not trainer.returned:
            trainer.stopped = True  # the next collect_rollouts ends learn()

    def leaving(self, trainer: Any) -> bool:
        """Stopped, and learn() has not returned yet: the steps it still takes (the rest of the
        update under way) are its way out, not training to time."""
        return bool(trainer.stopped and not trainer.returned)
