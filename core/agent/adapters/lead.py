"""Several optimizers in one loop: which one's steps are the training steps.

The first optimizer to step leads; another one's step is part of the lead's iteration - a GAN
steps its discriminator and its generator on each batch: one step, not two (pytorch/examples'
DCGAN was estimated at half its time when each counted; tensorflow/docs' DCGAN, a traced
``train_step`` applying two Keras optimizers, the same). Used by the PyTorch and the Keras
custom-loop adapters. Another optimizer leads from then on
when it trains alone: it steps again before the lead does (a critic stepped more often than its
generator), or its first step comes in another phase (pretraining with one optimizer, then
fine-tuning with another: the adapter says so).
"""

from __future__ import annotations

from typing import Callable


class LeadOptimizer:
    def __init__(self) -> None:
        self.key: int | None = None  # id() of the optimizer whose steps are the steps
        self.steps = 0  # its steps so far
        self.others: dict[int, int] = {}  # another optimizer: the lead's steps at its last step
        self.led: set[int] = set()  # the optimizers that have led
        # the lead came back to one that led before, each stepping alone in turn: two loops of
        # steps an epoch, each its own optimizer (Spinning Up's PPO: a policy loop, a value loop)
        self.alternating = False
        # the lead moved in turn: the new lead's step before this one was a training step
        # alone too (the first of its loop), not counted then - the adapter counts it now
        self.missed_at: float | None = None
        self._other_at: dict[int, float] = {}  # another optimizer's last step: when it ended
        self._said = False

    def leads(self, key: int, stopped: bool, another_phase: Callable[[], bool],
              now: float | None = None) -> bool:
        """Whether this optimizer's step (``key``: its id()) ends a training step. ``stopped``:
        the probe stopped the lead's loop; ``another_phase()``: this step is outside it (asked
        only for another optimizer's first step, or after a stop - it walks frames). ``now``:
        when this step ended (time.monotonic), for ``missed_at``."""
        self.missed_at = None
        if self.key is None or key == self.key:
            self.key = key
            self.led.add(key)
            self.steps += 1
            return True
        previous = self.others.get(key)
        self.others[key] = self.steps
        alone = in_turn = previous is not None and previous == self.steps
        if not alone and (previous is None or stopped) and another_phase():
            alone = True  # in another phase: the lead's training is over
        if not alone:
            if now is not None:
                self._other_at[key] = now
            return False
        self.alternating = self.alternating or (in_turn and key in self.led)
        self.missed_at = self._other_at.get(key) if in_turn else None
        self.key, self.steps, self.others, self._other_at = key, 1, {}, {}
        self.led.add(key)
        return True

    def warn(self, log: Callable[..., None]) -> None:
        """Once the lead has alternated: the job's length as read counts the first loop only."""
        if self.alternating and not self._said:
            self._said = True
            log("warning", "two optimizers step in turn, each in a loop of its own (a policy loop "
                "then a value loop: PPO's shape): the steps of both are timed, but the length "
                "read counts the first loop's steps and its epochs by them - the estimate may "
                "fall short (a PPO-shaped job of 2 000 epochs: -51 %)",
                code="alternating-optimizers")
