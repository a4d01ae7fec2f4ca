"""The fault suite as a table: every test marked ``faults`` (a fault injected for real - sshd
variants, tmpfs, signals, moto, bad logs and configs), run, and tabulated for RESULTS.md.

    python benchmarks/faults.py            # runs `pytest -m faults`, prints the markdown table

A fault counts as survived when every one of its cases passed: each test asserts what the user
is told, the exit status, that every received event is in a log ending in `end` (where events
flow), and that no process, directory or instance is left (where one could be). "Data lost" and
"leftovers" are what those assertions found; a failing case is listed under its fault.
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


class Collector:
    def __init__(self) -> None:
        self.meta: dict[str, tuple[str, str]] = {}
        self.outcome: dict[str, str] = {}

    def pytest_collection_modifyitems(self, items: list[Any]) -> None:
        for item in items:
            mark = item.get_closest_marker("faults")
            if mark is not None:
                self.meta[item.nodeid] = (mark.args[0], mark.kwargs.get("checks", ""))

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.when == "call" or report.outcome != "passed":
            if self.outcome.get(report.nodeid) in (None, "passed"):
                self.outcome[report.nodeid] = report.outcome


def main() -> int:
    collector = Collector()
    t0 = time.monotonic()
    code = pytest.main(["-m", "faults", "-q", "-p", "no:cacheprovider", str(ROOT / "tests")],
                       plugins=[collector])
    took = time.monotonic() - t0
    by_fault: dict[str, dict[str, Any]] = defaultdict(lambda: {"cases": 0, "passed": 0,
                                                              "skipped": 0, "failed": []})
    for nodeid, (fault, checks) in collector.meta.items():
        row = by_fault[fault]
        row["checks"] = checks
        row["layer"] = nodeid.split("/")[1]
        row["cases"] += 1
        outcome = collector.outcome.get(nodeid, "not run")
        if outcome == "passed":
            row["passed"] += 1
        elif outcome == "skipped":
            row["skipped"] += 1
        else:
            row["failed"].append(nodeid.split("::")[-1])
    print("\n| fault injected | layer | cases | survived | data lost | leftovers | what is asserted |")
    print("|---|---|---:|---|---|---|---|")
    survived = 0
    for fault, row in by_fault.items():
        ok = not row["failed"] and row["passed"] > 0
        survived += ok
        verdict = "yes" if ok else ("skipped" if not row["failed"] else "NO: " + ", ".join(row["failed"]))
        lost = "0" if ok else "see test"
        print(f"| {fault} | {row['layer']} | {row['cases']} | {verdict} | {lost} | {lost} | "
              f"{row['checks']} |")
    print(f"\n{len(by_fault)} faults, {sum(r['cases'] for r in by_fault.values())} cases: "
          f"{survived} survived; pytest exit {code}; {took:.0f} s")
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
