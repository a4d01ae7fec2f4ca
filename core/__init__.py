"""probecast's core, one package per stage of the flow (docs/ARCHITECTURE.md is the map):

    agent  -> runs on the probe host: launches the user's command, times it, writes events
              (stdlib and the framework it times; shipped alone as one zip)
    model  -> the event schema, a probe's state, the estimate and its bounds, memory against
              batch size, the ranking, MLPerf results as logs, predictions for GPUs nobody
              probed, the constants calibrated on recorded runs (typed; files are its only I/O)
    run    -> runners (local, SSH, replay), the config, probe plans, the board, the session and
              the probe job every front-end runs
    report -> text tables, CSV/JSON/Markdown exports, chart data, PNG/SVG figures
    cloud  -> SkyPilot and AWS launches with guaranteed teardown, gpuhunt's prices, the one
              price lookup
    cli    -> the headless command line

Layers, top to bottom: cli, cloud, run | report, model, agent (import-linter checks them).
Nothing here imports the TUI, textual or rich.
"""

__version__ = "0.2.0"
