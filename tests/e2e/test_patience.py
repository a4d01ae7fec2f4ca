"""A PyTorch loop that stops itself once its patience runs out (tests/e2e/torch_scripts/
patience.py: pyGAT's full-batch ``if bad_counter == args.patience: break``, pytorchtools'
``if early_stopping.early_stop: break`` over a DataLoader), probed by the real agent: the patience
read from the running program, the planned 10 000 epochs said to be an upper bound, and the
probe going on for the program's own end - the run that stopped itself, seen whole and measured."""

from __future__ import annotations

from pathlib import Path

import pytest

from probecast.core.model.events import Done, End, Log, Plan, read_log
from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing, RankOptions, estimate_row
from probecast.core.model.rows import Candidate
from probecast.core.model.state import fold_all
from test_torch import PY, SCRIPTS, agent

pytestmark = pytest.mark.torch


@pytest.mark.parametrize(("mode", "patience", "soonest", "unit"), [
    ("full", "60", ("earliest_steps", 61), "step 61 of 10000"),
    ("loader", "5", ("earliest_epochs", 6), "epoch 6 of 10000")])
def test_a_loops_own_early_stop_is_waited_for_and_seen_whole(
        tmp_path: Path, mode: str, patience: str, soonest: tuple[str, int], unit: str) -> None:
    log, output = agent(tmp_path, PY, str(SCRIPTS / "patience.py"), mode, "--patience", patience,
                        extra=("--max-steps", "8"))
    events, _ = read_log(log)
    plan = next(e for e in events if isinstance(e, Plan) and (e.steps or e.epochs))
    assert getattr(plan, soonest[0]) == soonest[1]
    said = {e.code: e.msg for e in events if isinstance(e, Log)}
    assert "the program's early stop at `" in said["early-stop"] and "upper bound" in said["early-stop"]
    assert any(f"an early stop can end training from {unit}" in e.msg
               for e in events if isinstance(e, Log))
    ran = int(output.split("stopped after")[1].split()[0])
    assert ran < 10000 and next(e for e in events if isinstance(e, Done)).status == "complete"
    assert isinstance(events[-1], End) and events[-1].exit_code == 0
    row = estimate_row(Candidate("k", "k", fold_all(events)), Pricing(Catalog.embedded()),
                       RankOptions())
    assert row.equation == "measured" and row.runtime_s < 120
    assert any(n.startswith(f"an early stop ended this run after {ran} of 10000") for n in row.notes)


def test_the_epochs_loop_is_left_at_its_next_pass_not_run_on_empty_ones(tmp_path: Path) -> None:
    """The probe runs the training loader dry and leaves the loop of epochs around it when it
    would begin its next pass: the stopped epoch's own code runs once (its mean over the
    batches it ran), no later epoch runs on an empty pass (dividing by its zero batches), and
    the program's post-training code runs and is timed."""
    log, output = agent(tmp_path, PY, str(SCRIPTS / "epoch_mean.py"), extra=("--max-steps", "8"))
    events, _ = read_log(log)
    assert any("epochs left at the top of their next pass" in e.msg
               for e in events if isinstance(e, Log))
    ended = int(output.split("after training:")[1].split()[0])
    assert ended < 39 and "ZeroDivisionError" not in output
    assert isinstance(events[-1], End) and events[-1].exit_code == 0

