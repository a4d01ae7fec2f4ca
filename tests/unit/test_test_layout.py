"""The test tree itself: every test folder is a layer conftest knows, and no two test modules
share a name (the folders are not packages: pytest imports each module by its bare name, and a
second test_x.py elsewhere stops it collecting the whole suite)."""

from __future__ import annotations

from collections import Counter

from conftest import LAYERS, ROOT


def test_every_test_folder_is_a_layer() -> None:
    folders = {p.parent.name for p in (ROOT / "tests").glob("*/test_*.py")}
    assert folders <= set(LAYERS), folders - set(LAYERS)


def test_no_two_test_modules_share_a_name() -> None:
    names = Counter(p.name for p in (ROOT / "tests").glob("**/test_*.py"))
    assert [n for n, count in names.items() if count > 1] == []
