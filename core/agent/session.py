"""One probe's life on the host: start, init, steps, validation, epochs, end.

The Keras callback and the framework-free timer both drive a ProbeSession, so the two emit the
same events with the same timing semantics and the same stop policy.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from typing import Any

from .emit import Emitter
from .policy import StopPolicy
from .sampler import HardwareSampler, describe_devices


class ProbeStop(Exception):
    """Raised out of the training loop when the probe has seen enough (a clean stop)."""


@dataclass
class ProbeMeta:
    probe: str = ""
    instance: str = ""
    host: str = ""
    workload: str = ""
    batch_size: int | None = None
    epochs: int | None = None
    price_per_hour: float | None = None
    framework: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


class ProbeSession:
    def __init__(
        self,
        emitter: Emitter | None = None,
        policy: StopPolicy | None = None,
        meta: ProbeMeta | None = None,
        sample_interval: float | None = 1.0,
    ) -> None:
        self.emitter = emitter or Emitter()
        self.policy = policy or StopPolicy(full=True)
        self.meta = meta or ProbeMeta()
        self.sample_interval = sample_interval
        self.sampler: HardwareSampler | None = None
        self.started = False
        self.steps_per_epoch = 0
        self.val_steps = 0
        self.total_steps = 0
        self.epoch: int | None = None
        self.epochs_done = 0
        self.planned_epochs: int | None = None
        self.stop_requested = False
        self.boundaries = 0
        self.waiting_for_boundary = False

    @property
    def ended(self) -> bool:
        return self.emitter.ended

    def begin(
        self,
        *,
        steps_per_epoch: int,
        val_steps: int = 0,
        epochs: int | None = None,
        batch_size: int | None = None,
        framework: str = "",
    ) -> None:
        """Training is about to run its first step: emit start and init (T_init ends now)."""
        if self.started:
            return
        self.started = True
        self.steps_per_epoch = int(steps_per_epoch or 0)
        self.val_steps = int(val_steps or 0)
        self.planned_epochs = self.meta.epochs or epochs
        m = self.meta
        fields: dict[str, Any] = {
            "instance": m.instance or os.environ.get("PROBECAST_INSTANCE", ""),
            "batch_size": int(m.batch_size or batch_size or 0),
            "workload": m.workload,
            "steps_per_epoch": self.steps_per_epoch,
            "val_steps": self.val_steps,
            "framework": m.framework or framework,
            "devices": describe_devices(),
            **m.extra,
        }
        if self.planned_epochs:
            fields["epochs"] = int(self.planned_epochs)
        if m.host:
            fields["host"] = m.host
        if m.price_per_hour is not None:
            fields["price_per_hour"] = m.price_per_hour
        self.emitter.start(m.probe or uuid.uuid4().hex[:12], **fields)
        self.emitter.timed("init")
        self.policy.begin()
        if self.sample_interval:
            self.sampler = HardwareSampler(self.emitter, self.sample_interval)
            self.sampler.start()

    def step(self, epoch: int, step: int) -> bool:
        """A training step just ended. True when the policy says the probe should stop."""
        first_of_epoch = self.epoch is not None and epoch != self.epoch
        first_ever = self.total_steps == 0
        self.epoch = epoch
        ev = self.emitter.timed("step", epoch=epoch, step=step)
        self.total_steps += 1
        # The run's first step and each later epoch's first step are not steady state: the first
        # carries tracing/compilation, the others the epoch-boundary cost (estimated separately).
        self.policy.observe(ev["dt"], steady=not (first_ever or first_of_epoch))
        if first_of_epoch:
            self.boundaries += 1
        if self.stop_requested:
            return True
        if self.waiting_for_boundary:
            if self.boundaries:
                self.stop_requested = True
                self.policy.reason += "; went on to time one epoch boundary"
        elif self.policy.should_stop():
            left = self.steps_per_epoch - step - 1 if self.steps_per_epoch else -1
            cost = None if self.boundaries else self.policy.boundary_affordable(left)
            if cost is None:
                self.stop_requested = True
            else:
                self.waiting_for_boundary = True
                self.emitter.log("info", f"probe: {self.policy.reason}; going on {left} steps "
                                 f"(~{cost:.0f}s) to time one epoch boundary")
        return self.stop_requested

    def val(self, epoch: int, steps: int, metrics: dict[str, Any] | None = None) -> None:
        self.emitter.timed("val", epoch=epoch, steps=int(steps), metrics=_clean(metrics))

    def epoch_end(self, epoch: int, metrics: dict[str, Any] | None = None) -> None:
        self.epochs_done = max(self.epochs_done, epoch + 1)
        self.emitter.emit("epoch", epoch=epoch, metrics=_clean(metrics))

    def log(self, level: str, msg: str) -> None:
        self.emitter.log(level, msg)

    def finish(self, status: str, reason: str = "") -> None:
        if self.sampler is not None:
            self.sampler.stop()
        if not self.started:
            # Nothing ran (the script failed before training): still a valid, explicit log.
            self.started = True
            self.emitter.start(self.meta.probe or uuid.uuid4().hex[:12],
                               instance=self.meta.instance, workload=self.meta.workload,
                               batch_size=int(self.meta.batch_size or 0), steps_per_epoch=0,
                               val_steps=0, framework=self.meta.framework, devices=[])
        self.emitter.end(status, reason)


def _clean(metrics: dict[str, Any] | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for k, v in (metrics or {}).items():
        try:
            out[str(k)] = round(float(v), 6)
        except (TypeError, ValueError):
            continue
    return out


CURRENT: ProbeSession | None = None  # the agent's session, set by agent_main when it runs


def session_from_env() -> ProbeSession:
    """The agent's session when running under it; else one configured from PROBECAST_* vars.

    Lets a user add ``ProbeCallback()`` or ``StepTimer(...)`` to a script and still be driven by
    ``probecast`` (or run it alone: full run, events on stdout and in $PROBECAST_OUT if set).
    """
    global CURRENT
    if CURRENT is None:
        env = os.environ

        def num(name: str) -> float | None:
            value = env.get(name)
            return float(value) if value else None

        max_steps = num("PROBECAST_MAX_STEPS")
        policy = StopPolicy(
            max_steps=int(max_steps) if max_steps else None,
            max_seconds=num("PROBECAST_MAX_SECONDS"),
            target_ci=num("PROBECAST_TARGET_CI"),
            full=not (max_steps or env.get("PROBECAST_MAX_SECONDS") or env.get("PROBECAST_TARGET_CI")),
        )
        CURRENT = ProbeSession(
            Emitter(path=env.get("PROBECAST_OUT") or None),
            policy,
            ProbeMeta(probe=env.get("PROBECAST_PROBE", ""), instance=env.get("PROBECAST_INSTANCE", "")),
        )
    return CURRENT
