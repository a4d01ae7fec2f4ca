"""A runner's status updates, between its events."""

from __future__ import annotations

from dataclasses import dataclass

STATUSES = ("pending", "connecting", "uploading", "running", "done", "failed", "stopped")


@dataclass(frozen=True, slots=True)
class RunnerStatus:
    status: str
    detail: str = ""
