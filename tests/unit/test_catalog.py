"""The embedded catalog: today's instances with dated, sourced prices, newest GPUs first, the
dissertation's rows kept at the end, and a price nobody could verify said so - in the catalog,
in `probecast prices` (text and JSON) and through every reader of the catalog."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from probecast.core.model.pricing import (LISTED, UNVERIFIED, Catalog, InstanceType,
                                          generation_rank, newest_first)

CATALOG = Path(__file__).parents[2] / "core" / "model" / "catalog.json"
TODAY = {
    "aws": ["p6-b200.48xlarge", "p5en.48xlarge", "p5e.48xlarge", "p5.48xlarge", "p4de.24xlarge",
            "p4d.24xlarge", "g6.xlarge", "g6.12xlarge", "g6.48xlarge", "g6e.xlarge",
            "g6e.12xlarge", "g6e.48xlarge", "g5.xlarge", "g5.12xlarge", "g5.48xlarge",
            "g4dn.xlarge", "g4dn.12xlarge"],
    "gcp": ["a3-highgpu-8g", "a3-megagpu-8g", "a3-ultragpu-8g", "a2-highgpu-1g", "a2-highgpu-8g",
            "a2-ultragpu-1g", "a2-ultragpu-8g", "g2-standard-4", "g2-standard-96"],
    "azure": ["Standard_ND96isr_H100_v5", "Standard_ND96isr_H200_v5",
              "Standard_ND96isr_MI300X_v5"],
}
OLD_GPUS = ("K80", "K520", "M60", "P100")


@pytest.fixture
def no_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`prices` reads price caches under XDG_CACHE_HOME: none here, so the embedded catalog."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def rows() -> list[dict[str, object]]:
    return list(json.loads(CATALOG.read_text())["instances"])


def test_todays_instances_are_there_with_every_field_a_row_needs() -> None:
    by_name = {r["instance"]: r for r in rows()}
    for provider, names in TODAY.items():
        for name in names:
            r = by_name[name]
            assert r["provider"] == provider and r["region"], name
            assert r["gpu_model"] and r["gpu_count"] and r["gpu_memory_gb"], name
            assert r["vcpus"] and r["memory_gb"] and r["source"] and r["source_url"], name
            assert r["price_status"] in (LISTED, UNVERIFIED), name


def test_a_listed_price_has_its_date_and_page_and_an_unverified_one_says_so() -> None:
    for r in rows():
        if r["price_date"] == "2021-02":  # the dissertation's tables are their own source
            continue
        if r["price_status"] == LISTED:
            assert r["price_per_hour"] and re.fullmatch(r"\d{4}-\d\d(-\d\d)?", str(r["price_date"]))
            assert str(r["source_url"]).startswith("https://"), r["instance"]
        else:
            assert r["price_status"] == UNVERIFIED, r["instance"]
            assert r["price_per_hour"] is None or r["price_date"], r["instance"]


def test_the_dissertations_rows_are_kept_unchanged_at_the_end() -> None:
    all_rows = rows()
    seed = [i for i, r in enumerate(all_rows) if r["price_date"] == "2021-02"]
    assert len(seed) == 19 and seed == list(range(len(all_rows) - 19, len(all_rows)))
    by_name = {r["instance"]: r for r in all_rows}
    assert by_name["p3.2xlarge"]["price_per_hour"] == 3.06
    assert "Malta 2021" in str(by_name["p3.2xlarge"]["source"])


def test_gpu_names_are_written_as_vendors_write_them() -> None:
    cat = Catalog.embedded()
    assert cat.get("p5.48xlarge").gpu_name == "NVIDIA H100 80GB HBM3"  # type: ignore[union-attr]
    assert cat.get("g4dn.xlarge").gpu_name == "Tesla T4"  # type: ignore[union-attr]
    assert cat.get("Standard_ND96isr_MI300X_v5").gpu_name == "AMD Instinct MI300X"  # type: ignore[union-attr]
    assert cat.get("p5.48xlarge").gpus == "8x H100"  # type: ignore[union-attr]  # the short model stays


def test_generations_newest_first_and_names_that_look_alike_kept_apart() -> None:
    order = ["B200", "H200", "H100", "MI300X", "L40S", "L4", "A100", "A10G", "T4", "V100", "K80"]
    assert [generation_rank(m) for m in order] == sorted(generation_rank(m) for m in order)
    assert generation_rank("L4") != generation_rank("L40S")
    assert generation_rank("A10") != generation_rank("A100-80GB")
    assert generation_rank("T4g") == generation_rank("T4")
    # a GPU no pattern knows sits after today's GPUs and before the old ones; no GPU goes last
    assert generation_rank("T4") < generation_rank("RTX4090") < generation_rank("V100")
    assert generation_rank("") > generation_rank("K80")
    rows_ = [InstanceType("b", gpu_model="H100", price_per_hour=9.0),
             InstanceType("a", gpu_model="H100", price_per_hour=None),
             InstanceType("c", gpu_model="K80", price_per_hour=0.1),
             InstanceType("d", gpu_model="H100", price_per_hour=2.0)]
    assert [i.instance for i in newest_first(rows_)] == ["d", "b", "a", "c"]


def test_prices_lists_todays_gpus_first_and_old_ones_after(run_cli, no_caches) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run_cli("prices")
    assert code == 0
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("instance"))
    table = [line for line in lines[header + 1:] if not line.startswith("?")]
    first10 = table[:10]
    assert not any(re.search(rf"\b{gpu}\b", line) for line in first10 for gpu in OLD_GPUS), first10
    gpus = " ".join(line.split()[2] for line in table)
    for gpu in ("H100", "H200", "B200", "L4", "L40S"):
        assert re.search(rf"\b{gpu}\b", gpus), gpu
    assert all(len(line) <= 80 for line in lines)


def test_prices_marks_an_unverified_price_and_json_says_it(run_cli, no_caches) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run_cli("prices")
    line = next(line for line in out.splitlines() if line.startswith("Standard_ND96isr_H200_v5"))
    assert "-?" in line
    assert "?" not in next(line for line in out.splitlines() if line.startswith("p5.48xlarge "))
    assert "unverified" in out.splitlines()[-1]
    code, out, _ = run_cli("prices", "--json")
    by_name = {r["instance"]: r for r in json.loads(out)}
    assert by_name["p5e.48xlarge"]["price_status"] == UNVERIFIED
    assert by_name["p5e.48xlarge"]["price_per_hour"] is None
    assert by_name["p5en.48xlarge"]["price_status"] == LISTED
    assert [r["instance"] for r in json.loads(out)][0] == "p6-b200.48xlarge"


def test_the_price_source_carries_the_doubt_and_a_users_price_clears_it() -> None:
    cat = Catalog.embedded()
    _, source = cat.price("g5.24xlarge")
    assert source.endswith(UNVERIFIED)
    mine = cat.with_prices({"g5.24xlarge": 7.0})
    assert mine.price("g5.24xlarge") == (7.0, "user")
    assert not mine.get("g5.24xlarge").unverified  # type: ignore[union-attr]


def test_an_old_reader_of_the_catalog_ignores_the_new_fields() -> None:
    """A cache written before the new fields, and one with fields a later version adds, read."""
    doc = {"catalog_date": "2024-06-01", "instances": [
        {"instance": "g5.xlarge", "price_per_hour": 1.0, "price_date": "2024-06-01"},
        {"instance": "x.large", "price_per_hour": 2.0, "a_field_from_the_future": 1}]}
    cat = Catalog.from_document(doc, source="cache")
    assert cat.price("g5.xlarge")[0] == 1.0 and not cat.get("g5.xlarge").unverified  # type: ignore[union-attr]
    assert cat.price("x.large")[0] == 2.0
