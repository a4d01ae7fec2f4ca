"""The constants the estimate, its bounds and the decisions ship with, measured on the corpus.

``main`` is the command (``python -m probecast.core.model.calibrate.main --write | --check``) that
writes ``core/model/calibration.json``; ``runs`` reads the corpus' probe/full-run pairs, ``bounds``
fits the bounds' constants per epoch mechanism, ``pairs`` the decisions' constants. Only the
command and the benchmarks write; the estimate reads the shipped file.

May import: estimate, rank and the model's top modules.
"""
