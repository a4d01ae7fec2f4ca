"""Framework-free step timer for PyTorch, JAX or any hand-written loop.

    probe = StepTimer(steps_per_epoch=len(loader), val_steps=len(val_loader), batch_size=64)
    for epoch in probe.epochs(range(epochs)):   # ends once the probe has stopped
        for batch in probe.steps(loader, epoch):
            train_step(batch)
        with probe.validation(epoch, steps=len(val_loader)):
            evaluate()
        probe.epoch_end(epoch, {"val_accuracy": acc})
    probe.finish()

A step's ``dt`` ends when the loop asks for the next batch, so loading the batch, the step and
anything else in the loop body are all counted, as the event schema requires.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from .probe_session import ProbeSession, ProbeStop

T = TypeVar("T")


class StepTimer:
    def __init__(
        self,
        steps_per_epoch: int,
        val_steps: int = 0,
        batch_size: int | None = None,
        epochs: int | None = None,
        framework: str = "",
        session: ProbeSession | None = None,
    ) -> None:
        if session is None:
            from .probe_session import session_from_env

            session = session_from_env()
        self.session = session
        self.steps_per_epoch = steps_per_epoch
        self.val_steps = val_steps
        self.batch_size = batch_size
        self.planned_epochs = epochs
        self.framework = framework
        self.stopped = False

    def _begin(self) -> None:
        self.session.begin(steps_per_epoch=self.steps_per_epoch, val_steps=self.val_steps,
                           epochs=self.planned_epochs, batch_size=self.batch_size,
                           framework=self.framework)

    def epochs(self, iterable: Iterable[T]) -> Iterator[T]:
        """``for epoch in probe.epochs(range(n)):`` - ends the epoch loop once the probe has
        stopped, so the code after the loop (the program's post-training work) runs."""
        for item in iterable:
            if self.stopped:
                return
            yield item
            if self.stopped:
                return

    def steps(self, iterable: Iterable[T], epoch: int = 0) -> Iterator[T]:
        """Yield batches; each step is timed when the loop comes back for the next one.

        Stops yielding (sets ``stopped``) when the stop policy says the probe has seen enough.
        A loop that asks for more steps after that - it kept training - gets ProbeStop (a
        BaseException: ``except Exception`` does not swallow it): training never goes on
        unobserved. ``probe.epochs(...)`` ends the loop cleanly instead.
        """
        if self.stopped:
            raise ProbeStop(self.session.policy.reason or "the probe stopped")
        self._begin()
        index = 0
        for item in iterable:
            yield item
            if self.session.ended:
                return
            if self.session.step(epoch, index):
                self.stopped = True
                if self.session.under_agent:  # training is over: the rest is post-training
                    self.session.mark_done("probe-done", self.session.policy.reason)
                return
            index += 1

    @contextmanager
    def validation(self, epoch: int = 0, steps: int | None = None,
                   metrics: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
        """Time a validation pass; fill the yielded dict with metrics to report them."""
        self._begin()
        out: dict[str, Any] = dict(metrics or {})
        yield out
        self.session.val(epoch, steps if steps is not None else self.val_steps, out)

    def epoch_end(self, epoch: int, metrics: dict[str, Any] | None = None) -> None:
        self.session.epoch_end(epoch, metrics)

    def finish(self, status: str | None = None, reason: str = "") -> None:
        if status is None:
            status = "probe-done" if self.stopped else "complete"
            reason = reason or (self.session.policy.reason if self.stopped else "")
        self.session.finish(status, reason)

    def __enter__(self) -> StepTimer:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc is not None and not isinstance(exc, ProbeStop):
            self.finish("failed", f"{exc_type.__name__}: {exc}")
        elif not self.session.ended:
            self.finish()
