"""The one price lookup: what an instance costs per hour, the same for every command and the app.

``probecast rank``, ``estimate``, ``plot``, ``probe --headless``, the app (setup screen, live
board, replay) all price through ``pricing_for``. For an instance, the first of these that has a
price wins:

1. ``--price INSTANCE=USD`` on the command line (estimate, rank, plot): asked for this once;
2. the host's own price: ``price_per_hour`` of a ``[[hosts]]`` entry of that instance (per
   instance, since a log names its instance, not its host: the first such host's);
3. ``[prices]`` in the config, then a ``[[catalog]]`` row's own ``price_per_hour`` (its
   instances are added to the catalog first: config_catalog.py);
4. with ``--spot``, the spot prices cached by ``probecast prices --refresh --spot``;
5. the refreshed cache (``probecast prices --refresh``, while younger than 30 days);
6. the embedded catalog;
7. the log's own price (``start.price_per_hour``): for an instance nothing above knows.

Levels 1-6 are one catalog, layered here; level 7 is ``Pricing.price_for``'s last resort. The
config is the one the app reads (``--config``, ``./probecast.toml``,
``~/.config/probecast/config.toml``); a level's name is the price's ``source`` (the detail view
and ``--json`` show it).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..model.pricing import Catalog, InstanceType
from ..model.rank.ranking import Pricing
from ..run.config import Config
from ..run.config_catalog import with_own_instances
from .prices import cached_spot_prices, current_catalog

DEFAULT_REGION = "us-east-1"


def region_for(config: Config | None, region: str | None = None) -> str:
    """The price cache's region: asked for, else the config's [aws] region, else us-east-1."""
    if region:
        return region
    if config is not None and config.aws is not None and config.aws.region:
        return config.aws.region
    return DEFAULT_REGION


def price_catalog(config: Config | None, *, region: str | None = None,
                  cli_prices: Mapping[str, float] | None = None, spot: bool = False) -> Catalog:
    """The catalog of levels 1-6 above: each level laid over the ones below it."""
    region = region_for(config, region)
    catalog = current_catalog(region)  # 5 over 6
    if spot:
        catalog = _layer(catalog, cached_spot_prices(region), f"spot cache ({region})")
    if config is not None:
        where = f" in {config.path}" if config.path else ""
        catalog = with_own_instances(catalog, config.catalog, where)  # [[catalog]]: one's own
        catalog = _layer(catalog, config.prices, f"[prices]{where}")
        hosts: dict[str, tuple[str, float]] = {}
        for h in config.hosts:
            if h.price_per_hour is not None and h.instance and h.instance not in hosts:
                hosts[h.instance] = (h.name, float(h.price_per_hour))
        for instance, (name, price) in hosts.items():
            catalog = _layer(catalog, {instance: price}, f"host {name}{where}")
    if cli_prices:
        catalog = _layer(catalog, cli_prices, "--price")
    return catalog


def pricing_for(config: Config | None, *, region: str | None = None,
                cli_prices: Mapping[str, float] | None = None, spot: bool = False,
                billing: str | None = None) -> Pricing:
    """How every command and the app price a probe (the precedence above)."""
    return Pricing(price_catalog(config, region=region, cli_prices=cli_prices, spot=spot),
                   billing=billing)


def _layer(catalog: Catalog, prices: Mapping[str, float], source: str) -> Catalog:
    """``catalog`` with these prices over its own; an instance it does not know is added, billed
    exactly (nothing says how its provider rounds)."""
    if not prices:
        return catalog
    rows = {i.instance: i for i in catalog}
    for name, price in prices.items():
        base = rows.get(name) or InstanceType(instance=name, billing="exact")
        rows[name] = base.priced(price, source)
    return Catalog(list(rows.values()), catalog.date, catalog.source)
