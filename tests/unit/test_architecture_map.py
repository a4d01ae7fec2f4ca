"""docs/ARCHITECTURE.md's folder map against the tree: every package folder and every module of
core/ and tui/ has its row, and every path the page names exists.

The map is the page's "## The folders" section: the stages' table names folders in its first
column, and a heading that names a folder (### `core/run/`) starts that folder's table, whose rows
name its modules in their first cell. A package's own
``__init__.py`` is named by its folder's heading (its docstring is the package's description).
"""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ROOT

PAGE = ROOT / "docs" / "ARCHITECTURE.md"
MAPPED = ("core", "tui")
# where a path the page names may start: the repository's own top-level folders
TOP = ("core/", "tui/", "tests/", "benchmarks/", "docs/", "scripts/", "sample_logs/")
SOURCES = ("*.py", "*.json", "*.tcss")

HEADING = re.compile(r"^#{3,4} `(?P<folder>[\w/]+/)`")
FIRST_CELL = re.compile(r"^\| `(?P<name>[^`]+)` \|")
TICKED = re.compile(r"`([^`\s]+)`")


def folders_section(text: str) -> str:
    start = text.index("## The folders\n")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def mapped(section: str) -> tuple[set[str], set[str]]:
    """The folders the map has a table for, and the files its rows name (paths from the root)."""
    folders: set[str] = set()
    files: set[str] = set()
    folder: str | None = None
    for line in section.splitlines():
        if (h := HEADING.match(line)) is not None:
            folder = h["folder"]
            folders.add(folder)
        elif line.startswith("#"):
            folder = None  # a heading of something else ends the table's folder
        elif (cell := FIRST_CELL.match(line)) is not None:
            if cell["name"].endswith("/"):  # the stages' table names folders
                folders.add(cell["name"])
            elif folder is not None:
                files.add(folder + cell["name"])
    return folders, files


def tree() -> tuple[set[str], set[str]]:
    """The package folders of core/ and tui/, and their module (and data) files."""
    folders: set[str] = set()
    files: set[str] = set()
    for top in MAPPED:
        for init in (ROOT / top).rglob("__init__.py"):
            folders.add(init.parent.relative_to(ROOT).as_posix() + "/")
        for pattern in SOURCES:
            files |= {p.relative_to(ROOT).as_posix() for p in (ROOT / top).rglob(pattern)
                      if p.name != "__init__.py" and "__pycache__" not in p.parts}
    return folders, files


def named_paths(text: str) -> set[str]:
    """Every `path` of the repository the page names in backticks (a module's attribute -
    `core/run/probe_plan.host_price` - stands for its module)."""
    return {t.rstrip(".,:;") for t in TICKED.findall(text) if t.startswith(TOP)}


def exists(named: str) -> bool:
    if (ROOT / named).exists():
        return True
    folder, _, last = named.rpartition("/")
    module = last.split(".", 1)[0]
    return bool(module) and (ROOT / folder / f"{module}.py").exists()


def test_every_package_and_module_of_core_and_tui_is_in_the_map() -> None:
    in_map, in_rows = mapped(folders_section(PAGE.read_text(encoding="utf-8")))
    folders, files = tree()
    assert not folders - in_map, f"packages with no table in the map: {sorted(folders - in_map)}"
    assert not files - in_rows, f"modules with no row in the map: {sorted(files - in_rows)}"


def test_every_path_the_map_names_exists() -> None:
    text = PAGE.read_text(encoding="utf-8")
    in_map, in_rows = mapped(folders_section(text))
    gone = sorted(p for p in in_map | in_rows if not (ROOT / p).exists())
    assert not gone, f"the map names what the tree does not hold: {gone}"
    missing = sorted(p for p in named_paths(text) if not exists(p))
    assert not missing, f"docs/ARCHITECTURE.md names paths that do not exist: {missing}"


def test_the_map_reader_sees_a_missing_row_and_a_stale_one() -> None:
    """The check can fail: a table without one module's row, and a row for a module that is not
    there, are both seen."""
    section = "## The folders\n\n### `core/run/`\n\n| module | holds |\n|---|---|\n" \
              "| `board.py` | the board |\n| `gone.py` | removed |\n\n### Something else\n" \
              "| `not_a_module.py` | a row under another heading |\n"
    in_map, in_rows = mapped(section)
    assert in_map == {"core/run/"}
    assert in_rows == {"core/run/board.py", "core/run/gone.py"}
    _, files = tree()
    assert "core/run/session.py" in files - in_rows
    assert not exists("core/run/gone.py") and exists("core/run/probe_plan.host_price")


def test_every_path_the_other_docs_name_exists() -> None:
    """The README and docs/ cite modules by path too: a rename that leaves one behind fails."""
    missing = {page.relative_to(ROOT).as_posix(): gone
               for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
               if (gone := sorted(p for p in named_paths(page.read_text(encoding="utf-8"))
                                  if not exists(p)))}
    assert not missing, f"paths named that do not exist: {missing}"
