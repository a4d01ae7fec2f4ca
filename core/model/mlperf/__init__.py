"""MLPerf Training results read as real files hold them, turned into probecast logs.

``log`` (``:::MLLOG`` lines: rank prefixes, repeats, glued program output, placeholders),
``runs`` (one run as a schema-v4 log of timed blocks and evaluations) and ``cut`` (a run's start,
kept as a probe would have seen it).

May import: the model's top modules (events, pricing, units).
"""
