"""Memory against batch size: what fits where, and which batch size to probe next.

``forecast`` (each probe's peaks, the line through a program's probes, every catalog instance's
verdict with its headroom), ``rows`` (the ranking rows that do not fit) and ``batch_search`` (the
next batch size to probe when finding the largest that fits).

May import: the model's top modules (events, state, pricing).
"""
