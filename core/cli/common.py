"""What the headless commands share: errors, reading logs, pricing options, estimate options."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from ..agent.steady import DEFAULT_STATISTIC, STATISTICS
from ..model.estimate.runtime import EQUATIONS
from ..model import logstore
from ..model.logstore import ProbeRecord
from ..model.pricing import BILLING_RULES
from ..model.rank.ranking import EpochPlan, Pricing, RankedRow, Ranking, RankOptions, build_ranking
from ..run.job import load_epoch_plan

if TYPE_CHECKING:
    from ..run.job import ProbeJob


class CliError(Exception):
    """A problem with the command line itself (exit status 2)."""


def warn(msg: str) -> None:
    print(f"probecast: {msg}", file=sys.stderr)


def parse_prices(items: list[str] | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        try:
            if not sep or not name:
                raise ValueError
            out[name.strip()] = float(value)
        except ValueError:
            raise CliError(f"--price wants INSTANCE=USD_PER_HOUR, got {item!r}") from None
    return out


def load_records(paths: list[str]) -> list[ProbeRecord]:
    return logstore.load_records(paths, warn)


def epoch_plan_from(paths: list[str] | None, metric: str = "val_accuracy") -> EpochPlan | None:
    """Methodology 1: N_ep per (workload, batch size) from full-run logs (--epochs-from)."""
    return load_epoch_plan(paths or [], metric, warn)


def options_from(ns: argparse.Namespace, **override: Any) -> RankOptions:
    """RankOptions from the estimate options every analysing command shares."""
    values: dict[str, Any] = dict(
        epochs=ns.epochs, steps=getattr(ns, "steps", None), by=getattr(ns, "by", "time"), weight=getattr(ns, "weight", 0.5),
        use_validation=not ns.no_validation, equation=ns.equation, statistic=ns.statistic,
        epoch_plan=epoch_plan_from(getattr(ns, "epochs_from", None),
                                   getattr(ns, "metric", "val_accuracy")),
        min_accuracy=getattr(ns, "min_accuracy", None), workload=getattr(ns, "workload", None),
        with_setup=getattr(ns, "with_setup", False), predict=predict_names(ns))
    values.update(override)
    return RankOptions(**values)


def predict_names(ns: argparse.Namespace) -> tuple[str, ...]:
    """--predict NAME[,NAME] (repeatable): instances nobody probed, in order, once each."""
    names = [n.strip() for item in getattr(ns, "predict", None) or [] for n in item.split(",")]
    return tuple(dict.fromkeys(n for n in names if n))


def add_predict_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--predict", action="append", metavar="NAME[,NAME]",
                   help="rank these instances nobody probed too: each predicted from the "
                        "workload's rows on other GPUs and the GPU facts, marked as predicted "
                        "(NAME: a catalog instance or a [[catalog]] row of the config)")


def rank_logs(records: list[ProbeRecord], pricing: Pricing, options: RankOptions,
              warn_prices: bool = True) -> Ranking:
    """The shared pipeline on logs, with each problem told once on stderr."""
    ranking = build_ranking([r.candidate() for r in records], pricing, options)
    warn_ranking(ranking, warn_prices)
    return ranking


def warn_ranking(ranking: Ranking, prices: bool = True) -> None:
    """What a ranking left out, and the rows without a price, one line each on stderr."""
    for line in ranking.skipped:
        warn(line)
    if prices:
        warn_unpriced(ranking.rows)


def warn_unpriced(rows: Sequence[RankedRow]) -> None:
    """One line for every row without a price (local probes are free, not unpriced)."""
    missing = [r for r in rows if r.cost_usd is None and r.instance != "local"]
    if not missing:
        return
    instances = ", ".join(sorted({r.instance or "(none)" for r in missing}))
    where = ", ".join(r.path or r.label for r in missing[:3]) + (" …" if len(missing) > 3 else "")
    warn(f"no price for {instances} ({len(missing)} probe(s): {where}) - add "
         "--price INSTANCE=USD_PER_HOUR (or price_per_hour in the config)")


def pricing_from(ns: argparse.Namespace) -> Pricing:
    """The one price lookup (core/cloud/price_lookup.py) with the app's config and this command
    line's --price, --spot, --region and --billing."""
    from ..cloud.price_lookup import pricing_for, region_for
    from ..cloud.prices import cached_spot_prices
    from ..run.config import ConfigError, load_config

    try:
        config = load_config(getattr(ns, "config", None))
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    region = region_for(config, getattr(ns, "region", None))
    spot = bool(getattr(ns, "spot", False))
    if spot and not cached_spot_prices(region):
        warn(f"--spot: no cached spot prices for {region}; run "
             f"`probecast prices --refresh --spot --region {region}` (on-demand used)")
    return pricing_for(config, region=region, cli_prices=parse_prices(ns.price), spot=spot,
                       billing=ns.billing)


