"""probecast's Textual app: the ``probecast`` console script (``main``: the app built from a
config, a replay or the command line; ``__main__``), the app (``app``: one Session handed in),
every key in one registry (``actions``, the palette's ``commands``), the app's messages
(``messages``), work done once typing pauses (``debounce``), the screens (``screens/``) and the
widgets they are made of (``widgets/``).

Talks to core only through its public API; never imports TensorFlow.
"""
