"""Every key of the app in one list: the bindings, the command palette, the help screen and
README's key table are all made from it (a test fails when README drifts).

A bastion terminal may have no mouse, so every action has a key.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass

from textual.binding import Binding


@dataclass(frozen=True)
class KeyAction:
    id: str
    keys: str  # Textual key names, comma-separated
    action: str  # the action string, run on the screen of its scope (or the app)
    label: str  # short: the footer
    help: str  # one line: the help screen, the palette, README
    scope: str  # "app", "run", "setup" or "charts"
    shown: str = ""  # how the key is written for people (default: from keys)
    footer: bool = True

    @property
    def display(self) -> str:
        if self.shown:
            return self.shown
        names = {"question_mark": "?", "space": "space", "slash": "/", "escape": "esc",
                 "left_square_bracket": "[", "right_square_bracket": "]", "plus": "+",
                 "minus": "-", "equals_sign": "="}
        return " ".join(f"`{names.get(k, k)}`" for k in self.keys.split(","))

    def binding(self) -> Binding:
        return Binding(self.keys, self.action, self.label, id=self.id, show=self.footer)


ACTIONS: tuple[KeyAction, ...] = (
    KeyAction("toggle-view", "v", "toggle_view", "View",
              "ranking: fastest → cheapest → weighted (the table title says which)", "run"),
    KeyAction("cycle-horizon", "h", "cycle_horizon", "Horizon",
              "horizon: planned epochs → 5 → 10 → 20 → 25", "run"),
    KeyAction("toggle-detail", "d", "toggle_detail", "Detail",
              "detail of the selected row: every term of the estimate, the equation with its "
              "numbers", "run"),
    KeyAction("cycle-workload", "w", "cycle_workload", "Workload",
              "next workload (when logs of several workloads are loaded)", "run"),
    KeyAction("charts", "g", "charts", "Charts",
              "charts: time–cost scatter (Pareto frontier, selected row marked) → runtime vs "
              "planned epochs with the crossings named → runtime vs batch size", "run"),
    KeyAction("weight", "left_square_bracket,right_square_bracket", "weight", "Weight",
              "weighted view: score = w·rel time + (1−w)·rel cost; move w towards cost / time",
              "run", footer=False),
    KeyAction("toggle-setup", "u", "toggle_setup", "Setup time",
              "include each host's measured setup ([probe] setup) in runtime and cost: a fresh "
              "instance pays it", "run", footer=False),
    KeyAction("show-output", "o", "show_output", "Output",
              "the selected probe's program output (prints, progress bars), kept beside its log",
              "run"),
    KeyAction("cancel-probe", "x", "cancel_probe", "Cancel probe",
              "cancel the selected row's probe", "run"),
    KeyAction("export", "e", "export", "Export",
              "export the ranking as CSV, JSON and Markdown (into the session's log directory)",
              "run"),
    KeyAction("pause", "space", "pause", "Pause", "replay: pause / resume", "run"),
    KeyAction("faster", "plus,equals_sign", "speed(2.0)", "Faster", "replay: faster", "run",
              shown="`+`", footer=False),
    KeyAction("slower", "minus", "speed(0.5)", "Slower", "replay: slower", "run", footer=False),
    KeyAction("close-output", "escape,o,q", "close", "Back", "output: back to the ranking",
              "output"),
    KeyAction("next-chart", "g", "next_kind", "Next chart", "charts: next chart", "charts"),
    KeyAction("save-chart", "e", "save", "Save PNG", "charts: save the chart as a PNG", "charts"),
    KeyAction("close-chart", "escape,c", "close", "Back", "charts: back to the ranking", "charts"),
    KeyAction("start", "s", "start", "Start probes", "setup: start the probes", "setup"),
    KeyAction("filter", "slash", "focus_filter", "Filter", "setup: filter the instances", "setup"),
    KeyAction("pick", "space", "toggle_instance", "Pick instance",
              "setup: pick the instance under the cursor", "setup", footer=False),
    KeyAction("find-batch", "f", "toggle_find", "Find batch",
              "setup: find the largest batch size that fits on each picked host (probe, "
              "forecast memory, confirm) instead of probing the chosen batch sizes", "setup"),
    KeyAction("contenders", "c", "toggle_contenders", "Contenders",
              "setup: probe only the contenders ([probe] contenders): a few diverse candidates "
              "first, the rest predicted from them and probed (or launched) only while their "
              "predicted bounds overlap the leader's", "setup", footer=False),
    KeyAction("replay-hint", "r", "replay_hint", "Replay samples",
              "setup: how to replay the sample logs", "setup"),
    KeyAction("palette", "ctrl+p", "command_palette", "Palette",
              "command palette: this screen's actions",
              "app", footer=False),
    KeyAction("quit", "q", "quit", "Quit",
              "quit — asks first while probes run, then stops them (no process is left behind)",
              "app"),
    KeyAction("help", "question_mark", "help", "Help", "help", "app"),
)

# The ranking's arrows are DataTable's own keys; listed for people, not bound here.
ARROWS = ("`↑` `↓`", "move in the ranking (the cursor stays on its row when the order changes)")


def bindings(scope: str) -> list[Binding]:
    out = []
    for a in ACTIONS:
        if a.scope != scope or a.id == "palette":
            continue
        if a.id == "weight":  # one entry for people, two keys with their own arguments
            out += [Binding("left_square_bracket", "weight(-0.1)", "Weight −", id="weight-down",
                            show=False),
                    Binding("right_square_bracket", "weight(0.1)", "Weight +", id="weight-up",
                            show=False)]
            continue
        out.append(a.binding())
    return out


def palette_entries(bound: Container[str]) -> list[tuple[str, str, str]]:
    """(text, action target, key) for the command palette: the actions whose binding ids are in
    ``bound`` - the keys that act on the screen the palette was opened on (commands.py), so it
    offers what can be done there and nothing of the other screens."""
    out = []
    for a in ACTIONS:
        if a.id == "palette":
            continue
        if a.id == "weight":  # its two bindings, each with its own words
            if "weight-down" in bound:
                out.append(("Ranking: weight more on cost", "weight(-0.1)", "["))
            if "weight-up" in bound:
                out.append(("Ranking: weight more on time", "weight(0.1)", "]"))
            continue
        if a.id not in bound:
            continue
        target = f"app.{a.action}" if a.scope == "app" else a.action
        out.append((a.help[0].upper() + a.help[1:], target, a.display.replace("`", "")))
    return out


def key_table() -> str:
    """The Markdown key table of README and the help screen."""
    rows = ["| key | action |", "|---|---|"]
    run = [a for a in ACTIONS if a.scope == "run"]
    for a in run:
        rows.append(f"| {a.display} | {a.help} |")
    rows.append(f"| {ARROWS[0]} | {ARROWS[1]} |")
    for scope in ("output", "charts", "setup", "app"):
        for a in ACTIONS:
            if a.scope == scope:
                rows.append(f"| {a.display} | {a.help} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":  # python -m probecast.tui.actions: the table for README
    print(key_table(), end="")
