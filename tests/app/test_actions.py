"""One action registry: bindings, palette, help and README's key table all come from it."""

from __future__ import annotations

import re

from conftest import ROOT
from probecast.tui.actions import ACTIONS, bindings, key_table, palette_entries


def test_readme_key_table_is_the_registry() -> None:
    readme = (ROOT / "README.md").read_text()
    m = re.search(r"<!-- keys:.*?-->\n(.*?)<!-- /keys -->", readme, re.S)
    assert m, "README lost its generated key table markers"
    assert m.group(1) == key_table(), "README's key table drifted: python -m probecast.tui.actions"


def test_every_binding_and_palette_entry_comes_from_the_registry() -> None:
    from probecast.tui.app import ProbecastApp
    from probecast.tui.screens.charts import ChartScreen
    from probecast.tui.screens.run import RunScreen
    from probecast.tui.screens.setup import SetupScreen

    ids = {a.id for a in ACTIONS} | {"weight-down", "weight-up"}
    for cls, scope in ((ProbecastApp, "app"), (RunScreen, "run"), (SetupScreen, "setup"),
                       (ChartScreen, "charts")):
        bound = [b.id for b in cls.BINDINGS]  # type: ignore[union-attr]
        assert bound == [b.id for b in bindings(scope)] and set(bound) <= ids, cls
    app_actions = {f"app.{b.action}" for b in bindings("app")}
    for scope in ("run", "setup", "charts", "output"):
        bound = {b.id for b in [*bindings(scope), *bindings("app")]}
        palette = {action for _, action, _ in palette_entries(bound)}
        assert palette == {b.action for b in bindings(scope)} | app_actions, scope


def test_every_action_has_a_key_and_words() -> None:
    for a in ACTIONS:
        assert a.keys and a.label and a.help, a
