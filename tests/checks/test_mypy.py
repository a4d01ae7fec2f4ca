"""mypy --strict over core/ (pyproject [tool.mypy]): types are part of the contract."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ROOT


@pytest.mark.timeout(660)  # a cold mypy cache on a small machine
def test_mypy_strict_core() -> None:
    r = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout[-4000:]
