from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pytest

from conftest import SAMPLE_LOGS

RECON = SAMPLE_LOGS / "reconstructed-dissertation"
CONTRACT = {"probe", "instance", "batch_size", "epochs", "runtime_s", "runtime_low_s",
            "runtime_high_s", "cost_usd"}


def probe_log(b, tmp: Path, name: str = "x.jsonl", **start):  # type: ignore[no-untyped-def]
    lb = b(**start).init(2.0).steps(0, [5.0] + [0.1] * 29).val(0, 3.0, 10).val(0, 1.0, 10).end()
    return lb.write(tmp / name)


def test_estimate_json_contract(run_cli, log_builder, tmp_path) -> None:  # type: ignore[no-untyped-def]
    p = probe_log(log_builder, tmp_path, instance="p3.2xlarge", epochs=10)
    code, out, err = run_cli("estimate", str(p), "--json", "--billing", "exact")
    assert code == 0, err
    data = json.loads(out)
    assert isinstance(data, list) and len(data) == 1
    obj = data[0]
    assert CONTRACT <= obj.keys()
    assert obj["probe"] == "p1" and obj["instance"] == "p3.2xlarge" and obj["batch_size"] == 256
    assert obj["epochs"] == 10 and obj["epochs_source"] == "planned"
    assert obj["runtime_s"] == pytest.approx(118.9)
    assert obj["runtime_low_s"] <= obj["runtime_s"] <= obj["runtime_high_s"]
    assert obj["cost_usd"] == pytest.approx(3.06 * 118.9 / 3600)
    assert obj["equation"] == "5.3"
    assert [h["epochs"] for h in obj["horizons"]] == [5, 10, 20, 25]
    code, out, _ = run_cli("estimate", str(p), "--json", "--epochs", "20", "--horizons", "1,2")
    obj = json.loads(out)[0]
    assert obj["epochs"] == 20 and obj["epochs_source"] == "user"
    assert [h["epochs"] for h in obj["horizons"]] == [1, 2]


