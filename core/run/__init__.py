"""Running probes: where events come from and who holds them.

Owns the runners (``runners``: local subprocess and replay; ``ssh``: asyncssh), the config file
(``config``, ``tomlpos`` for exact error lines), probe plans and scheduling (``plan``), each
host made ready once per session (``prepare``: the user's project - ``project`` what goes,
``project_copy`` the host's copy, sent only what changed - then setup and env), the board
(``board``: every probe's state, O(1) per event), the session (``session``: a board, its
runners and its mode, live or replay - what the app and the CLI are handed) and the probe job
around a live session (``job``: the checks before it, the plan, the run, the ranking and the
summary - what `probe --headless` and the app's start both run).

May import: model, agent. Imported by: cloud, cli, the TUI.
"""
