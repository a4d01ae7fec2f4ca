"""The import contracts of pyproject.toml (layers, the agent alone, no cycles) hold."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def test_import_contracts_hold() -> None:
    exe = Path(sys.executable).with_name("lint-imports")
    cmd = [str(exe)] if exe.exists() else [shutil.which("lint-imports") or "lint-imports"]
    r = subprocess.run([*cmd, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 broken" in r.stdout


def test_no_module_over_400_lines() -> None:
    long = [(p.relative_to(ROOT), n) for p in [*(ROOT / "core").rglob("*.py"), *(ROOT / "tui").rglob("*.py")]
            if (n := len(p.read_text().splitlines())) > 400]
    assert not long, long


def test_no_function_over_60_lines_in_core_or_tui() -> None:
    """Each step, term, chart or part of a view is a function of its own that a test can reach."""
    long = []
    for p in [*(ROOT / "core").rglob("*.py"), *(ROOT / "tui").rglob("*.py")]:
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > 60:
                    long.append((str(p.relative_to(ROOT)), node.name, n))
    assert not long, long
