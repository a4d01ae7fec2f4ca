"""What a live probe job is built from, for `probe --headless` and the app alike: the session
(priced by the one lookup, with the config's epoch plan) and the config's launch providers
(``[aws]``: AwsProvider, ``[skypilot]``: SkyProvider)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..run.board import Board
from ..run.config import Config, ProbeSettings
from ..run.job import Say, load_epoch_plan
from ..run.session import Session
from .price_lookup import price_catalog, pricing_for

if TYPE_CHECKING:
    from .aws_launch import AwsProvider
    from .sky_launch import SkyProvider


def live_session(config: Config, *, settings: ProbeSettings | None = None,
                 log_dir: Path | None = None, full: bool = False, title: str = "",
                 memory_from: list[str] | None = None, warn: Say | None = None) -> Session:
    """A live session on ``config``: its board priced by the one lookup (as every command and
    the app price), with N_ep per batch size from ``[probe] epochs_from`` when given."""
    plan = load_epoch_plan(config.probe.epochs_from, warn=warn or (lambda line: None),
                           what="probe.epochs_from")
    return Session(Board(pricing_for(config), epoch_plan=plan), config=config,
                   settings=settings, full=full, log_dir=log_dir, title=title,
                   horizons=tuple(config.probe.horizons), memory_from=list(memory_from or []))


def aws_provider(config: Config) -> AwsProvider | None:
    """``[aws]``: instance types launched, priced in its region."""
    if config.aws is None:
        return None
    from .aws_launch import AwsProvider

    return AwsProvider(config.aws, price_catalog(config, region=config.aws.region))


def sky_provider(config: Config) -> SkyProvider | None:
    """``[skypilot]``: one cluster per candidate, priced from SkyPilot's catalog."""
    if config.skypilot is None:
        return None
    from .sky_launch import SkyProvider

    return SkyProvider(config.skypilot)
