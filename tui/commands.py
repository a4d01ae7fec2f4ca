"""The command palette: the actions of the screen it was opened on, from the one registry
(actions.py). A bastion terminal may have no mouse, so every action is here and has a key."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Matcher, Provider
from textual.content import Content

from .actions import palette_entries


def highlighted(matcher: Matcher, text: str) -> Content:
    """``text`` as plain content with the query's letters marked. Not Matcher.highlight: that
    reads its candidate as markup, and the words hold brackets ('[probe] setup', the keys
    '[s]', '[/]')."""
    _, offsets = matcher.fuzzy_search.match(matcher.query, text)
    content = Content(text)
    for i in offsets:
        if not text[i].isspace():
            content = content.stylize(matcher.match_style, i, i + 1)
    return content


class ProbecastCommands(Provider):
    def entries(self) -> list[tuple[str, str, str]]:
        """The keys that act on this screen now (its own, its focused widget's and the app's,
        less those its check_action hides, such as pause in a live run), as registry entries:
        (words with the key, action, key)."""
        bound = {b.binding.id for b in self.screen.active_bindings.values() if b.binding.id}
        return [(f"{text}  [{key}]", action, key) for text, action, key in palette_entries(bound)]

    def _command(self, action: str) -> Callable[[], Any]:
        target = action if action.startswith("app.") else f"screen.{action}"
        return partial(self.app.run_action, target, self.screen)

    async def discover(self) -> Hits:  # the palette opened, nothing typed yet
        for text, action, key in self.entries():
            yield DiscoveryHit(Content(text), self._command(action), text=text, help=f"key: {key}")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for text, action, key in self.entries():
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, highlighted(matcher, text), self._command(action), text=text,
                          help=f"key: {key}")
