"""Messages of the app: screens ask, the app acts; what changes is said once, as a value."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message

from probecast.core.model.rank.ranking import RankOptions
from probecast.core.run.config import ProbeSettings

if TYPE_CHECKING:
    from probecast.core.run.job import ProbeJob


@dataclass
class StartProbes(Message):
    """The setup screen asks for this probe job to start (core/run/job.py: checked, and its
    launches confirmed, already)."""

    job: ProbeJob
    # the setup's "find batch size": search each host of ``job`` for the largest batch size
    # that fits (core/run/find_batch.py) with these settings, instead of running the job
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