def add_estimate_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--epochs", type=float, default=None,
                   help="planned number of epochs N_ep (default: what the program says, the "
                        "log's plan, else 10)")
    p.add_argument("--steps", type=int, default=None,
                   help="the job's total training steps, for jobs measured in steps (wins over "
                        "--epochs; default: what the program says)")
    p.add_argument("--no-validation", action="store_true", help="leave validation out (Eq. 5.4)")
    p.add_argument("--equation", choices=EQUATIONS, default="auto",
                   help="auto: 5.1 when two whole epochs were seen, else 5.3 (5.4 without validation)")
    p.add_argument("--statistic", choices=STATISTICS, default=DEFAULT_STATISTIC,
                   help="steady-state step time statistic (second = the dissertation's 2nd iteration)")
    p.add_argument("--config", default=argparse.SUPPRESS, metavar="FILE",
                   help="prices from this config's [[hosts]] and [prices] (default: the app's: "
                        "./probecast.toml, ~/.config/probecast/config.toml)")
    p.add_argument("--price", action="append", metavar="INSTANCE=USD",
                   help="price per hour for an instance (repeatable); wins over every other "
                        "price (config, cache, catalog, log)")
    p.add_argument("--billing", choices=BILLING_RULES, default=None,
                   help="billing rule for every row (default: the catalog's per instance)")
    p.add_argument("--spot", action="store_true",
                   help="price with the cached spot prices (probecast prices --refresh --spot)")
    p.add_argument("--region", default=None, help="region of the price cache (default us-east-1)")
    p.add_argument("--epochs-from", nargs="+", metavar="FULL_RUN", default=None,
                   help="methodology 1: N_ep per batch size from full runs (where validation "
                        "stabilises, else predicted); Eq. 5.1 where two epochs were seen")
    p.add_argument("--with-setup", action="store_true",
                   help="add each host's measured [probe] setup time to its job and cost (a "
                        "fresh instance pays it; read from <host>.setup.json beside the logs)")
    p.add_argument("--min-accuracy", type=float, default=None,
                   help="leave out batch sizes whose full runs reach less than this accuracy")


def confirm_launch(ns: argparse.Namespace, what: str, out: Any) -> bool:
    """Ask before launching anything billable (--yes skips it; no terminal: refuse, saying so)."""
    if ns.yes:
        return True
    if not sys.stdin.isatty():
        raise CliError(f"launching {what} needs confirmation: add --yes")
    if input("launch them? [y/N] ").strip().lower() in ("y", "yes"):
        return True
    out.write("nothing launched\n")
    return False


def say_summary(job: ProbeJob, out: TextIO) -> None:
    """A probe job's end-of-run lines (those of the app's notification); failures on stderr,
    as every probecast error."""
    for line in job.summary(failures=False):
        out.write(line + "\n")
    for line in job.session.failures():
        print(f"probecast: {line}", file=sys.stderr)
