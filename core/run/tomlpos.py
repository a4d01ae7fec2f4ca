"""Where a key is in a TOML file: so a config error names the exact line (``[[hosts]]`` number
two's ``port`` is on line 9, not on the first host's line 4).

tomllib keeps no positions, so this reads the text once, tracking the current table (array
tables counted) and recording the line of every ``key = value``. Good enough for hand-written
configs: headers, arrays of tables, plain and quoted keys; inline tables are found by their key.
"""

from __future__ import annotations

import re

Path_ = tuple[str | int, ...]

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"""^\s*("(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_.-]+)\s*=""")


def _split_dotted(name: str) -> list[str]:
    parts = re.findall(r"""("(?:[^"\\]|\\.)*"|'[^']*'|[^.]+)""", name)
    return [p.strip().strip("\"'") for p in parts]


class TomlPositions:
    def __init__(self, text: str) -> None:
        self.lines: dict[Path_, int] = {}
        counts: dict[tuple[str, ...], int] = {}
        table: Path_ = ()
        for number, line in enumerate(text.splitlines(), 1):
            header = _HEADER.match(line)
            if header:
                names = _split_dotted(header.group(2))
                if header.group(1) == "[[":
                    array = tuple(names)
                    index = counts.get(array, 0)
                    counts[array] = index + 1
                    table = (*names, index)
                else:
                    table = tuple(names)
                self.lines.setdefault(table, number)
                continue
            assignment = _KEY.match(line)
            if assignment:
                path = (*table, *_split_dotted(assignment.group(1)))
                self.lines.setdefault(path, number)

    def line(self, path: Path_) -> int | None:
        """The line of the longest known prefix of ``path`` (a key, else its table)."""
        for end in range(len(path), 0, -1):
            found = self.lines.get(path[:end])
            if found is not None:
                return found
        return None


def parse_error_path(where: str) -> Path_:
    """msgspec's ``$.hosts[1].port`` as ("hosts", 1, "port")."""
    out: list[str | int] = []
    for name, index in re.findall(r"\.([^.\[\]]+)|\[(\d+)\]", where):
        out.append(int(index) if index else name)
    return tuple(out)


def dotted(path: Path_) -> str:
    """("hosts", 1, "port") as ``hosts[1].port``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text
