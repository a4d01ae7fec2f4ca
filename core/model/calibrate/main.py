"""Calibration: every constant the estimate, its bounds and the decisions ship with
(``calibration.json``), measured on the recorded corpus - and the command that writes it.

    python -m probecast.core.model.calibrate.main [CORPUS ...] [--exclude REGEX] [--write | --check]

Without corpora it measures on the ones the shipped file names (``made_by``), so ``--write``
regenerates calibration.json byte for byte from the committed corpus, and ``--check`` says
whether the shipped file is what this code makes of it. The fits:

- per epoch mechanism (Keras/TensorFlow, PyTorch) - and on a GPU per mechanism with recorded GPU
  runs (``torch-gpu``: calibrate/bounds.fit_device) - the bounds' constants
  (calibrate_bounds.py: the drift and an epoch's lifetime by maximum likelihood, the stall odds,
  the boundaries' costs, the spreads of validation, start-up and post-training work; q by split
  conformal so that 90 % of the runs' real totals lie inside their intervals);
- over every two runs of one program, the decisions' constants (calibrate_pairs.py: rho, kappa,
  the claim threshold).

benchmarks/accuracy.py reports what these constants make of programs they never saw (each
program held out in turn); ``--fit`` there writes the file through ``write`` here.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .bounds import fit_all
from .pairs import fit_pairs
from .runs import Calibrations, Pair, content_digest, evaluate, load_pairs
from ..rank.decisions import PairConstants

SHIPPED = Path(__file__).parents[1] / "calibration.json"
ROOT = Path(__file__).resolve().parents[3]  # the checkout's root: corpora are named from it
# what the shipped file was first measured on, for a file that does not say (made_by)
DEFAULT_CORPORA = ("benchmarks/corpus/runs", "benchmarks/corpus/runs-torch",
                   "benchmarks/corpus/runs-long", "benchmarks/corpus/runs-gpu-h200",
                   "benchmarks/corpus/runs-gpu-h100")
DEFAULT_EXCLUDE = "15ep"  # runs of another length than their probes': not a comparison made
COMMAND = "python -m probecast.core.model.calibrate.main --write"


def corpus_name(path: str) -> str:
    """A corpus folder as calibration.json names it: from the checkout's root where it lies
    inside it (so the name is the same from any working directory), else as given."""
    p = Path(path).resolve()
    try:
        return p.relative_to(ROOT).as_posix()
    except ValueError:
        return Path(path).as_posix()


def load_corpora(corpora: list[str], exclude: str | None) -> tuple[list[Pair], list[Path]]:
    """The pairs of every corpus folder (each a corpus of its own: pairs are compared within
    one) and every log they were read from."""
    used: list[Path] = []
    pairs = [p for d in corpora for p in load_pairs([d], Path(d).name, exclude, used)]
    return pairs, used


def made_by(corpora: list[str], exclude: str | None, pairs: list[Pair],
            used: list[Path]) -> dict[str, Any]:
    """Which code and which corpus made the constants: the corpora, what was left out of them,
    and a content hash of the logs read (calibrate_runs.content_digest)."""
    return {
        "code": "probecast.core.model.calibrate.main.calibrate (calibrate.bounds.fit_all, "
                "calibrate.pairs.fit_pairs)",
        "command": COMMAND,
        "corpora": [corpus_name(d) for d in corpora],
        "exclude": exclude,
        "runs": len(pairs),
        "logs": len(used),
        "logs_sha256": content_digest((corpus_name(str(f)), f) for f in used),
    }


def calibration_data(cals: Calibrations, pc: PairConstants, runs: int) -> dict[str, Any]:
    """calibration.json's ``mechanisms`` and ``pairs`` (bounds.py and decisions.py read them)."""
    return {
        "mechanisms": {m: {k: getattr(c, k) for k in c.__dataclass_fields__ if k != "mechanism"}
                       for m, c in cals.items()},
        "pairs": {"rho_same_host": pc.rho_same_host, "rho_other_host": pc.rho_other_host,
                  "kappa": pc.kappa, "threshold": pc.threshold,
                  "source": f"fit_pairs on {runs} recorded runs"},
    }


def calibrate(corpora: list[str], exclude: str | None) -> dict[str, Any]:
    """calibration.json's content, measured on every program of ``corpora``."""
    pairs, used = load_corpora(corpora, exclude)
    if not pairs:
        raise ValueError(f"no complete full runs in {', '.join(corpora)}")
    cals = fit_all(pairs)
    pc = fit_pairs(evaluate(pairs, cals))
    return {"made_by": made_by(corpora, exclude, pairs, used),
            **calibration_data(cals, pc, len(pairs))}


def render(data: dict[str, Any]) -> str:
    """The file's text: the same data, the same bytes."""
    return json.dumps(data, indent=2) + "\n"


def shipped_inputs(path: Path = SHIPPED) -> tuple[list[str], str | None]:
    """The corpora (from the checkout's root) and the exclusion the shipped file was made from."""
    try:
        made = json.loads(path.read_text()).get("made_by") or {}
    except (OSError, ValueError, AttributeError):
        made = {}
    corpora = made.get("corpora") or list(DEFAULT_CORPORA)
    return [str(ROOT / c) for c in corpora], made.get("exclude", DEFAULT_EXCLUDE)


def describe(data: dict[str, Any]) -> list[str]:
    """The constants in a few lines (what --write prints)."""
    lines = [f"{m}: " + " ".join(f"{k}={v}" for k, v in c.items() if k != "source")
             for m, c in data["mechanisms"].items()]
    pc = data["pairs"]
    lines.append(f"pairs: rho same host {pc['rho_same_host']}, other host "
                 f"{pc['rho_other_host']}, kappa {pc['kappa']}, threshold {pc['threshold']}")
    made = data["made_by"]
    lines.append(f"from {made['runs']} runs ({made['logs']} logs, sha256 "
                 f"{made['logs_sha256'][:12]}) of {', '.join(made['corpora'])}")
    return lines


def write(data: dict[str, Any], path: Path = SHIPPED) -> None:
    path.write_text(render(data))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m probecast.core.model.calibrate.main",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpora", nargs="*", metavar="CORPUS",
                    help="folders of full runs and their probes (default: the shipped file's)")
    ap.add_argument("--exclude", metavar="REGEX",
                    help="leave out logs whose file name matches (default with no corpora: the "
                         "shipped file's)")
    what = ap.add_mutually_exclusive_group()
    what.add_argument("--write", action="store_true", help=f"write {SHIPPED.name} (else: print it)")
    what.add_argument("--check", action="store_true",
                      help=f"exit 1 unless the shipped {SHIPPED.name} is what this makes")
    ns = ap.parse_args(argv)
    corpora, exclude = (ns.corpora, ns.exclude) if ns.corpora else shipped_inputs()
    try:
        data = calibrate(corpora, ns.exclude if ns.exclude is not None else exclude)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    if not (ns.write or ns.check):
        sys.stdout.write(render(data))
        return 0
    print("\n".join(describe(data)))
    if ns.write:
        write(data)
        print(f"wrote {SHIPPED}")
        return 0
    same = SHIPPED.read_text() == render(data)
    print(f"{SHIPPED}: " + ("as this code makes it" if same else
                             f"DIFFERS from what this code makes ({COMMAND} rewrites it)"))
    return 0 if same else 1

if __name__ == "__main__":
    sys.exit(main())
