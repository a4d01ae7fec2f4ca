"""The agent zip carries its modules compiled (bundle.compiled): a probed program's processes
import the hook without compiling it, and an interpreter of another version still imports the
sources beside the bytecode."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from probecast.core.agent.bundle import build_zipapp

pytestmark = pytest.mark.e2e  # a fresh interpreter imports the zip: a subprocess each

SHOW = "import probecast_agent.hook as h; print(h.install.__code__.co_filename)"


def imported_from(pyz: Path) -> str:
    code = f"import sys; sys.path.insert(0, {str(pyz)!r}); {SHOW}"
    r = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_the_hook_is_imported_from_its_bytecode(tmp_path: Path) -> None:
    pyz = build_zipapp(tmp_path / "agent.pyz")
    names = zipfile.ZipFile(pyz).namelist()
    sources = [n for n in names if n.startswith("probecast_agent/") and n.endswith(".py")]
    assert sources and all(n + "c" in names for n in sources)
    assert imported_from(pyz) == "probecast_agent/hook.py"  # compiled here, not at the import


def test_bytecode_of_another_python_falls_back_to_the_sources(tmp_path: Path) -> None:
    pyz = build_zipapp(tmp_path / "agent.pyz")
    other = tmp_path / "other.pyz"
    with zipfile.ZipFile(pyz) as src, zipfile.ZipFile(other, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith(".pyc"):
                data = b"\x00\x00\r\n" + data[4:]  # another interpreter's magic number
            dst.writestr(info, data)
    assert imported_from(other).endswith("other.pyz/probecast_agent/hook.py")  # from source
