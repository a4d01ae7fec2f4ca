"""The model: pure, typed functions of the data - no I/O besides reading log files.

Owns the event schema (``events``), a probe's folded state (``state``), the runtime estimate
(``estimate``: Eq. 5.1/5.3/5.4 plus epoch boundaries; ``training`` the equations, ``stalls`` the
boundaries' forecast, ``bounds`` what the estimate cannot know and the calibrated constants),
the decisions between rows (``decisions``), epochs to accuracy (``epochs``), where
candidates trade places (``crossover``), the price catalog (``pricing``) and the ranking pipeline
(``ranking.build_ranking`` -> ``RankedRow``). Reading logs from disk is ``logstore``.

May import: the agent's shared step statistics (``agent.steady``) and the event schema the agent
writes (``agent.schema``). Imported by every other stage.
"""
