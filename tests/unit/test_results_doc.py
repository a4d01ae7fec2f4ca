"""benchmarks/RESULTS.md is a page a newcomer can read: short enough to read, the current figure
of every area in a headline table at the top, one section per question and no history (that is
in git), no issue-number markers - and every pointer into it from the code and docs leads to a
section that exists."""

from __future__ import annotations

import re

from conftest import ROOT

RESULTS = ROOT / "benchmarks" / "RESULTS.md"
MAX_LINES = 700
HEADLINE_WITHIN = 40
# where a section number of RESULTS.md may be cited
CITING = ("core", "tui", "tests", "benchmarks", "docs", "scripts", "README.md")


def text() -> str:
    return RESULTS.read_text(encoding="utf-8")


def prose(markdown: str) -> str:
    """The text a reader reads as words: no fenced or inline code, no link targets, no URLs."""
    markdown = re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", markdown, flags=re.S | re.M)
    markdown = re.sub(r"`[^`\n]*`", "", markdown)
    markdown = re.sub(r"\]\([^)\s]*\)", "]", markdown)
    return re.sub(r"<?https?://\S+", "", markdown)


def headline_table(lines: list[str]) -> list[list[str]]:
    """The rows of the first table in the page's first lines, split into cells (header first)."""
    start = next((i for i, line in enumerate(lines[:HEADLINE_WITHIN])
                  if line.startswith("|") and i + 1 < len(lines)
                  and re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", lines[i + 1].strip())), None)
    assert start is not None, f"no Markdown table in the first {HEADLINE_WITHIN} lines"
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return [rows[0], *rows[2:]]


def test_results_is_short_enough_to_read() -> None:
    n = len(text().splitlines())
    assert n <= MAX_LINES, f"benchmarks/RESULTS.md has {n} lines (at most {MAX_LINES})"


def test_results_opens_with_a_headline_table_of_dated_reproducible_figures() -> None:
    header, *rows = headline_table(text().splitlines())
    assert len(rows) >= 10, "one row per area"
    for column in ("date", "machine", "reproduce"):
        assert column in header, f"the headline table has no {column!r} column: {header}"
    date = header.index("date")
    for row in rows:
        assert len(row) == len(header), row
        assert re.match(r"20\d\d-\d\d-\d\d", row[date]), f"undated row: {row}"


def test_every_benchmark_the_headline_table_names_exists() -> None:
    _, *rows = headline_table(text().splitlines())
    named = {m for row in rows for m in re.findall(r"benchmarks/[\w/]+\.py", " ".join(row))}
    assert named, "the headline table names no benchmark script"
    missing = sorted(n for n in named if not (ROOT / n).is_file())
    assert not missing, f"the headline table names scripts that do not exist: {missing}"


def test_results_keeps_no_history_and_no_issue_numbers() -> None:
    page = text()
    assert "superseded" not in page.lower(), "earlier versions live in git, not in RESULTS.md"
    markers = sorted(set(re.findall(r"#\d{1,3}\b", prose(page))))
    assert not markers, f"issue-number markers in RESULTS.md (name the question): {markers}"


def test_prose_filter_keeps_words_and_drops_code_and_links() -> None:
    """The marker check above sees the words a reader reads, not code or link targets."""
    page = "a #12 b `x #3` [c](https://e.org/#4)\n```\n#5\n```\nd"
    assert re.findall(r"#\d{1,3}\b", prose(page)) == ["#12"]


def test_every_section_cited_from_the_code_and_docs_exists() -> None:
    headings = set(re.findall(r"^#{2,3} (\d+[a-z]?)\. ", text(), flags=re.M))
    cited: dict[str, set[str]] = {}
    for top in CITING:
        root = ROOT / top
        files = [root] if root.is_file() else [
            p for p in root.rglob("*") if p.suffix in (".py", ".md", ".sh")]
        for path in files:
            if path == RESULTS or ".venv" in path.parts:
                continue
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                at = line.find("RESULTS")
                for section in re.findall(r"§(\d+[a-z]?)\b", line[at:] if at >= 0 else ""):
                    cited.setdefault(section, set()).add(str(path.relative_to(ROOT)))
    assert cited, "no file cites a section of RESULTS.md: this check would check nothing"
    missing = {s: sorted(paths) for s, paths in cited.items() if s not in headings}
    assert not missing, f"sections cited but not in benchmarks/RESULTS.md: {missing}"


def test_every_section_is_numbered() -> None:
    """A section is cited by its number (RESULTS §N) from the code and docs; an unnumbered one can
    only be cited by a heading's anchor, which breaks when the heading's words or date change."""
    sections = re.findall(r"^## (.*)$", prose(text()), flags=re.M)
    unnumbered = [s for s in sections if not re.match(r"\d+[a-z]?\. ", s)]
    assert not unnumbered, f"sections of RESULTS.md without a number: {unnumbered}"
