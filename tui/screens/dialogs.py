"""Small modal screens: confirm, help."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Markdown, Static


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
full training (seeds/001 Eq. 5.3, plus the epoch-boundary cost) and settles as data arrives.

| key | what it does |
|---|---|
| `v` | ranking view: fastest → cheapest → weighted (the title says which) |
| `[` `]` | weighted view: move the weight towards cost / time (score = w·rel time + (1−w)·rel cost) |
| `g` | charts: time–cost scatter, horizon crossover, batch-size curves (`g` again: next; `e`: save PNG; `esc`: back) |
| `h` | horizon: planned epochs → 5 → 10 → 20 → 25 epochs |
| `d` | show/hide the detail of the selected row (terms and equation) |
| `w` | next workload, when logs of several workloads are loaded |
| `↑ ↓` | move in the ranking; the cursor stays on its row when the order changes |
| `x` | cancel the selected row's probe |
| `e` | export the ranking (CSV, JSON, Markdown) |
| `space` | replay: pause / resume |
| `+` / `-` | replay: faster / slower |
| `ctrl+p` | command palette (every action) |
| `?` | this help |
| `q` | quit (asks first while probes run; stops them cleanly) |

**rel** is relative to the best row (1.00). **★** marks Pareto-optimal rows: no other row is both
faster and cheaper. **bounds** come from the 95 % interval of the steady step time and the
spread of the epoch-boundary cost. A `…` after an instance: its probe is still running.

Logs of every probe are written as they arrive (see the status line) and replay with
`probecast replay DIR`.
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close", id="help-close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Markdown(HELP)

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)
