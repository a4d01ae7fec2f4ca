"""The own-command form of the command line: --host values read as ssh reads them, the words
after -- as the command, the config it stands for (the one a probecast.toml would give), the
mistakes it refuses, and --save-config's file giving the same plan back."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

import msgspec
import pytest

from probecast.core.cli.common import CliError
from probecast.core.cli.main import parse_command_line
from probecast.core.cli.own_command import own_command_config, split_argv
from probecast.core.run.command_line import (CommandLine, HostSpec, HostSpecError,
                                             command_string, config_toml, host_entries,
                                             parse_host_spec)
from probecast.core.run.config import load_config, parse_config
from probecast.core.run.probe_plan import plan_probes
from probecast.core.run.runners import ProbeSpec

# ---- --host -----------------------------------------------------------------------------------


@pytest.mark.parametrize("text, address, user, port", [
    ("gpu1", "gpu1", None, None),                      # a name, or an ~/.ssh/config alias
    ("ubuntu@gpu1", "gpu1", "ubuntu", None),
    ("gpu1:2222", "gpu1", None, 2222),
    ("ubuntu@10.0.0.5:22", "10.0.0.5", "ubuntu", 22),
    ("ec2-3-8-1-2.eu-west-2.compute.amazonaws.com", "ec2-3-8-1-2.eu-west-2.compute.amazonaws.com",
     None, None),
    ("my_box-2.lab", "my_box-2.lab", None, None),
    ("[::1]:2222", "::1", None, 2222),
    ("me@[fe80::1%eth0]", "fe80::1%eth0", "me", None),
    (" gpu1 ", "gpu1", None, None),
])
def test_host_spec_reads_user_host_and_port_as_ssh_does(text: str, address: str,
                                                        user: str | None, port: int | None) -> None:
    assert parse_host_spec(text) == HostSpec(address=address, user=user, port=port)


@pytest.mark.parametrize("text, says", [
    ("", "needs a host"),
    ("gpu 1", "not [user@]HOST[:PORT]"),
    ("::1", "IPv6 address in brackets: [::1]:22"),
    ("a@b@c", "one @ at most"),
    ("-oProxyCommand=sh", "cannot start with -"),
    ("me@-gpu1", "cannot start with -"),
    ("ssh://gpu1", "not a URL"),
    ("gpu1:", "not [user@]HOST[:PORT]"),
    ("gpu1:0", "port 0 is not 1-65535"),
    ("gpu1:70000", "port 70000 is not 1-65535"),
])
def test_a_host_spec_that_is_not_one_says_why(text: str, says: str) -> None:
    with pytest.raises(HostSpecError, match=r"--host") as exc:
        parse_host_spec(text)
    assert says in str(exc.value)


def test_hosts_are_named_by_address_and_port_and_by_user_where_two_share_them() -> None:
    entries = host_entries([parse_host_spec(s) for s in
                            ("gpu1", "a@box:2222", "b@box:2222", "box:2200", "[::1]:22")])
    assert [e["name"] for e in entries] == ["gpu1", "a@box:2222", "b@box:2222", "box:2200",
                                            "::1:22"]
    assert entries[1] == {"name": "a@box:2222", "address": "box", "user": "a", "port": 2222}
    with pytest.raises(HostSpecError, match="given twice"):
        host_entries([parse_host_spec("u@gpu1"), parse_host_spec("u@gpu1")])


# ---- the words after -- -------------------------------------------------------------------------


def test_argv_splits_at_the_first_double_dash_only() -> None:
    head, words = split_argv(["probe", "--local", "-b", "16", "--", "python", "t.py", "-b", "--",
                              "x"])
    assert head == ["probe", "--local", "-b", "16"]
    assert words == ["python", "t.py", "-b", "--", "x"]  # the command's own options stay its own
    assert split_argv(["probe", "--local"]) == (["probe", "--local"], None)
    assert split_argv(["-b", "8", "--"]) == (["-b", "8"], [])


@pytest.mark.parametrize("argv", [
    ["python", "train.py", "--batch-size", "{batch_size}"],
    ["python", "train.py", "--bs={batch_size}", "--name", "two words", "--quote", "it's"],
    ["torchrun", "--nproc_per_node", "2", "train.py", "--per-device={batch_size}x"],
    ["python", "-c", "import sys; print(sys.argv)", "{batch_size}"],
])
def test_the_command_runs_as_given_with_each_batch_size(argv: list[str]) -> None:
    command = command_string(argv)
    spec = ProbeSpec(key="k", label="k", batch_size=96, command=command)
    assert spec.command_argv() == [w.replace("{batch_size}", "96") for w in argv]


def test_the_placeholder_stays_readable_and_a_whole_quoted_command_is_taken_as_written() -> None:
    assert command_string(["python", "t.py", "--batch-size", "{batch_size}"]) == \
        "python t.py --batch-size {batch_size}"
    assert command_string(["python t.py -b {batch_size}"]) == "python t.py -b {batch_size}"


def ns(*args: str) -> argparse.Namespace:
    return parse_command_line(list(args))


def test_the_command_line_keeps_the_words_after_double_dash_for_the_app_and_probe() -> None:
    parsed = ns("probe", "--host", "gpu1", "-b", "32", "--batch-size", "64", "--", "python",
                "t.py", "--batch-size", "{batch_size}")
    assert parsed.cmd == "probe" and parsed.host == ["gpu1"] and parsed.batch_size == [32, 64]
    assert parsed.command == ["python", "t.py", "--batch-size", "{batch_size}"]
    app = ns("--host", "gpu1", "-b", "32", "--", "python", "t.py")
    assert app.cmd is None and app.command == ["python", "t.py"] and app.batch_size == [32]
    # other commands keep their own `--` (a log file whose name starts with -)
    rank = ns("rank", "--", "-odd.jsonl")
    assert rank.cmd == "rank" and rank.logs == ["-odd.jsonl"] and rank.command is None


@pytest.mark.parametrize("args", [
    ["probe", "--local", "-b", "16", "python", "t.py"],
    ["-b", "16", "python", "t.py"],
    ["probe", "--local", "-b", "16", "python", "t.py", "--batch-size", "{batch_size}"],
])
def test_a_command_without_double_dash_is_refused_saying_where_it_goes(
        args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        ns(*args)
    assert exc.value.code == 2
    assert "the command to probe goes after --" in capsys.readouterr().err


# ---- the config it stands for -------------------------------------------------------------------


def config_of(*args: str, said: list[str] | None = None):  # type: ignore[no-untyped-def]
    return own_command_config(ns(*args), (said if said is not None else []).append)


def test_the_command_line_is_the_config_a_file_would_be(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "probecast.toml").write_text("not = [valid")  # not read: the command line says all
    config = config_of("probe", "--host", "ubuntu@gpu1:2222", "--host", "lab", "-b", "32", "-b",
                       "64", "--max-steps", "12", "--", "python", "train.py", "--batch-size",
                       "{batch_size}")
    assert config.path is None
    assert [(h.name, h.address, h.user, h.port, h.kind, h.instance) for h in config.hosts] == [
        ("gpu1:2222", "gpu1", "ubuntu", 2222, "ssh", "gpu1:2222"),
        ("lab", "lab", None, None, "ssh", "lab")]
    s = config.probe
    assert (s.command, s.batch_sizes, s.max_steps) == (
        "python train.py --batch-size {batch_size}", [32, 64], 12)
    text = (f'[[hosts]]\nname = "gpu1:2222"\naddress = "gpu1"\nuser = "ubuntu"\nport = 2222\n'
            f'[[hosts]]\nname = "lab"\naddress = "lab"\n[probe]\n'
            f'command = "python train.py --batch-size {{batch_size}}"\nbatch_sizes = [32, 64]\n'
            f'max_steps = 12\n')
    from_file = parse_config(text, tmp_path / "same.toml")
    assert from_file.hosts == config.hosts and from_file.probe == config.probe


def test_without_hosts_the_command_runs_here_with_the_default_probe_length() -> None:
    config = config_of("-b", "8", "--", "python", "t.py", "{batch_size}")
    assert [(h.name, h.kind) for h in config.hosts] == [("local", "local")]
    assert config.probe.batch_sizes == [8] and config.probe.max_steps == 30
    assert config_of("probe", "--local", "--workload", "tabular-mlp") is None  # as before


def test_several_batch_sizes_and_no_placeholder_warn_that_every_probe_is_the_same(
        tmp_path: Path) -> None:
    said: list[str] = []
    config_of("-b", "16", "-b", "32", "--", "python", "t.py", said=said)
    assert len(said) == 1 and "every probe would run the same command" in said[0]
    said.clear()
    config_of("-b", "16", "--", "python", "t.py", said=said)  # one probe: nothing to tell apart
    config_of("-b", "16", "-b", "32", "--", "python", "t.py", "{batch_size}", said=said)
    assert said == []
    # the config file's batch sizes, with a command after -- that cannot tell them apart
    cfg = tmp_path / "c.toml"
    cfg.write_text("[probe]\nbatch_sizes = [8, 16]\n")
    config_of("probe", "--config", str(cfg), "--", "python", "t.py", said=said)
    assert any("8, 16 would differ in name only" in line for line in said), said


def test_without_b_the_default_batch_sizes_or_one_probe_and_it_says_which() -> None:
    said: list[str] = []
    config = config_of("--", "python", "t.py", "--batch-size", "{batch_size}", said=said)
    assert config.probe.batch_sizes == [64, 256] and "no -b: probing batch sizes 64 and 256" in said[0]
    said.clear()
    config = config_of("--", "python", "t.py", said=said)  # nothing would tell probes apart
    assert config.probe.batch_sizes == [64] and "one probe per host" in said[0]


@pytest.mark.parametrize("args, says", [
    (["probe", "--local", "--"], "nothing after --"),
    (["probe", "--host", "gpu 1", "--", "python", "t.py"], "--host 'gpu 1'"),
    (["--host", "gpu1", "--config", "x.toml", "--", "python", "t.py"],
     "the hosts come from one place"),
    (["probe", "--host", "gpu1", "--config", "x.toml", "--", "python", "t.py"],
     "not allowed with"),
    (["--host", "gpu1", "--local", "--", "python", "t.py"], "not allowed with"),
    (["probe", "--workload", "mnist-cnn", "--", "python", "t.py"], "probe one of them"),
    (["probe", "--project", "/no/such/dir", "--", "python", "t.py"], "no such directory"),
])
def test_bad_command_lines_are_refused_clearly(args: list[str], says: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    try:
        config_of(*args)
    except CliError as exc:
        assert says in str(exc)
    except SystemExit:  # argparse's own refusal (mutually exclusive options)
        assert says in capsys.readouterr().err
    else:
        pytest.fail(f"accepted: {args}")


def test_config_and_a_command_the_command_wins_and_says_so(tmp_path: Path) -> None:
    cfg = tmp_path / "probecast.toml"
    cfg.write_text('[[hosts]]\nname = "gpu1"\naddress = "10.0.0.1"\nprice_per_hour = 1.5\n'
                   '[probe]\ncommand = "python old.py"\nbatch_sizes = [8]\nsetup = "pip list"\n')
    said: list[str] = []
    config = config_of("probe", "--config", str(cfg), "-b", "64", "--", "python", "new.py",
                       "{batch_size}", said=said)
    assert config.probe.command == "python new.py {batch_size}"
    assert config.probe.batch_sizes == [64] and config.probe.setup == "pip list"
    assert [h.name for h in config.hosts] == ["gpu1"]
    assert len(said) == 1 and "replaces probe.command ('python old.py')" in said[0]


# ---- --save-config -------------------------------------------------------------------------------


def plan_of(config, log_dir: Path) -> list[tuple[object, ...]]:  # type: ignore[no-untyped-def]
    return [(p.host, p.spec, p.log_path) for p in plan_probes(config.hosts, config.probe, log_dir)]


def test_save_config_writes_a_file_that_gives_the_same_plan(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    args = ["--host", "ubuntu@gpu1:2222", "--host", "lab", "-b", "32", "-b", "64",
            "--max-steps", "12", "--", "python", "train.py", "--name", "it's two",
            "--batch-size", "{batch_size}"]
    saved = tmp_path / "probecast.toml"
    code, out, err = run_cli("--save-config", str(saved), *args)  # no `probe`: write, no app
    assert code == 0 and f"config written to {saved}" in err and out == ""
    from_file = load_config(str(saved))
    direct = config_of(*args)
    assert plan_of(from_file, tmp_path) == plan_of(direct, tmp_path)
    assert len(plan_of(direct, tmp_path)) == 4
    assert from_file.path == saved
    text = saved.read_text()
    assert "batch_sizes = [32, 64]" in text and '[[hosts]]\nname = "lab"\naddress = "lab"' in text
    # an existing file is never overwritten: it may hold a user's edits
    code, _, err = run_cli("--save-config", str(saved), "-b", "8", "--", "python", "x.py")
    assert code == 2 and "exists" in err and saved.read_text() == text


def test_save_config_of_this_machine_loads_on_another_python(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    saved = tmp_path / "here.toml"
    code, _, err = run_cli("--save-config", str(saved), "-b", "8", "--", "python", "t.py")
    assert code == 0, err
    text = saved.read_text()
    assert "python =" not in text and "kind" not in text  # derived again where it is loaded
    assert '[[hosts]]\nname = "local"' in text
    loaded = load_config(str(saved))
    assert plan_of(loaded, tmp_path) == plan_of(config_of("-b", "8", "--", "python", "t.py"),
                                                tmp_path)


def test_any_config_is_written_back_as_it_loads(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROBECAST_TEST_TOKEN", "secret")
    text = ('[[hosts]]\nname = "jump"\naddress = "bastion.example"\n'
            '[[hosts]]\nname = "g5-box"\naddress = "10.0.0.2"\njump = "jump"\n'
            'instance = "g5.xlarge"\nprice_per_hour = 1.006\naccept_new_host_key = true\n'
            '[probe]\ncommand = "python t.py --lr \\"1e-3\\" {batch_size}"\nbatch_sizes = [64]\n'
            'target_ci = 0.02\n'
            'env = {HF_TOKEN = {from_env = "PROBECAST_TEST_TOKEN"}, A = "b\\u007f"}\n'
            'workload_args = ["--x", "é"]\n'
            '[prices]\n"p3.2xlarge" = 3.06\n'
            '[aws]\nregion = "eu-west-1"\nami = "ami-1"\ninstance_types = ["g5.xlarge"]\n')
    first = parse_config(text, tmp_path / "a.toml")
    again = parse_config(config_toml(first), tmp_path / "b.toml")
    assert again.hosts == first.hosts and again.probe == first.probe
    assert again.prices == first.prices and again.aws == first.aws


def test_the_written_command_is_a_toml_string_whatever_it_holds() -> None:
    words = ['python', 't.py', '--tag', 'a"b\\c', '--nl', 'x\ny', '{batch_size}']
    cl = CommandLine(command=command_string(words), batch_sizes=[4])
    config = cl.config()
    again = parse_config(config_toml(config))
    assert again.probe.command == config.probe.command
    assert shlex.split(again.probe.command.replace("{batch_size}", "4")) == [
        w.replace("{batch_size}", "4") for w in words]


def test_every_section_of_the_config_is_written_back(tmp_path: Path) -> None:
    """A section added to the config must be written by --save-config too, or a user's
    `--config FILE -- COMMAND --save-config NEW` loses it."""
    from probecast.core.run.config import ConfigFile

    sections = {f.name for f in msgspec.structs.fields(ConfigFile)}
    text = ('[[hosts]]\nname = "gpu1"\naddress = "10.0.0.1"\n[probe]\ncommand = "python t.py"\n'
            '[prices]\nlab = 1.0\n[aws]\nami = "ami-1"\ninstance_types = ["g5.xlarge"]\n'
            '[skypilot]\naccelerators = ["L4:1"]\n')
    if "catalog" in sections:
        text += ('[[catalog]]\nname = "lab-dgx"\ngpu = "NVIDIA H100 80GB HBM3"\ngpus = 8\n'
                 'nodes = 2\ngpu_memory = "81559 MiB"\nprice_per_hour = 40.0\n'
                 '[[catalog]]\nname = "box"\ngpu = "NVIDIA L4"\ngpus = 1\n')
    first = parse_config(text, tmp_path / "a.toml")
    written = config_toml(first)
    again = parse_config(written, tmp_path / "b.toml")
    for section in sections:
        assert getattr(again, section) == getattr(first, section), section
        assert section in ("hosts", "probe") or f"[{section}]" in written, section
