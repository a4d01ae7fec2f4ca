"""Small modal screens: confirm, help."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Markdown, Static

from probecast.core.model.rank.decisions import PairConstants

from ..actions import key_table


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [Binding("y", "answer(True)", "Yes", id="confirm-yes"),
                Binding("n,escape", "answer(False)", "No", id="confirm-no")]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self.question, id="question")
            with Horizontal(id="buttons"):
                yield Button("Yes (y)", variant="error", id="yes")
                yield Button("No (n)", variant="primary", id="no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


HELP = """\
# probecast

Probes run a few iterations of your training on each host; the **ranking** extrapolates the
full training (Malta 2021, Eq. 5.3, plus the epoch-boundary cost) and settles as data arrives.

{keys}

**rel** is relative to the best row (1.00). **P** is the probability that the leader beats the
row in this view (faster, or cheaper). **★** marks Pareto-optimal rows: no other row is both
faster and cheaper. **bounds** should hold the real total 9 times in 10: they come from the
step time's interval and drift, the epoch boundaries still to come (for Keras, the tf.data
autotuner's stalls) and the start-up and post-training work. **≈** marks a row the leader beats
with under {threshold} probability (undecided: `d` shows the probability and what it rests
on); the ranking's lower frame names the winner or says why there is none yet. A `…` after an
instance: its probe is still running.

Logs of every probe are written as they arrive (see the status line) and replay with
`probecast replay DIR`.
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close", id="help-close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Markdown(HELP.format(keys=key_table(),
                                       threshold=f"{PairConstants.load().threshold:.0%}"))

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)
