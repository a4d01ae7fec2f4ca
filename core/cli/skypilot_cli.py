"""`probe --headless` with ``[skypilot]``: clusters through SkyPilot, probed, torn down."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from ..run.config import Config
from ..run.session import Session
from .common import confirm_launch, say_summary


def probe_on_skypilot(ns: argparse.Namespace, config: Config, session: Session, log_dir: Path,
                      out: TextIO, ranking_out: TextIO, *, run: Callable[[Any], Any],
                      rank: Callable[..., int]) -> int:
    """[skypilot] in the config: one cluster per candidate through SkyPilot, probed over SSH by
    the session (the adaptive probe too), `sky down` whatever happens; priced from SkyPilot's
    catalog per cloud and region. ``run(coroutine)``: how the CLI runs it (interruptible, with
    progress)."""
    from ..cloud.sky_launch import run_skypilot
    from ..cloud.skypilot import SkyPilotError, catalog_offers, worst_case

    sky = config.skypilot
    assert sky is not None
    try:
        offers, unread = {}, set()
        for acc in sky.accelerators:
            offers[acc], failed = catalog_offers(sky, acc)
            unread.update(failed)
    except SkyPilotError as exc:
        print(f"probecast: {exc}", file=sys.stderr)
        return 1
    if unread:
        print(f"probecast: SkyPilot's catalog of {', '.join(sorted(unread))} could not be read "
              "(offline? unknown cloud?): not priced from it", file=sys.stderr)
    worst, unknown = worst_case(sky, offers)
    where = sky.infra or "any cloud SkyPilot can use"
    out.write(f"will launch {len(sky.accelerators)} SkyPilot cluster(s) on {where}: "
              f"{', '.join(sky.accelerators)}{' (spot)' if sky.use_spot else ''}; worst case "
              f"${worst:.2f} (each on its dearest catalog offer until autodown, "
              f"{sky.autodown_minutes} idle min), cap ${sky.max_spend:.2f}\n")
    if unknown:
        print(f"probecast: no price in SkyPilot's catalog for {', '.join(unknown)} on {where}: "
              "the worst case cannot be bounded (check the name, infra or clouds)", file=sys.stderr)
        return 1
    if worst > sky.max_spend:
        print(f"probecast: worst case ${worst:.2f} exceeds skypilot.max_spend "
              f"${sky.max_spend:.2f}: raise it or lower skypilot.autodown_minutes", file=sys.stderr)
        return 1
    if not confirm_launch(ns, "clusters", out):
        return 1
    try:
        sess = run(run_skypilot(session.board, session.probe_settings, sky, log_dir,
                                offers=offers, drive=session.run))
    except SkyPilotError as exc:
        print(f"probecast: {exc}", file=sys.stderr)
        out.write("every cluster asked for was torn down (sky down)\n")
        return 1
    except KeyboardInterrupt:
        out.write("\ninterrupted: clusters torn down (sky down)\n")
        return 130
    for c in sess.clusters:
        if c.error:
            print(f"probecast: {c.accelerators}: {c.error}", file=sys.stderr)
    out.write(f"torn down {len(sess.downed)} SkyPilot cluster(s) of session {sess.session}\n")
    say_summary(session, out)
    logs = [str(p) for p in sorted(log_dir.glob("*.jsonl"))]
    if not logs:
        return 1
    return rank(logs, ns, config, ns.epochs or session.probe_settings.epochs, ranking_out)
