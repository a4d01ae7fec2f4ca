"""probecast core: events, statistics, estimates, prices, ranking, runners. No UI imports here."""

__version__ = "0.1.0"
