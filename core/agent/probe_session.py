"""One probe's life on the host: start, init, steps, validation, epochs, end.

The Keras callback and the framework-free timer both drive a ProbeSession, so the two emit the
same events with the same timing semantics and the same stop policy.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
import uuid
from array import array
from dataclasses import dataclass
from typing import Any

from . import imports
from .emit import Emitter, ProbeCancelled, clean_metrics
from .going_on import GoingOn
from .phases import Phases
from .policy import StopPolicy
from .probe_meta import ProbeMeta
from .repeats import Repeats
from .sampler import HardwareSampler, describe_devices

class ProbeStop(BaseException):
    """Raised out of the training loop when the probe has seen enough (a clean stop). A
    BaseException, as KeyboardInterrupt is: a program's own ``except Exception:`` around a
    training step (retry on a bad batch, say) must not swallow the stop and train on unobserved."""


class ProbeSession(Phases, GoingOn):
    def __init__(
        self,
        emitter: Emitter | None = None,
        policy: StopPolicy | None = None,
        meta: ProbeMeta | None = None,
        sample_interval: float | None = 1.0,
        under_agent: bool = False,
    ) -> None:
        self.emitter = emitter or Emitter()
        # Under the agent's launcher the agent writes `end` after the program exits; the session
        # marks the end of training with `done` instead, and the program goes on to its exit.
        self.under_agent = under_agent
        self.external: str | None = None  # "stop" / "cancel" from the agent (other processes)
        self.trained = False  # training is over (done): later fit() calls return at once
        # a library's loop runs the program's training N times (Optuna's trials)
        self.repeats: Repeats | None = None
        self.epochs_begun = 0  # across fit() calls
        self.last_metrics: dict[str, float] = {}
        self.boundary_hint: str | None = None  # said once a boundary is measured and costly
        self.policy = policy or StopPolicy(full=True)
        self.meta = meta or ProbeMeta()
        self.sample_interval = sample_interval
        self.sampler: HardwareSampler | None = None
        self.started = False
        self.steps_per_epoch = self.val_steps = self.total_steps = self.epochs_done = 0
        self.epoch: int | None = None
        self.planned_epochs: int | None = None
        self.stop_requested = False
        self.boundaries = 0
        # seconds since the last step the program spent between a fit() call's return and the
        self.outside = 0.0  # next call (fit() in a loop): the next step's `outside`, no boundary's
        self.waiting_for_boundary = False
        self._waiting_since = 0.0
        self._boundary_by = 0  # the step count by which the boundary waited for must have come
        self.every: int | None = None  # periodic work every K steps (the program's `plan`)
        self.every_epochs: tuple[int, int] | None = None  # ... K, the first epoch it follows
        self.until: str | None = None  # the condition a loop trains until (the `plan`'s until)
        self.earliest_epochs: int | None = None  # the soonest an early stop can end training
        self.earliest_steps: int | None = None  # ... in steps (a job of one loop of steps)
        self.earliest_pass: int | None = None  # a break ends each epoch's loop, not training
        self._periodic_said = False
        self._periodic_to: int | None = None  # the steps it goes on to for it (going_on.py)
        self.going_on: dict[str, float] = {}  # the first epoch's end, the program's own: until
        self._last_index = -1  # the last step's index in its epoch
        self.planned_steps: int | None = None
        self._plan_epochs: int | None = None  # the epochs the last plan said
        self._pending_plan: dict[str, Any] = {}
        self._pending_logs: list[tuple[str, str, str]] = []  # said before `start`: after it
        self.memory_said = False  # a does-not-fit wrote its own `memory` event (hook.py)
        self.agent_init_s = 0.0  # the agent's own start-up before the program's (hook.py)
        # the hook's own seconds inside the program's steps (an adapter adds them) since the last
        self.own, self._own_steady = 0.0, array("d")  # step; each steady step's: `done`'s hook_ms
        self.init_phases()

    @property
    def ended(self) -> bool:
        return self.emitter.ended or self.trained

    def begin(
        self,
        *,
        steps_per_epoch: int,
        val_steps: int = 0,
        epochs: int | None = None,
        batch_size: int | None = None,
        framework: str = "",
        at: float | None = None,
    ) -> None:
        """Training is about to run its first step: emit start and init (T_init ends now, or at
        ``at``: the monotonic time training began, when that is known only afterwards)."""
        if self.started:
            return
        self.started = True
        self.steps_per_epoch = int(steps_per_epoch or 0)
        self.val_steps = int(val_steps or 0)
        self.planned_epochs = self.meta.epochs or epochs
        m = self.meta
        fields: dict[str, Any] = {
            "instance": m.instance or os.environ.get("PROBECAST_INSTANCE", ""),
            "batch_size": m.batch(batch_size),
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
        own = self.agent_init_s + imports.SPENT[0] if self.agent_init_s else 0.0
        self.emitter.timed("init", at=at, **({"agent_s": round(own, 6)} if own else {}))
        if self._pending_plan:
            self.emitter.emit("plan", **self._pending_plan)
            self._pending_plan = {}
        self._flush_logs()
        self.policy.begin()
        if self.sample_interval:
            self.sampler = HardwareSampler(self.emitter, self.sample_interval)
            self.sampler.start()

    def step(self, epoch: int, step: int, at: float | None = None) -> bool:
        """A training step just ended (or at ``at``: the monotonic time the device ran it). True
        when the policy says the probe should stop."""
        if self.external == "cancel":
            raise ProbeCancelled("the agent (probe cancelled)")
        first_of_epoch = self.epoch is not None and epoch != self.epoch
        first_ever = self.total_steps == 0
        self.epoch, last = epoch, self._last_index
        self._last_index = step
        outside, self.outside = self.outside, 0.0
        if outside > 0 or self.phase > 1:
            dt = self.emitter.timed("step", at=at, epoch=epoch, step=step, **self._phase_field(),
                                    **({"outside": round(outside, 6)} if outside > 0 else {}))["dt"]
        else:
            dt = self.emitter.step(epoch, step, at)  # the common case, made short
        self.total_steps += 1
        # The run's first step and each later epoch's first step are not steady state: the first
        # carries tracing/compilation, the others the epoch-boundary cost (estimated separately).
        self.policy.observe(dt, steady=not (first_ever or first_of_epoch))
        if not (first_ever or first_of_epoch):
            self._own_steady.append(self.own)
        self.own = 0.0
        if first_of_epoch:
            self.boundaries += 1
            self._maybe_hint(dt)
            if not self.steps_per_epoch and self.boundaries == 1:  # counted, where unknown
                self.plan(steps_per_epoch=last + 1)
                self.steps_per_epoch = last + 1
        if self.stop_requested:
            return True
        if self.external == "stop" and not self.any_stopped:  # (the lead's own `done`, echoed)
            self.stop_requested = True
            self.policy.reason = self.policy.reason or "stopped with the process that decides"
            return True
        if self.waiting_for_boundary:
            if first_of_epoch:
                self._after_boundary()
            elif self.total_steps > self._boundary_by:  # not where the epoch's length put it
                self.stop_requested, self.waiting_for_boundary = True, False
                self.policy.reason += "; went on for an epoch boundary that did not come"
        elif self.policy.should_stop() and not self._wait_for_periodic() \
                and not self._wait_for_epoch_work() \
                and not self._wait_for_epoch() and not self._wait_for_end() \
                and not self._wait_for_early_end():
            left = self._steps_left_in_epoch(step)
            wanted = self.policy.boundaries_wanted
            if self.planned_steps and self.planned_steps <= self.steps_per_epoch:
                wanted = 0  # the whole job is one pass: it has no epoch boundary to time
            cost = None if self.boundaries >= wanted else self.policy.boundary_affordable(
                left, self._boundary_budget())
            if cost is None:
                self.stop_requested = True
            else:
                self.waiting_for_boundary = True
                self._waiting_since = time.monotonic()
                self._boundary_within(left)
                self.emitter.log("info", f"probe: {self.policy.reason}; going on {left} steps "
                                 f"(~{cost:.0f}s) to time an epoch boundary")
        return self.stop_requested

    def _maybe_hint(self, dt: float) -> None:
        """A hint only when measured: this boundary cost far more than a step."""
        if self.boundary_hint is None or self.policy.series.n < 3:
            return
        steady = self.policy.series.mean()
        cost = dt - steady
        if cost > max(1.0, 20 * steady):
            self.log("warning", self.boundary_hint.format(cost=cost, steps=cost / steady),
                     code="boundary-stall")
        self.boundary_hint = None

    def val(self, epoch: int, steps: int, metrics: dict[str, Any] | None = None,
            at: float | None = None) -> None:
        clean = clean_metrics(metrics)  # a History names them val_* (fit()'s History too)
        self.last_metrics.update({k if k.startswith("val_") else f"val_{k}": v
                                  for k, v in clean.items()})
        self.emitter.timed("val", at=at, epoch=epoch, steps=int(steps), metrics=clean,
                           **self._phase_field())

    def epoch_end(self, epoch: int, metrics: dict[str, Any] | None = None) -> None:
        self.epochs_done = max(self.epochs_done, epoch + 1)
        clean = clean_metrics(metrics)
        self.last_metrics.update(clean)
        self.emitter.emit("epoch", epoch=epoch, metrics=clean)

    def log(self, level: str, msg: str, code: str = "") -> None:
        if self.started:
            self.emitter.log(level, msg, code)
        else:  # the launcher takes a process's lines from its `start` on: said after it
            self._pending_logs.append((level, msg, code))  # (fit()'s EarlyStopping warning)

    def _flush_logs(self) -> None:
        while self._pending_logs:
            self.emitter.log(*self._pending_logs.pop(0))

    def plan(self, **fields: Any) -> None:
        """The job's length as the program says it (a `plan` event: epochs, steps, periodic work
        every K steps, and where each was read). Before `start` it waits for it."""
        fields = {k: v for k, v in fields.items() if v is not None and v != ""}
        if self.repeats is not None and any(k in fields for k in ("epochs", "steps")):
            fields = self.repeats.of(fields)
        if self.meta.epochs and self.phase == 1:  # the user's own length wins: said at start
            fields = {k: v for k, v in fields.items() if k not in ("epochs", "steps", "source")}
        if not fields:
            return
        every, n_it = fields.get("every"), fields.get("steps_per_epoch")
        if isinstance(every, int) and every > 1:
            self.every = every
        if isinstance(fields.get("until"), str):
            self.until = fields["until"]
        if isinstance(fields.get("every_epochs"), int):
            # (K, the first epoch the work follows: 0 where `or epoch == 0` names it too)
            k, at, start = (fields["every_epochs"], int(fields.get("every_epochs_at", 0)),
                            int(fields.get("every_epochs_from") or 0))
            self.every_epochs = (k, 0 if fields.get("every_epochs_first")
                                 else start + (at - start) % k)
        if isinstance(fields.get("earliest_epochs"), int):
            self.earliest_epochs = fields["earliest_epochs"]
        if isinstance(fields.get("earliest_steps"), int):
            self.earliest_steps = fields["earliest_steps"]
        if isinstance(fields.get("earliest_pass_steps"), int):
            self.earliest_pass = fields["earliest_pass_steps"]
        if isinstance(n_it, int) and 0 < n_it != self.steps_per_epoch and self.started \
                and self.phase == 1:  # start's N_it corrected (a later phase has its own):
            # the epoch waited for, and a total that was epochs x the old N_it, follow it
            epochs, old = self._plan_epochs, self.steps_per_epoch
            if epochs and old and self.planned_steps == epochs * old and "steps" not in fields:
                fields.update(epochs=epochs, steps=epochs * n_it)
            self.steps_per_epoch = n_it
        if isinstance(fields.get("epochs"), int):
            self._plan_epochs = fields["epochs"]
        if isinstance(fields.get("steps"), int):
            self.planned_steps = fields["steps"]
        elif isinstance(fields.get("epochs"), int) and not (self.meta.epochs and self.phase == 1):
            self.planned_epochs = fields["epochs"]
        if not self.started:
            self._pending_plan.update(fields)
            return
        self.emitter.emit("plan", **fields)

    def trained_to_exit(self) -> None:
        """At the program's exit, a loop that trained to its end (no probe stop; or the last
        phase's, after stopped ones): training was over at its last step, what came after is
        the program's post-training work - the timed `done` that makes it a run seen whole."""
        if self.any_stopped:  # a phase was stopped: training was over when its loop was left
            self.at_exit()
            return
        raised = self.cut_short_by()
        if raised is not None:
            # the error ended training, not its loop: pytorch/tutorials' 'Tensors and
            # autograd' (`a.grad = 0.` raises on PyTorch 2.13) after 1 step of 2 000
            self.mark_done("failed", f"the program raised {type(raised).__name__} at step "
                           f"{self.total_steps}: {raised}", at=self.emitter.last_timed)
            return
        self.mark_done("complete", "training ran to its end", at=self.emitter.last_timed)

    def cut_short_by(self) -> Exception | None:
        """At exit: the uncaught error that ends the program (Python sets ``sys.last_value``)
        where fewer steps were taken than the plan says training has - it ended training, not
        its loop. None otherwise (no error, or no plan known)."""
        raised = getattr(sys, "last_value", None)
        epochs = self._plan_epochs or self.planned_epochs or 0
        planned = self.planned_steps or epochs * self.steps_per_epoch
        short = bool(planned) and self.total_steps < planned
        return raised if isinstance(raised, Exception) and short else None

    def mark_done(self, status: str, reason: str = "", at: float | None = None) -> None:
        """Training is over for now (a fit() returned, the probe stopped it): under the agent a
        timed `done`, after which the program's own post-training work is timed by `end`.
        ``at``: when it was over, if that was earlier (a monotonic time)."""
        if self.sampler is not None and status != "complete":
            self.sampler.stop()
        if status != "complete":
            self.trained = True
        if self.started and not self.memory_said:  # the peaks training reached (memory.py)
            from .memory import say_peaks

            say_peaks(self.emitter)
        if not self.under_agent:
            self.finish(status, reason)
            return
        fields: dict[str, Any] = {"status": status}
        if reason:
            fields["reason"] = reason[:2000]
        # their median: a mean takes the first calls' warm-up (char-RNN's first 30 steps 0.29 ms
        own = statistics.median(self._own_steady) if self._own_steady else 0.0  # 0.035 by 3 000)
        if own > 0:
            fields["hook_ms"] = round(1000 * own, 5)
        self.emitter.timed("done", at=at, **fields)

    def finish_quietly(self) -> None:
        """Training is over and its `done` is out already: the sampler stops, the peaks said."""
        if self.sampler is not None:
            self.sampler.stop()
        if self.started and not self.memory_said:
            from .memory import say_peaks

            say_peaks(self.emitter)

    def finish(self, status: str, reason: str = "") -> None:
        if self.under_agent:  # the agent has the last word, after the program's exit
            if not self.trained:
                self.mark_done(status, reason)
            return
        if self.sampler is not None:
            self.sampler.stop()
        if not self.started:
            # Nothing ran (the script failed before training): still a valid, explicit log.
            self.started = True
            self.emitter.start(self.meta.probe or uuid.uuid4().hex[:12],
                               instance=self.meta.instance, workload=self.meta.workload,
                               batch_size=self.meta.batch(), steps_per_epoch=0,
                               val_steps=0, framework=self.meta.framework, devices=[])
            self._flush_logs()
        self.emitter.end(status, reason)


CURRENT: ProbeSession | None = None  # the agent's session, set by agent_main when it runs


def session_from_env() -> ProbeSession:
    """The agent's session when running under it; else one configured from PROBECAST_* vars.

    Lets a user add ``ProbeCallback()`` or ``StepTimer(...)`` to a script and still be driven by
    ``probecast`` (or run it alone: full run, events on stdout and in $PROBECAST_OUT if set).
    """
    global CURRENT
    if CURRENT is None:
        import sys

        # Under the agent the hook's session lives in the zip's copy of this module; a program
        # importing the installed package must join that session, not start its own.
        for name in ("probecast_agent.probe_session", "probecast.core.agent.probe_session"):
            mod = sys.modules.get(name)
            current = getattr(mod, "CURRENT", None) if mod is not None else None
            if current is not None:
                return current  # type: ignore[no-any-return]
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
