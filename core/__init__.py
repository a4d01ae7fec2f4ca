"""probecast's core, one package per stage of the flow (docs/ARCHITECTURE.md):

    agent  -> runs on the probe host, writes events (stdlib + the framework it times)
    model  -> event schema, probe state, estimate, epochs, crossovers, prices, ranking (pure)
    run    -> runners (local, SSH, replay), config, plans, the board and the session
    report -> text tables, exports, chart data, figures
    cloud  -> AWS prices, provisioning with guaranteed teardown, cleanup
    cli    -> the headless command line

Layers, top to bottom: cli, cloud, run | report, model, agent (import-linter checks them).
Nothing here imports the TUI, textual or rich.
"""

__version__ = "0.2.0"