def test_one_price_precedence_price_host_prices_catalog_log(run_cli, log_builder, tmp_path,
                                                             monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """--price, then the host's own price, then [prices], then the (cached or embedded) catalog,
    then the log's own price: core/cloud/price_lookup.py, for every command and the app."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # no refreshed cache here
    known = probe_log(log_builder, tmp_path, "known.jsonl", instance="p3.2xlarge", price_per_hour=1.0)
    unknown = probe_log(log_builder, tmp_path, "mine.jsonl", instance="my-box", price_per_hour=0.25)

    def price(*args: str) -> list[tuple[float, str]]:
        code, out, err = run_cli("estimate", str(known), str(unknown), "--json", *args)
        assert code == 0, err
        return [(o["price_per_hour"], o["price_source"]) for o in json.loads(out)]

    no_config = str(tmp_path / "none.toml")
    (tmp_path / "none.toml").write_text("")
    # the catalog knows p3.2xlarge: it wins over the log; my-box only the log knows
    (catalog, source), log = price("--config", no_config)
    assert catalog == 3.06 and "2021" in source and log == (0.25, "log")
    cfg = tmp_path / "probecast.toml"
    cfg.write_text('[prices]\n"p3.2xlarge" = 2.0\n"my-box" = 0.3\n')
    assert price("--config", str(cfg)) == [(2.0, f"[prices] in {cfg}"), (0.3, f"[prices] in {cfg}")]
    cfg.write_text('[[hosts]]\nname = "mine"\nkind = "local"\ninstance = "my-box"\n'
                   'price_per_hour = 0.4\n[prices]\n"p3.2xlarge" = 2.0\n"my-box" = 0.3\n')
    assert price("--config", str(cfg))[1] == (0.4, f"host mine in {cfg}")
    assert price("--config", str(cfg), "--price", "my-box=0.5")[1] == (0.5, "--price")
    # the top-level --config (as the app takes it) is the same
    code, out, _ = run_cli("--config", str(cfg), "estimate", str(unknown), "--json")
    assert json.loads(out)[0]["price_per_hour"] == 0.4


def test_unknown_instance_has_null_cost_and_a_message(run_cli, log_builder, tmp_path) -> None:  # type: ignore[no-untyped-def]
    p = probe_log(log_builder, tmp_path, instance="my-box")
    code, out, err = run_cli("estimate", str(p), "--json")
    assert code == 0
    assert json.loads(out)[0]["cost_usd"] is None
    assert "my-box" in err and "--price" in err and str(p) in err


@pytest.mark.faults('bad and empty logs among good ones',
                    checks='file named; the good ones estimated')
def test_errors_name_the_file_and_exit_nonzero_only_if_nothing_estimated(run_cli, log_builder, tmp_path) -> None:  # type: ignore[no-untyped-def]
    good = probe_log(log_builder, tmp_path, "good.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    nosteps = log_builder().init(1.0).end("failed").write(tmp_path / "nosteps.jsonl")
    missing = tmp_path / "missing.jsonl"
    code, out, err = run_cli("estimate", str(good), str(empty), str(nosteps), str(missing), "--json")
    assert code == 0
    assert len(json.loads(out)) == 1
    lines = err.strip().splitlines()
    assert any(str(empty) in l and "empty" in l for l in lines)
    assert any(str(nosteps) in l and "no training steps" in l for l in lines)
    assert any(str(missing) in l and "no such file" in l for l in lines)
    code, out, err = run_cli("estimate", str(empty), str(missing))
    assert code != 0


def test_malformed_lines_are_reported_but_estimate_still_made(run_cli, log_builder, tmp_path) -> None:  # type: ignore[no-untyped-def]
    p = probe_log(log_builder, tmp_path)
    with open(p, "a") as fh:
        fh.write("{garbage\n")
    code, out, err = run_cli("estimate", str(p), "--json")
    assert code == 0
    assert "1 malformed line" in err and "line 36" in err
    assert json.loads(out)[0]["malformed_lines"] == 1


def test_rank_json_sorted_with_relative(run_cli) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run_cli("rank", str(RECON), "--epochs", "20", "--json", "--billing", "exact")
    assert code == 0, err
    rows = json.loads(out)
    assert CONTRACT | {"relative", "pareto", "crossovers"} <= rows[0].keys()
    for workload in ("seismic-fcn", "mnist-cnn-dissertation"):  # each job is ranked on its own
        group = [r for r in rows if r["workload"] == workload]
        assert len(group) == 6
        times = [r["runtime_s"] for r in group]
        assert times == sorted(times)
        assert group[0]["relative"] == 1.0 and group[0]["instance"] == "p3.2xlarge"
    code, out, _ = run_cli("rank", str(RECON), "--epochs", "20", "--by", "cost", "--json")
    rows = json.loads(out)
    costs = [r["cost_usd"] for r in rows if r["workload"] == "seismic-fcn"]
    assert costs == sorted(costs)


def test_rank_reproduces_the_dissertation_relative_runtimes(run_cli) -> None:  # type: ignore[no-untyped-def]
    """Malta 2021, Table 5.7 (seismic, batch 256): relative runtime at 5/10/20 epochs."""
    table_5_7 = {"p2.xlarge": (4.07, 4.34, 4.49), "p2.8xlarge": (6.05, 4.81, 4.11),
                 "p2.16xlarge": (9.95, 8.15, 7.12), "p3.2xlarge": (1.0, 1.0, 1.0),
                 "p3.8xlarge": (3.97, 2.56, 1.75), "p3.16xlarge": (4.54, 3.23, 2.48)}
    logs = sorted(str(p) for p in RECON.glob("seismic-fcn-*.jsonl"))
    for i, n in enumerate((5, 10, 20)):
        rows = json.loads(run_cli("rank", *logs, "--epochs", str(n), "--json")[1])
        got = {r["instance"]: r["relative"] for r in rows}
        for inst, rel in table_5_7.items():
            assert got[inst] == pytest.approx(rel[i], rel=0.03), (inst, n)


def test_rank_csv_and_human_output(run_cli) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run_cli("rank", str(RECON), "--csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 12 and "relative" in rows[0]
    code, out, _ = run_cli("rank", str(RECON))
    assert code == 0
    assert "fastest first" in out and "== seismic-fcn ==" in out
    assert "deciding cost: probes $" in out
    assert all(len(line) <= 80 for line in out.splitlines())


def test_prices_lists_the_catalog(run_cli) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run_cli("prices", "--family", "p3,g5")
    assert code == 0
    assert "p3.2xlarge" in out and "g5.xlarge" in out and "g4dn" not in out
    assert all(len(line) <= 80 for line in out.splitlines())


def test_version_and_help_list_every_command(capsys) -> None:  # type: ignore[no-untyped-def]
    from probecast.core.cli.main import main

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith("probecast 0.")
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for cmd in ("replay", "estimate", "rank", "plot", "stabilize", "prices", "cleanup", "probe"):
        assert f"    {cmd} " in out, cmd


def test_every_option_of_every_command_has_help() -> None:
    import argparse

    from probecast.core.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = []
    for name, p in [("probecast", parser), *sub.choices.items()]:
        for action in p._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            if not action.help:
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    assert not missing, missing


def test_replay_without_the_app_says_so(run_cli) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run_cli("replay", str(RECON))
    assert code == 2 and "not available" in err  # core alone: the console script passes the app in


def test_plot_on_a_directory_of_several_workloads_picks_one_and_says_which(run_cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run_cli("plot", str(SAMPLE_LOGS), "--kind", "scatter", "--out",
                             str(tmp_path / "s.png"))
    assert code == 0, err
    assert (tmp_path / "s.png").stat().st_size > 1000
    # the workload with the most priced probes, the others named, one line for missing prices
    assert "plotting 'mnist-cnn-dissertation'" in err or "plotting 'seismic-fcn'" in err
    assert "--workload" in err
    assert err.count("no price") <= 1, err


def test_a_chart_without_prices_says_so_on_the_chart(run_cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    local = SAMPLE_LOGS / "cpu-keras" / "probes"
    code, _, err = run_cli("plot", str(local), "--kind", "scatter", "--workload", "mnist-cnn",
                           "--out", str(tmp_path / "s.svg"))
    assert code == 0, err
    assert "no prices" in (tmp_path / "s.svg").read_text()


@pytest.mark.faults('read-only / missing log directory',
                    checks='said before anything starts')
def test_probe_checks_its_log_directory_before_anything_starts(run_cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        if os.access(ro, os.W_OK):  # root ignores the mode: make a path that cannot be a dir
            target = tmp_path / "file"
            target.write_text("x")
            out_dir = target / "logs"
        else:
            out_dir = ro / "logs"
        code, out, err = run_cli("probe", "--local", "--headless", "--out", str(out_dir))
        assert code == 2 and "cannot write probe logs in" in err and str(out_dir) in err
        assert "logs written" not in out
    finally:
        ro.chmod(0o755)
