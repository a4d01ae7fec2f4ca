"""`probecast prices --refresh --provider gpuhunt:...` with gpuhunt's real code on catalogs in
its own published format (``<base>/<provider>/version`` and ``<base>/<provider>/<version>/
catalog.zip`` holding ``<provider>.csv``, written by gpuhunt's own ``storage.dump``), served from a
local directory through ``GPUHUNT_CATALOG_URL=file://...``: no network."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

gpuhunt = pytest.importorskip("gpuhunt")

from gpuhunt._internal import storage  # noqa: E402

VERSION = "20261120"


def item(provider: str, name: str, location: str, price: float, gpu: str, count: int = 1,
         mem: float = 24, spot: bool = False):  # type: ignore[no-untyped-def]
    return gpuhunt.CatalogItem(provider=provider, instance_name=name, location=location,
                               price=price, cpu=8 * count, memory=32.0 * count, gpu_count=count,
                               gpu_name=gpu, gpu_memory=mem, spot=spot, disk_size=None,
                               gpu_vendor=gpuhunt.AcceleratorVendor.NVIDIA)


OFFERS = {
    "lambdalabs": [item("lambdalabs", "gpu_1x_a10", "us-west-1", 0.75, "A10"),
                   item("lambdalabs", "gpu_1x_h100_pcie", "us-east-1", 2.49, "H100", mem=80),
                   item("lambdalabs", "gpu_1x_a10", "us-east-1", 0.80, "A10")],
    "runpod": [item("runpod", "NVIDIA L4", "CA-MTL-1", 0.43, "L4"),
               item("runpod", "NVIDIA L4", "CA-MTL-1", 0.22, "L4", spot=True),
               item("runpod", "NVIDIA L4", "CA-MTL-1", 0.44, "L4")],  # dearer duplicate
}


@pytest.fixture
def local_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    base = tmp_path / "gpuhunt-catalogs"
    for provider, items in OFFERS.items():
        d = base / provider / VERSION
        d.mkdir(parents=True)
        (base / provider / "version").write_text(VERSION + "\n")
        csv_path = tmp_path / f"{provider}.csv"
        storage.dump(items, str(csv_path))  # gpuhunt's own writer: its published format
        with zipfile.ZipFile(d / "catalog.zip", "w") as z:
            z.write(csv_path, f"{provider}.csv")
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", base.as_uri())
    monkeypatch.delenv("GPUHUNT_CATALOG_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return base


def test_refresh_reads_gpuhunt_into_the_dated_cache_tagged_by_provider_and_region(
        local_catalog: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    from probecast.core.cloud import gpuhunt_prices, prices

    code, out, err = run_cli("prices", "--refresh", "--provider", "gpuhunt:lambdalabs,runpod")
    assert code == 0, err
    assert "gpuhunt:lambdalabs: 3 GPU offers (0 spot)" in out
    assert "gpuhunt:runpod: 1 GPU offers (1 spot)" in out
    doc = json.loads(gpuhunt_prices.cache_path("runpod").read_text())
    assert doc["catalog_date"] and doc["provider"] == "runpod"
    (row,) = doc["instances"]
    assert row["instance"] == "NVIDIA L4@runpod/CA-MTL-1" and row["price_per_hour"] == 0.43
    assert row["provider"] == "runpod" and row["region"] == "CA-MTL-1" and row["gpu_model"] == "L4"
    assert doc["spot"] == {"NVIDIA L4@runpod/CA-MTL-1": 0.22}
    # the catalog everyone prices with: embedded AWS rows stay, the other clouds' are added
    cat = prices.current_catalog()
    assert cat.price("gpu_1x_a10@lambdalabs/us-west-1")[0] == 0.75
    assert cat.price("gpu_1x_a10@lambdalabs/us-east-1")[0] == 0.80
    assert cat.price("p3.2xlarge")[0] == 3.06 and "gpuhunt" in cat.source
    assert prices.cached_spot_prices("us-east-1")["NVIDIA L4@runpod/CA-MTL-1"] == 0.22
    # `prices` says each provider's date; the gpuhunt rows are listed with --provider
    code, out, _ = run_cli("prices")
    assert "gpuhunt:lambdalabs: 3 offers" in out and "gpuhunt:runpod: 1 offers" in out
    assert "aws (embedded or AWS Pricing API)" in out and "@lambdalabs" not in out
    code, out, _ = run_cli("prices", "--provider", "gpuhunt:lambdalabs")
    assert code == 0 and "gpu_1x_h100_pcie@lambdalabs/us-east-1" in out and "runpod" not in out
    code, out, _ = run_cli("prices", "--provider", "gpuhunt", "--json")
    assert {r["provider"] for r in json.loads(out)} == {"lambdalabs", "runpod"}
    # newest GPU generation first here too; within one, cheapest first
    assert [r["instance"].split("@")[0] for r in json.loads(out)] == [
        "gpu_1x_h100_pcie", "NVIDIA L4", "gpu_1x_a10", "gpu_1x_a10"]


def test_a_log_from_another_cloud_is_ranked_with_its_gpuhunt_price(
        local_catalog: Path, run_cli, log_builder, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run_cli("prices", "--refresh", "--provider", "gpuhunt:lambdalabs")
    b = log_builder(instance="gpu_1x_a10@lambdalabs/us-west-1", steps_per_epoch=100, epochs=2)
    b.init(2.0).steps(0, [0.5] + [0.1] * 29).end()
    log = b.write(tmp_path / "a.jsonl")
    code, out, err = run_cli("rank", str(log), "--json", "--billing", "exact")
    assert code == 0, err
    (row,) = json.loads(out)
    assert row["price_per_hour"] == 0.75 and row["cost_usd"] > 0


def test_unknown_provider_and_nothing_cached_are_one_line(local_catalog: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run_cli("prices", "--refresh", "--provider", "gpuhunt:nosuchcloud")
    assert code == 1 and "no offline catalog for nosuchcloud" in err
    code, _, err = run_cli("prices", "--provider", "gpuhunt:runpod")
    assert code == 1 and "--refresh --provider gpuhunt:runpod" in err
    code, _, err = run_cli("prices", "--provider", "skypilot")
    assert code == 1 and "only gpuhunt" in err
    # a provider gpuhunt knows but whose catalog is not there (offline): said, nothing cached
    code, _, err = run_cli("prices", "--refresh", "--provider", "gpuhunt:aws")
    assert code == 1 and "could not load the catalog of aws" in err
