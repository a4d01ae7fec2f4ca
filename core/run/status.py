"""A runner's status updates, between its events."""

from __future__ import annotations

from dataclasses import dataclass

# does-not-fit: the program ran out of memory at this batch size (an answer, not a failure)
STATUSES = ("pending", "connecting", "uploading", "running", "done", "failed", "stopped",
            "does-not-fit")


@dataclass(frozen=True, slots=True)
class RunnerStatus:
    status: str
    detail: str = ""
