"""Command palette entries for every action (a bastion terminal may have no mouse)."""

from __future__ import annotations

from functools import partial

from textual.command import Hit, Hits, Provider

COMMANDS = (
    ("Ranking: next view (fastest, cheapest, weighted)", "toggle_view", "v"),
    ("Ranking: weight more on cost", "weight(-0.1)", "["),
    ("Ranking: weight more on time", "weight(0.1)", "]"),
    ("Charts: time-cost scatter, crossover, batch curves", "charts", "g"),
    ("Ranking: next horizon (planned, 5, 10, 20, 25 epochs)", "cycle_horizon", "h"),
    ("Show / hide the estimate detail", "toggle_detail", "d"),
    ("Ranking: next workload (when logs of several are loaded)", "cycle_workload", "w"),
    ("Cancel the selected probe", "cancel_probe", "x"),
    ("Export the ranking (CSV, JSON, Markdown)", "export", "e"),
    ("Replay: pause / resume", "pause", "space"),
    ("Replay: faster", "speed(2.0)", "+"),
    ("Replay: slower", "speed(0.5)", "-"),
    ("Help", "app.help", "?"),
    ("Quit", "app.quit", "q"),
)


class ProbecastCommands(Provider):
    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        screen = self.app.screen
        for text, action, key in COMMANDS:
            score = matcher.match(text)
            if score > 0:
                target = action if action.startswith("app.") else f"screen.{action}"
                yield Hit(score, matcher.highlight(f"{text}  [{key}]"),
                          partial(self.app.run_action, target, screen),
                          help=f"key: {key}")
