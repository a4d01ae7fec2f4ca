"""The headless command line: ``estimate``, ``rank``, ``plot``, ``stabilize`` (``analyze``),
``probe`` (``probe``), ``prices`` and ``cleanup`` (``cloud``); ``main`` builds the parser.

The app is started through a launcher the console script (``probecast.tui.main``) hands in, so
nothing here imports the TUI. May import: every other stage of core.
"""
