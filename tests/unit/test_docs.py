"""The documentation says what the code does: the CLI reference is the parsers' own --help, the
config reference lists every key the config accepts (and no other), the schema reference every
event kind and field the agent may write, and the links between the pages lead somewhere."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import msgspec

from conftest import ROOT

DOCS = ROOT / "docs"
README = ROOT / "README.md"


def cli_reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cli_reference", ROOT / "scripts" / "cli_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_is_the_help_of_every_command() -> None:
    rendered = cli_reference().render()
    assert (DOCS / "cli.md").read_text(encoding="utf-8") == rendered, (
        "docs/cli.md is not the CLI's --help: run .venv/bin/python scripts/cli_reference.py")


def test_cli_reference_covers_every_subcommand() -> None:
    from probecast.core.cli.main import build_parser

    module = cli_reference()
    progs = [p.prog for p in module.commands(build_parser())]
    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert "probecast probe" in progs and "probecast import mlperf" in progs
    for prog in progs:
        assert f"\n## {prog}\n" in text, prog


def section_keys(text: str) -> dict[str, set[str]]:
    """`## `[section]`` headings of config.md, each with the keys of its table's first column."""
    keys: dict[str, set[str]] = {}
    current: set[str] | None = None
    for line in text.splitlines():
        heading = re.match(r"## `\[{1,2}([a-z.]+)\]{1,2}`$", line)
        if heading:
            current = keys.setdefault(heading.group(1), set())
        elif line.startswith("## "):
            current = None
        elif current is not None and (row := re.match(r"\| `([a-z_]+)` \|", line)):
            current.add(row.group(1))
    return keys


def fields(struct: type[msgspec.Struct]) -> set[str]:
    return {f.name for f in msgspec.structs.fields(struct)}


def test_config_reference_lists_every_key_and_no_other() -> None:
    from probecast.core.run.config import (AwsSettings, ConfigFile, FromEnv, Host,
                                           ProbeSettings)
    from probecast.core.run.config_catalog import CatalogRow
    from probecast.core.run.sky_settings import SkyPilotSettings

    documented = section_keys((DOCS / "config.md").read_text(encoding="utf-8"))
    assert set(documented) >= fields(ConfigFile), "a config section has no heading in config.md"
    for section, struct in (("hosts", Host), ("probe", ProbeSettings), ("probe.env", FromEnv),
                            ("aws", AwsSettings), ("skypilot", SkyPilotSettings),
                            ("catalog", CatalogRow)):
        assert documented[section] == fields(struct), (
            f"docs/config.md [{section}]: undocumented "
            f"{sorted(fields(struct) - documented[section])}, "
            f"not in the config {sorted(documented[section] - fields(struct))}")


def test_schema_reference_names_the_current_version_and_every_field() -> None:
    from probecast.core.agent.schema import KINDS, SCHEMA_VERSION

    schema = (DOCS / "schema.md").read_text(encoding="utf-8")
    assert f"v{SCHEMA_VERSION}" in README.read_text(encoding="utf-8")
    assert f"schema v{SCHEMA_VERSION}" in schema
    for kind in KINDS.values():
        row = re.search(rf"^\| `{kind.name}` \|.*$", schema, re.M)
        assert row, f"docs/schema.md has no row for the `{kind.name}` event"
        for field in kind.fields:
            assert f"`{field.name}`" in row.group(0), f"docs/schema.md: {kind.name}.{field.name}"


def test_readme_starts_with_probing_your_own_command_and_lists_every_sample_log() -> None:
    text = README.read_text(encoding="utf-8")
    first_screen = "\n".join(text.splitlines()[:60])
    assert re.search(r"probecast probe --local .*-- python ", first_screen)
    for folder in sorted(p.name for p in (ROOT / "sample_logs").iterdir() if p.is_dir()):
        assert f"sample_logs/{folder}" in text, f"README does not name sample_logs/{folder}"


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, re.M)}


def test_links_between_readme_and_docs_lead_somewhere() -> None:
    pages = [README, *sorted(DOCS.glob("*.md"))]
    for page in pages:
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # a web address: not checked here
            file, _, anchor = target.partition("#")
            dest = (page.parent / file).resolve() if file else page
            assert dest.exists(), f"{page.relative_to(ROOT)}: link to missing {target}"
            if anchor and dest.suffix == ".md":
                assert anchor in anchors(dest), f"{page.relative_to(ROOT)}: no heading for {target}"
