from __future__ import annotations

import re
from pathlib import Path

import pytest

from probecast.core.run.config import ConfigError, find_config, load_config, parse_config

GOOD = """
[[hosts]]
name = "g5-a"
instance = "g5.xlarge"
address = "10.0.1.12"
user = "ubuntu"
port = 2222
identity_file = "~/.ssh/id_ed25519"
jump = "bastion"
python = "/opt/conda/bin/python"

[[hosts]]
name = "bastion"
address = "bastion.example.org"

[probe]
workload = "cifar-resnet"
batch_sizes = [256, 512, 1024]
epochs = 15
max_steps = 20
concurrency = 4

[prices]
"g5.xlarge" = 0.95
"""


def test_good_config_parses() -> None:
    cfg = parse_config(GOOD, "x.toml")
    g5 = cfg.host("g5-a")
    assert g5 is not None and g5.port == 2222 and g5.jump == "bastion" and g5.kind == "ssh"
    assert cfg.host("bastion").instance == "bastion"  # type: ignore[union-attr]
    assert cfg.probe.batch_sizes == [256, 512, 1024] and cfg.probe.epochs == 15
    assert cfg.probe.max_steps == 20 and cfg.probe.concurrency == 4
    assert cfg.prices == {"g5.xlarge": 0.95}


@pytest.mark.parametrize("text,needles", [
    ("[[hosts]]\nname = 'a'\naddres = 'x'\n", ["x.toml:3", "unknown key", "hosts[0].'addres'", "address"]),
    ("[probe]\nbatch_sizes = 64\n", ["x.toml:2", "probe.batch_sizes", "a list"]),
    ("[probe]\nbatch_sizes = [64, -1]\n", ["probe.batch_sizes", "positive integers"]),
    ("[probe]\nworkload = 'gpt5'\n", ["probe.workload", "mnist-cnn", "probe.command"]),
    ("[probe]\ntarget_ci = 2\n", ["probe.target_ci", "between 0 and 1"]),
    ("[[hosts]]\nname = 'a'\n", ["hosts[0].address is required"]),
    ("[[hosts]]\nname = 'a'\naddress = 'h'\nport = 70000\n", ["x.toml:4", "port must be 1-65535"]),
    ("[[hosts]]\nname = 'a b'\naddress = 'h'\n", ["hosts[0].name", "got 'a b'"]),
    ("[[hosts]]\nname='a'\naddress='h'\n[[hosts]]\nname='a'\naddress='i'\n", ["unique", "a"]),
    ("[prices]\n'g5.xlarge' = 'cheap'\n", ["prices.g5.xlarge", "number"]),
    ("[hosts]\nname = 1\n", ["array of tables"]),
    ("title = 'x'\n", ["unknown top-level key 'title'"]),
    ("[probe\n", ["not valid TOML"]),
])
def test_errors_name_file_line_key_and_what_is_allowed(text: str, needles: list[str]) -> None:
    with pytest.raises(ConfigError) as exc:
        parse_config(text, "x.toml")
    msg = str(exc.value)
    assert msg.startswith("x.toml")
    for n in needles:
        assert n in msg, msg


SECOND_HOST_BAD_PORT = """\
[[hosts]]
name = "a"
address = "10.0.0.1"
port = 22

[[hosts]]
name = "b"
address = "10.0.0.2"
port = 99999
"""


@pytest.mark.parametrize("text,needles", [
    (SECOND_HOST_BAD_PORT, ["x.toml:9:", "hosts[1].port must be 1-65535, got 99999"]),
    ('hosts = ["a", "b"]\n', ["x.toml:1:", "hosts[0]", "[[hosts]] section"]),
    ("prices = 5\n", ["x.toml:1:", "prices must be a table"]),
    ('aws = "yes"\n', ["x.toml:1:", "aws must be a table"]),
    ("[probe]\nbatch_sizes = [64]\ntimeout = nan\n", ["x.toml:3:", "probe.timeout", "got nan"]),
    ("[[hosts]]\nname = 'a'\naddress = 'h'\nprice_per_hour = nan\n", ["x.toml:4:", "price_per_hour"]),
    ("[[hosts]]\nname = 'a'\naddress = 'h'\nconnect_timeout = 0\n", ["x.toml:4:", "connect_timeout", "> 0"]),
    ("[[hosts]]\nname = 'a'\naddress = 'h'\nkeepalive_interval = -1\n", ["x.toml:4:", "keepalive_interval"]),
    ("[probe]\ntimeout = inf\n", ["x.toml:2:", "probe.timeout"]),
])
@pytest.mark.faults('bad config values (types, nan, 0, negative, wrong tables)',
                    checks='file, exact line, key, what is allowed; no traceback')
