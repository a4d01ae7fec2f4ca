"""What a probe is told about itself: its names, the batch size and epochs it was given, its
price - the `start` event's fields that come from the command line, not from the program."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ProbeMeta:
    probe: str = ""
    instance: str = ""
    host: str = ""
    workload: str = ""
    batch_size: int | None = None  # the value the command was given: it wins
    epochs: int | None = None
    price_per_hour: float | None = None
    framework: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def batch(self, program: int | None = None) -> int:
        """The log's batch size: the value given, else the program's own; 0 - "?" in rankings -
        where neither says one (a full-batch loop: labelled by the app's default it was
        ranked "batch 64")."""
        return int(self.batch_size or program or 0)
