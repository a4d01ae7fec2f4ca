"""Memory against batch size: what fits where, and which batch size to probe next.

``forecast`` (each probe's peaks and whether it ran out, the line through a program's probes,
every catalog instance's verdict with its headroom), ``no_fit`` (the ranking rows of batch sizes
that do not fit) and ``batch_search`` (the next batch size to probe when finding the largest that
fits).

May import: the model's top modules (events, state, pricing, rows).
"""
