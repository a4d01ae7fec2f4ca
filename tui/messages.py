"""Messages the app's widgets exchange. "Latest value" messages collapse when queued."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message


@dataclass
class RowSelected(Message):
    """The ranking's cursor moved to the probe with this key (latest wins)."""

    key: str | None

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RowSelected)


@dataclass
class StartProbes(Message):
    """The setup screen asks for these probes to start."""

    plan: object  # tui.plan.ProbePlan
