"""core must not drag UI or framework modules in: checked in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT


def loaded_after(code: str, top_level: bool = True) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True, text=True, check=True, cwd=ROOT,
    ).stdout
    mods = json.loads(out.strip().splitlines()[-1])
    return {m.split(".")[0] for m in mods} if top_level else set(mods)


EVERY_CORE_MODULE = (
    "import pkgutil, importlib, probecast.core as c\n"
    "for m in pkgutil.walk_packages(c.__path__, 'probecast.core.'):\n"
    "    if not m.name.endswith('__main__'): importlib.import_module(m.name)"
)


def test_core_imports_no_textual_rich_or_tensorflow() -> None:
    mods = loaded_after(EVERY_CORE_MODULE)
    assert not mods & {"textual", "rich", "tensorflow", "keras", "torch"}, mods


def test_installed_names_cannot_collide() -> None:
    """Shipped as probecast.core / probecast.tui: nothing is imported as a bare `core` or `tui`
    (the folders are not on sys.path as packages of their own)."""
    mods = loaded_after(EVERY_CORE_MODULE + "\nimport probecast.tui.main", top_level=False)
    assert "probecast.core.model.events" in mods
    assert not {m for m in mods if m.split(".")[0] in ("core", "tui")}


def test_headless_cli_run_loads_no_ui() -> None:
    mods = loaded_after(
        "from probecast.core.cli.main import main\n"
        "import contextlib, io\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['rank', 'sample_logs/reconstructed-dissertation'])"
    )
    assert not mods & {"textual", "rich", "tensorflow"}


def test_agent_package_is_self_contained() -> None:
    """The agent is shipped alone: it may import only the stdlib and itself."""
    import ast

    stdlib = set(sys.stdlib_module_names)
    allowed = stdlib | {"keras", "tensorflow", "numpy", "torch", "jax",
                        "pynvml"}  # the frameworks it times; NVML where installed (under try)
    for path in (ROOT / "core" / "agent").rglob("*.py"):  # the adapters/ subpackage too
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative: within the agent
                    continue
                names = [node.module or ""]
            else:
                continue
            for n in names:
                assert n.split(".")[0] in allowed, f"{path.relative_to(ROOT)} imports {n}"


def test_every_package_folder_ships() -> None:
    """Each folder of core/ and tui/ with an __init__.py is in pyproject's package list: the
    editable install finds one that is not (it maps the folders), the wheel leaves it out."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {"probecast." + ".".join(init.parent.relative_to(ROOT).parts)
             for top in ("core", "tui") for init in (ROOT / top).rglob("__init__.py")}
    assert found <= listed, sorted(found - listed)
