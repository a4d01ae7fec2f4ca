"""The one stand-in probe, for tests that drive the Session, the probe job or the adaptive probe
at the runner factory seam: a real probe's times differ from run to run and machine to machine,
and these tests compare rankings number for number or need a step time that follows an instance.
Tests of the runners themselves use real ones (tests/e2e)."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from probecast.core.model.events import End, Init, Start, Step
from probecast.core.run.runners import ProbeSpec, RunnerItem, RunnerStatus


@dataclass
class SteppingProbe:
    """A probe whose every number follows from its spec and these fields: start-up ``init_s``,
    then ``spec.max_steps`` steps (30 where unset, as the probe settings' default) of ``step_s``
    each, off by up to ``noise`` either way. The noise comes from a generator seeded by the
    probe's key and length, so the same probe run twice gives the same numbers and a longer
    re-probe other ones. It ends as the agent's stop policy ends a probe: ``probe-done``."""

    spec: ProbeSpec
    step_s: float
    noise: float = 0.0
    init_s: float = 1.0
    steps_per_epoch: int = 1000
    epochs: int = 10
    log: Path | None = None  # where to leave a log file, as a real runner does

    async def ready(self) -> None:
        """Called before the probe starts; a test's subclass holds it back here."""

    async def stream(self) -> AsyncIterator[RunnerItem]:
        await self.ready()
        s = self.spec
        rng = random.Random(f"{s.key}-{s.max_steps}")
        if self.log is not None:
            self.log.write_text("{}\n")
        yield RunnerStatus("running")
        yield Start(0.0, probe=s.key, instance=s.instance, batch_size=s.batch_size,
                    workload="w", steps_per_epoch=self.steps_per_epoch, epochs=self.epochs,
                    price_per_hour=s.price_per_hour)
        t = self.init_s
        yield Init(t, self.init_s)
        for i in range(s.max_steps or 30):
            dt = self.step_s * (1 + self.noise * rng.uniform(-1, 1))
            t += dt
            yield Step(t, dt, 0, i)
        yield End(t + 0.1, 0.1, "probe-done")
        yield RunnerStatus("done")

    async def cancel(self) -> None:
        pass
