"""Command palette entries for every action (a bastion terminal may have no mouse)."""

from __future__ import annotations

from functools import partial

from textual.command import Hit, Hits, Provider

from .actions import palette_entries


class ProbecastCommands(Provider):
    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        screen = self.app.screen
        for text, action, key in palette_entries():
            score = matcher.match(text)
            if score > 0:
                target = action if action.startswith("app.") else f"screen.{action}"
                yield Hit(score, matcher.highlight(f"{text}  [{key}]"),
                          partial(self.app.run_action, target, screen),
                          help=f"key: {key}")
