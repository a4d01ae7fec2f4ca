"""The headless command line; ``main`` builds the parser.

``analyze``: ``estimate``, ``rank`` (``--predict`` too), ``plot``, ``stabilize`` from saved logs;
``probe``: ``probe --headless``, the probe job (core/run/job.py) - ``own_command`` parses the
own-command form (``[--local | --host ...] [-b N ...] -- COMMAND``), ``batch_cmd`` is
``--find-batch-size``; ``cloud``: ``prices`` and ``cleanup``; ``importer``: ``import mlperf``;
``common``: what they share (errors, reading logs, pricing and estimate options).

The app is started through a launcher the console script (``probecast.tui.main``) hands in, so
nothing here imports the TUI. May import: every other stage of core.
"""
