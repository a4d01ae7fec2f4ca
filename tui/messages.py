"""Messages between the app's screens: screens ask, the app acts."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from probecast.core.run.plan import PlannedProbe


@dataclass
class StartProbes(Message):
    """The setup screen asks for these probes to start."""

    plan: list[PlannedProbe]
    concurrency: int
    timeout: float
