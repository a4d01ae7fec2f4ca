"""SkyPilot, AWS and gpuhunt: probe hosts launched on clouds with guaranteed teardown, their
prices, and the one price lookup every command and the app use (``price_lookup``).

SkyPilot (``skypilot``, ``sky_launch``; probecast[skypilot]) launches clusters on any cloud it
can use, with autodown as the dead-man and ``sky down`` on every exit path. AWS (``aws_launch``,
``provision``, ``prices``, ``client``, ``userdata``, ``deadman``): live on-demand and spot prices,
GPU facts, and instances launched with guaranteed teardown - every instance is tagged
(probecast:session, probecast:owner), launched with InstanceInitiatedShutdownBehavior=terminate
and a dead-man timer in its user data (it shuts itself down at a deadline probecast keeps pushing
back); probecast terminates it when its probes end, on success, failure, cancel or quit;
``probecast cleanup`` finds leftovers. Credentials come from boto3's standard chain; nothing here
runs unless asked: without credentials the app uses the embedded catalog. ``gpuhunt_prices``
reads other clouds' GPU prices (probecast[gpuhunt]) into the same dated cache.

Both providers (aws_launch.AwsProvider, sky_launch.SkyProvider) hand the probe job
(core/run/job.py) hosts that are planned before they exist and probed as each comes up, each
behind its gate (``gate``): the flow of launched.LaunchedHosts. ``providers`` makes the session
and the providers from a config, for `probe --headless` and the app alike.

May import: model (prices, catalog) and run (config, SSH, plans, the probe job). Imported by: cli,
the TUI.
"""
