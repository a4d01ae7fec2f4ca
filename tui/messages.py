"""Messages between the app's screens: screens ask, the app acts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

from probecast.core.run.config import ProbeSettings
from probecast.core.run.plan import PlannedProbe

if TYPE_CHECKING:
    from probecast.core.cloud.aws_launch import AwsLaunch


@dataclass
class StartProbes(Message):
    """The setup screen asks for these probes to start."""

    plan: list[PlannedProbe]
    concurrency: int
    timeout: float
    launch: AwsLaunch | None = None  # instances to launch first; their probes are in ``plan``
    # the setup's "find batch size": search each host of ``plan`` for the largest batch size
    # that fits (core/run/find_batch.py) with these settings, instead of probing ``plan``
    find: ProbeSettings | None = None
