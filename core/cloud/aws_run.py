"""`probe --headless` on [aws] alone: launch, probe over SSH, keep the dead-man
timer back, terminate - the flow of ``aws_launch.AwsLaunch``, which the app runs too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..model.pricing import Catalog
from ..run.config import AwsSettings
from ..run.session import Session
from .deadman import DEADMAN_FILE
from .aws_launch import AwsProvider
from .provision import Provisioner


async def run_provisioned(session: Session, aws: AwsSettings, ec2: Any, catalog: Catalog,
                          log_dir: Path, *, ssm: Any = None, address_for: Any = None,
                          port: int | None = None,
                          deadman_file: str = DEADMAN_FILE, ssh_timeout: float = 300) -> Provisioner:
    """Launch one instance per type of ``aws.instance_types``, probe them over SSH, terminate
    them whatever happens. Each type is on its own: one that cannot be launched or reached fails
    only its own probes (with why, on the board); AwsError when none came up.

    Each instance's SSH host key is made here and given to it at boot; the session's
    ``known_hosts`` (in the log directory) holds those keys only, and nothing else is trusted -
    no trust on first use. ``address_for(launched) -> address`` overrides the instance's IP
    (tests map instances to local sshd servers). The dead-man deadline is pushed back while
    probes run.
    """
    provider = AwsProvider(aws, catalog, address_for=address_for, port=port,
                           deadman_file=deadman_file, ssh_timeout=ssh_timeout,
                           ec2_client=ec2, ssm_client=ssm)
    launch = provider.launch(list(aws.instance_types), log_dir)
    plan = launch.plan(session.probe_settings)
    await session.run_launched(launch, plan)
    return launch.prov