def test_config_faults_name_the_exact_line_and_never_raise_a_traceback(text: str, needles: list[str]) -> None:
    with pytest.raises(ConfigError) as exc:
        parse_config(text, "x.toml")
    for n in needles:
        assert n in str(exc.value), str(exc.value)


@pytest.mark.faults('config not UTF-8',
                    checks='file named')
def test_a_config_that_is_not_utf8_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.toml"
    bad.write_bytes('[probe]\nworkdir = "caf\xe9"\n'.encode("latin-1"))
    with pytest.raises(ConfigError, match=r"latin1.toml: not UTF-8"):
        load_config(str(bad))


def test_search_order_and_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    cfg = load_config()
    assert cfg.path is None and [h.name for h in cfg.hosts] == ["local"]
    assert cfg.hosts[0].kind == "local" and cfg.probe.max_steps == 30
    home_cfg = tmp_path / "home" / ".config" / "probecast" / "config.toml"
    home_cfg.parent.mkdir(parents=True)
    home_cfg.write_text("[probe]\nbatch_sizes = [32]\n")
    assert find_config() == home_cfg
    (tmp_path / "probecast.toml").write_text("[probe]\nbatch_sizes = [16]\n")
    assert load_config().probe.batch_sizes == [16]
    with pytest.raises(ConfigError, match="nope.toml: no such config file"):
        load_config("nope.toml")


def test_bad_config_is_reported_by_the_cli(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.toml"
    bad.write_text("[probe]\nmax_step = 3\n")
    code, out, err = run_cli("probe", "--config", str(bad), "--headless")
    assert code == 2
    assert f"{bad}:2: unknown key probe.'max_step'" in err and "max_steps" in err


def test_the_readme_config_examples_parse() -> None:
    """The TOML blocks of README and docs/ (config.md holds the reference) are the
    documentation of the format: they must stay valid."""
    import re

    from conftest import ROOT

    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    blocks = [(page.name, block) for page in pages
              for block in re.findall(r"```toml\n(.*?)```", page.read_text(), re.S)]
    assert len([page for page, _ in blocks if page == "config.md"]) >= 3
    for page, block in blocks:
        cfg = parse_config(block, page)
        assert cfg.hosts or cfg.aws is not None or cfg.skypilot is not None


def test_skypilot_section_is_checked_with_file_and_line() -> None:
    cfg = parse_config('[skypilot]\naccelerators = ["A10G:1", "L4:1"]\ninfra = "aws/us-east-1"\n'
                       "use_spot = true\n", "c.toml")
    assert cfg.skypilot is not None and cfg.skypilot.accelerators == ["A10G:1", "L4:1"]
    assert cfg.skypilot.use_spot and cfg.hosts == []  # no implicit local host
    for text, message in [
        ('[skypilot]\naccelerators = []\n', "c.toml:2: skypilot.accelerators must list"),
        ('[skypilot]\naccelerators = ["A10G:one"]\n', "NAME:COUNT"),
        ('[skypilot]\naccelerators = ["L4"]\ninfra = "aws us-east-1"\n', "CLOUD[/REGION[/ZONE]]"),
        ('[skypilot]\naccelerators = ["L4"]\nautodown = 5\n', "unknown key skypilot.'autodown'"),
        ('[skypilot]\naccelerators = ["L4"]\nautodown_minutes = 0\n', "skypilot.autodown_minutes"),
    ]:
        with pytest.raises(ConfigError, match=re.escape(message)):
            parse_config(text, "c.toml")
