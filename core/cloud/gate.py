"""A launched host's gate: its probes wait here (as their ``PlannedProbe.prep``, the seam
``run_plan`` waits on before each probe) until its launch (``launched.LaunchedHosts``) has the
machine up - or fail with why it could not be had; the configured hosts' probes never wait for
a launch."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from ..run.config import Host
from ..run.runners import ProbeSpec, RunnerStatus

if TYPE_CHECKING:
    from ..run.prepare import HostPrep, Prepared

__all__ = ["HostGate"]


class _Launched:
    """A launched host's probes run as planned, on the machine it turned out to be (the instance
    and price a provider learns at launch: SkyPilot picks them), then as the host's own
    preparation (project copy, setup) says."""

    def __init__(self, host: Host, inner: Prepared | None) -> None:
        self.host, self.inner = host, inner

    def apply(self, spec: ProbeSpec) -> ProbeSpec:
        spec = dataclasses.replace(spec, instance=self.host.instance,
                                   price_per_hour=self.host.price_per_hour)
        return self.inner.apply(spec) if self.inner is not None else spec


class HostGate:
    """A launched host's probes' preparation (``PlannedProbe.prep``, which ``run_plan`` waits on
    before each probe): nothing until the instance is up, then the host's own preparation
    (project copy, setup) if it has one; when the instance cannot be had, its probes fail with
    why. The configured hosts' probes never wait here."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.inner: HostPrep | None = None  # the plan's own preparation of the host
        self._settled = asyncio.Event()
        self._failure: str | None = None
        # a probe has come to the gate: a launch on demand (probe only the contenders) brings
        # the host up only then, so a candidate the plan predicts is never launched
        self.demanded = asyncio.Event()

    def settle(self, failure: str | None) -> None:
        """Up (None), or why not: the waiting probes go on, or fail with it (the first word
        stands)."""
        if not self._settled.is_set():
            self._failure = failure
            self._settled.set()

    @property
    def done(self) -> bool:
        return self._settled.is_set() and (
            self._failure is not None or self.inner is None or self.inner.done)

    @property
    def error(self) -> str | None:
        return self._failure or (self.inner.error if self.inner is not None else None)

    @property
    def prepared(self) -> _Launched | None:
        if not self._settled.is_set() or self._failure is not None:
            return None
        if self.inner is None:
            return _Launched(self.host, None)
        inner = self.inner.prepared
        return _Launched(self.host, inner) if inner is not None else None

    async def watch(self) -> AsyncIterator[RunnerStatus]:
        self.demanded.set()
        await self._settled.wait()
        if self._failure is not None:
            yield RunnerStatus("failed", self._failure)
            return
        if self.inner is not None:
            async for status in self.inner.watch():
                yield status

    async def finish(self, timeout: float = 30.0) -> None:
        if self.inner is not None:
            await self.inner.finish(timeout)

    def summary(self) -> str:
        if self._failure is not None:
            return f"{self.host.name}: {self._failure}"
        return self.inner.summary() if self.inner is not None else f"{self.host.name}: prepared"
