"""``[[catalog]]`` rows: instances of one's own, added to the catalog the ranking, the memory
forecast and the prediction read; bad values name the file, the line and the key."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from probecast.core.cli.main import main
from probecast.core.cloud.price_lookup import price_catalog, pricing_for
from probecast.core.run.config import ConfigError, parse_config

DATA = Path(__file__).resolve().parents[1] / "data" / "mlperf"
L40S_N2 = DATA / "v4.0/NVIDIA/results/l40s_n2_ngc24.04_pytorch/ssd/result_0.txt"

TWO_ROWS = """\
[[catalog]]
name = "lab-b200"
gpu = "NVIDIA B200"
gpus = 8
nodes = 2
gpu_memory = "183359 MiB"
price_per_hour = 150.0

[[catalog]]
name = "old-box"
gpu = "NVIDIA A100-SXM4-40GB"
gpus = 4
gpu_memory = "40 GB"
"""


def test_rows_are_read_with_their_units_and_gpu() -> None:
    config = parse_config(TWO_ROWS, "lab.toml")
    lab, box = config.catalog
    assert (lab.name, lab.gpus, lab.nodes, lab.gpu_count) == ("lab-b200", 8, 2, 16)
    assert lab.gpu_memory_gb == pytest.approx(183359 / 1024)  # 179.06, not 1024 times that
    assert lab.gpu_key == "B200-SXM-180GB" and lab.price_per_hour == 150.0
    assert (box.nodes, box.gpu_memory_gb, box.gpu_key, box.price_per_hour) == \
        (1, 40.0, "A100-SXM-40GB", None)


def test_the_memory_picks_the_variant_and_defaults_to_the_gpus() -> None:
    config = parse_config('[[catalog]]\nname = "a"\ngpu = "NVIDIA A100"\ngpus = 8\n'
                          'gpu_memory = "81920 MiB"\n'
                          '[[catalog]]\nname = "b"\ngpu = "NVIDIA L40S"\ngpus = 4\n')
    a, b = config.catalog
    assert a.gpu_key == "A100-SXM-80GB" and a.memory_from == "config"
    assert (b.gpu_memory_gb, b.memory_from) == (48.0, "GPU table")


def test_the_rows_join_the_catalog_with_their_price_and_memory(tmp_path: Path) -> None:
    path = tmp_path / "probecast.toml"
    path.write_text(TWO_ROWS)
    config = parse_config(TWO_ROWS, path)
    catalog = price_catalog(config)
    lab = catalog.get("lab-b200")
    assert lab is not None
    assert (lab.gpu_count, lab.gpu_model, lab.provider) == (16, "NVIDIA B200", "own")
    assert lab.gpu_memory_gb == pytest.approx(179.06, abs=0.01)
    price, source = catalog.price("lab-b200")
    assert price == 150.0 and source == f"[[catalog]] in {path}"
    box = catalog.get("old-box")
    assert box is not None and box.price_per_hour is None and box.gpu_memory_gb == 40.0
    assert len(catalog) == len(price_catalog(None)) + 2  # the embedded rows are all still there
    # the ranking and the memory forecast read the catalog of the one price lookup
    assert pricing_for(config).catalog.get("lab-b200") == lab


def test_prices_over_the_row_own_price(tmp_path: Path) -> None:
    text = TWO_ROWS + "\n[prices]\nlab-b200 = 99.5\n"
    config = parse_config(text, tmp_path / "p.toml")
    price, source = price_catalog(config).price("lab-b200")
    assert price == 99.5 and source.startswith("[prices]")


BAD = [
    ('gpu_memory = "80"', 6, ["catalog[0].gpu_memory", "with its unit", "'80'"]),
    ('gpu_memory = "80 parsecs"', 6, ["catalog[0].gpu_memory", "'80 parsecs'"]),
    ('gpu_memory = "0 GB"', 6, ["catalog[0].gpu_memory"]),
    ("gpu_memory = 80", 6, ["catalog[0].gpu_memory", "with its unit", "got 80"]),
    ("gpus = 0", 4, ["catalog[0].gpus"]),
    ('gpus = "eight"', 4, ["catalog[0].gpus", "integer"]),
    ("nodes = -1", 5, ["catalog[0].nodes"]),
    ('gpu = "NVIDIA Z9000"', 3, ["catalog[0].gpu", "no GPU known as 'NVIDIA Z9000'", "H100"]),
    ("price_per_hour = -3", 7, ["catalog[0].price_per_hour"]),
    ('name = "has space"', 2, ["catalog[0].name"]),
    ("gpu_mem = 1", 8, ["unknown key", "gpu_mem", "allowed", "gpu_memory"]),
]


@pytest.mark.parametrize("line, at, needles", BAD)
def test_bad_values_name_file_line_and_key(line: str, at: int, needles: list[str]) -> None:
    rows = ["[[catalog]]", 'name = "lab"', 'gpu = "NVIDIA H100 80GB HBM3"', "gpus = 8",
            "nodes = 2", 'gpu_memory = "80 GB"', "price_per_hour = 40.0"]
    key = line.split("=")[0].strip()
    kept = [r for r in rows if r.split("=")[0].strip() != key]
    kept.insert(at - 1, line)
    with pytest.raises(ConfigError) as err:
        parse_config("\n".join(kept) + "\n", "lab.toml")
    message = str(err.value)
    assert message.startswith(f"lab.toml:{at}: "), message
    for needle in needles:
        assert needle in message, message


def test_a_repeated_name_is_an_error_at_the_second_row() -> None:
    text = TWO_ROWS.replace('name = "old-box"', 'name = "lab-b200"')
    with pytest.raises(ConfigError, match=re.escape("lab.toml:10: catalog[1].name: 'lab-b200'")):
        parse_config(text, "lab.toml")


def test_missing_required_keys_are_named() -> None:
    with pytest.raises(ConfigError, match=r"lab.toml:1: .*gpus"):
        parse_config('[[catalog]]\nname = "x"\ngpu = "NVIDIA L4"\n', "lab.toml")


def test_rank_prices_a_run_on_ones_own_instance(tmp_path: Path) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["import", "mlperf", str(L40S_N2), "--out", str(tmp_path / "runs")]) == 0
    config = tmp_path / "own.toml"
    config.write_text('[[catalog]]\nname = "l40s_n2_ngc24.04_pytorch"\ngpu = "NVIDIA L40S"\n'
                      'gpus = 4\nnodes = 2\ngpu_memory = "46068 MiB"\nprice_per_hour = 12.0\n')
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["rank", str(tmp_path / "runs" / "ssd"), "--config", str(config), "--json"])
    assert code == 0
    (row,) = json.loads(out.getvalue())
    assert row["price_per_hour"] == 12.0 and "[[catalog]]" in row["price_source"]
    assert row["cost_usd"] == pytest.approx(12.0 * row["runtime_s"] / 3600)
