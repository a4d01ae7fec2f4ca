"""The model: typed functions of the data - what a probe's events say, and what to conclude.

On top: the event schema, its reader and the log writer (``events``), a probe's folded state
(``state``), the typed rows every view reads (``rows``), probe logs on disk (``logstore``), the
price catalog and billing (``pricing``), epochs to accuracy (``epochs``) and GPU memory sizes as
vendors write them (``units``). In stage packages: the runtime estimate and its bounds
(``estimate/``), the ranking and what it may claim (``rank/``), memory against batch size
(``memory/``), MLPerf Training results as probecast logs (``mlperf/``), candidates nobody probed
(``predict/``) and the constants measured on recorded runs (``calibrate/``).

Its only I/O is files: it reads probe logs, MLPerf result files and the catalog.json and
calibration.json shipped beside it; it writes probe logs (``events.EventWriter``, for the
runners' sinks and ``import mlperf``) and calibration.json (``calibrate.main --write``, run by
hand). No network, no processes.

May import: the agent's shared step statistics (``agent.steady``) and the event schema the agent
writes (``agent.schema``). Imported by every other stage.
"""
