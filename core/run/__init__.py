"""Running probes: where events come from, where they go and who holds them.

The runners (``runners``: local subprocess and replay; ``ssh``: asyncssh, bastions included;
``status``: their status updates) and where a probe's streams go (``sinks``: the log, the
program's output). The config (``config``; ``config_words``: validation errors said for a person,
``tomlpos``: their exact lines; ``config_catalog``: ``[[catalog]]`` rows; ``sky_settings``:
``[skypilot]``; ``command_line``: the own-command form as the config it stands for). Probes
planned from hosts x batch sizes and run (``probe_plan``), each host made ready once per session
(``prepare``: the user's project - ``project`` what goes, ``project_copy`` the host's copy, sent
only what changed - then setup and env), the adaptive probe of undecided contenders
(``adaptive``), the batch-size search (``find_batch``), the board (``board``: every probe's
state, O(1) per event), the session (``session``: a board, its runners and its mode, live or
replay - what the app and the CLI are handed) and the probe job around a live session (``job``:
the checks before it, the plan, the run, the ranking and the summary - what `probe --headless`
and the app's start both run).

May import: model, agent. Imported by: cloud, cli, the TUI.
"""
