"""AWS: live on-demand and spot prices, GPU facts, and probe hosts launched with guaranteed teardown.

Credentials and endpoints come from boto3's standard chain (environment, profiles, SSO;
AWS_ENDPOINT_URL is honoured). Nothing here runs unless asked: without credentials the app uses
the embedded catalog.

Teardown, in layers: every instance is tagged (probecast:session, probecast:owner), launched with
InstanceInitiatedShutdownBehavior=terminate and a dead-man timer in its user data (it shuts itself
down - and so terminates - at a deadline probecast must keep pushing back); probecast terminates
it when its probes end, on success, failure, cancel or quit; ``probecast cleanup`` finds leftovers.

SkyPilot (skypilot, sky_launch; probecast[skypilot]) launches clusters on any cloud it can use,
with autodown as the dead-man and ``sky down`` on every exit path; gpuhunt_prices reads other
clouds' GPU prices (probecast[gpuhunt]) into the same dated cache.

Both providers (aws_launch.AwsProvider, sky_launch.SkyProvider) hand the probe job
(core/run/job.py) hosts that are planned before they exist and probed as each comes up: the
flow of launched.LaunchedHosts. providers.py makes the session and the providers from a config,
for `probe --headless` and the app alike.

May import: model (prices, catalog) and run (config, SSH, plans, the probe job). Imported by: cli,
the TUI.
"""
