"""From estimates to the answer: the ranking pipeline and what it says about its rows.

``ranking`` (``build_ranking`` -> ``RankedRow``, the typed row of ``model/rows.py``: fastest,
cheapest, weighted, per horizon), ``decisions`` (Pareto optimality, which pairs of rows the probes
can tell apart, and how sure) and ``crossover`` (where two candidates trade places as the job
grows).

May import: estimate, memory and the model's top modules.
"""
