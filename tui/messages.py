"""Messages of the app: screens ask, the app acts; what changes is said once, as a value."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message

from probecast.core.model.ranking import RankOptions
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


@dataclass
class RankingViewChanged(Message):
    """The run screen's view of the ranking changed (fastest/cheapest/weighted, the weight, the
    horizon, the workload, setup time): the table and its title are redrawn for ``options``.

    A latest value: one key can change two things (``]`` sets the weight and the weighted
    view), and the queued duplicate collapses, so the ranking is made once."""

    options: RankOptions

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RankingViewChanged)


@dataclass
class ChartSaved(Message):
    """A chart export finished in its worker thread: the file, or why none was written."""

    path: Path | None
    problem: str = ""
