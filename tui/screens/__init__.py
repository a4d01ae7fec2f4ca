"""The app's screens: setup (``setup``, with its memory forecast ``setup_memory`` and its start
``setup_start``), the run (``run``: ranking, probe panels, detail), charts (``charts``), a
probe's own output (``output``) and the small modal dialogs (``dialogs``: confirm, help).
"""
