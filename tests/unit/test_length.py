"""The job's length: read from the loops around a running line (core/agent/length.py, loops.py),
and turned into what the equations take, with periodic work and unknown lengths
(core/model/estimate/length.py, training.py, ranking.py) - on real frames and on built logs."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from probecast.core.agent import length as agent_length
from probecast.core.agent.length import calls_around, read_length
from probecast.core.model.events import EventReader, read_log
from probecast.core.model.estimate.length import resolve
from probecast.core.model.pricing import Catalog
from probecast.core.model.rank.ranking import Pricing, RankOptions, build_ranking, estimate_row
from probecast.core.model.rows import Candidate
from probecast.core.model.state import fold_all

pytestmark = pytest.mark.unit


def run_program(tmp: Path, body: str, **scope: Any) -> list[Any]:
    """Run ``body`` as a program of its own file (the reader only reads user code from files);
    each ``step()`` call reads the length as the hook does at the first step."""
    path = tmp / "train.py"
    path.write_text(textwrap.dedent(body))
    found: list[Any] = []

    def step(loader_loop: Any = None) -> None:
        frame: FrameType = sys._getframe(1)
        found.append(read_length(frame, loader_loop))

    def fit() -> None:
        found.append(calls_around(sys._getframe(1)))

    code = compile(path.read_text(), str(path), "exec")
    exec(code, {"step": step, "fit": fit, "__name__": "train", **scope})  # noqa: S102
    return found


def test_an_epoch_loop_around_a_loop_of_sliced_batches(tmp_path: Path) -> None:
    ns = argparse.Namespace(epochs=3, bptt=35)
    (found,) = run_program(tmp_path, """
        data = list(range(1000))
        def train():
            for batch, i in enumerate(range(0, len(data) - 1, args.bptt)):
                step()
                return
        for epoch in range(1, args.epochs + 1):
            train()
            break
    """, args=ns)
    assert (found.steps_per_epoch, found.epochs, found.steps) == (29, 3, 87)
    assert "for epoch in range(1, args.epochs + 1) (train.py:7)" in found.source


def test_a_loop_over_data_files_weighs_its_passes_by_their_sizes(tmp_path: Path) -> None:
    """LLMs-from-scratch's pretraining reads each of its books' files into a loader of its own
    (three of 400 kB and a last of 150 kB: 6 867 steps); the files' count took each pass as the
    first's, 8 124 steps, +25.8 %. Their sizes weigh the passes now; files of settings (a few
    KB) and items that are no files are counted as before."""
    data = tmp_path / "data"
    data.mkdir()
    for i, size in enumerate((400_000, 400_000, 400_000, 150_000), 1):
        (data / f"combined_{i}.txt").write_bytes(b"x" * size)
    body = """
        import os
        files = sorted(os.path.join(d, n) for d, _, names in os.walk(FOLDER) for n in names)
        batches = [os.path.getsize(f) // 200 for f in files]
        for epoch in range(2):
            for index, file_path in enumerate(files, 1):
                for i in range(batches[index - 1]):
                    step()
                    break
                break
            break
    """
    (found,) = run_program(tmp_path, body, FOLDER=str(data))
    assert (found.steps_per_epoch, found.epochs) == (2000, 8)  # the count: 2 x 4 passes
    assert found.steps == round(2 * 2000 * 1_350_000 / 400_000) == 13_500  # the sizes: 2 x 3.375
    assert "its files 3.38 times the one trained on" in found.source
    for small in data.iterdir():  # files of settings: no weight
        small.write_bytes(b"x" * 2000)
    (found,) = run_program(tmp_path, body.replace("// 200", "// 2"), FOLDER=str(data))
    assert (found.steps_per_epoch, found.steps) == (1000, 8000) and "its files" not in found.source


def test_while_loops_count_steps_and_an_if_every_k_is_periodic_work(tmp_path: Path) -> None:
    class Cfg:
        max_iters = 500
        eval_interval = 50

    found = run_program(tmp_path, """
        iter_num = 0
        estimate_loss = estimate_mfu = lambda: None
        while True:
            if iter_num % 10 == 0:  # nanoGPT's log_interval: a print and an MFU, no work
                estimate_mfu()
            if iter_num % cfg.eval_interval == 0:
                estimate_loss()
            step()
            iter_num += 1
            if iter_num > cfg.max_iters:
                break
            break
        s = 0
        while s < cfg.max_iters:
            step()
            break
    """, cfg=Cfg())
    assert found[0].steps == 501 and found[0].every == 50
    assert "if iter_num > cfg.max_iters: break (train.py:4)" in found[0].source
    assert "iter_num % cfg.eval_interval == 0" in found[0].every_source
    assert found[1].steps == 500


def test_a_helper_that_tests_divisibility_is_read_as_every_k(tmp_path: Path) -> None:
    """lucidrains' trainers (denoising-diffusion-pytorch): ``if self.step != 0 and
    divisible_by(self.step, self.save_and_sample_every):`` sample and save, the helper's body
    ``return (numer % denom) == 0``. Blind (2026-12-01): no periodic work read, -11.9 %; now
    K is the argument passed as ``denom`` (+0.6 %). A helper of any other body is none."""
    found = run_program(tmp_path, """
        def divisible_by(numer, denom):
            return (numer % denom) == 0
        def is_even(n, m):
            return n % 2 == m
        class Trainer:
            def __init__(self):
                self.step, self.train_num_steps, self.save_and_sample_every = 0, 600, 200
            def sample(self):
                pass
            def train(self, check):
                while self.step < self.train_num_steps:
                    step()
                    self.step += 1
                    if self.step != 0 and check(self.step, self.save_and_sample_every):
                        self.sample()
                    break
        Trainer().train(divisible_by)
        Trainer().train(is_even)
    """)
    assert [f.steps for f in found] == [600, 600]
    assert found[0].every == 200
    assert "check(self.step, self.save_and_sample_every)" in found[0].every_source
    assert found[1].every is None


def test_an_if_every_k_that_runs_the_model_on_test_data_is_periodic_work(tmp_path: Path) -> None:
    """MorvanZhou's CNN tests a 2 000-image batch `if step % 50 == 0:` - `cnn(test_x)`, a call
    named for nothing but its model: the data it runs on says evaluation. A print of a test
    figure is no work of its own."""
    found = run_program(tmp_path, """
        cnn = lambda x: x
        test_x, val_loss = [0], 0.5
        for epoch in range(2):
            for it in range(1200):
                step()
                if it % 50 == 0:
                    test_output = cnn(test_x)
                    print('test accuracy', test_output)
                break
            break
        for it in range(1200):
            step()
            if it % 50 == 0:
                print('step', it, 'val loss', val_loss)
            break
    """)
    assert found[0].every == 50 and "it % 50 == 0" in found[0].every_source
    assert found[1].every is None


def test_an_if_every_k_that_draws_a_figure_is_periodic_work(tmp_path: Path) -> None:
    """MorvanZhou's GAN redraws its matplotlib figure `if step % 50 == 0:` (plt.cla, plot, text,
    draw, pause: ~70 ms against a 1.5 ms step) - no evaluation, no saving: read as nothing, the
    probe's trimmed mean dropped the slow steps it saw and the estimate came out -43 %."""
    found = run_program(tmp_path, """
        class plt:
            cla = plot = draw = pause = staticmethod(lambda *a, **k: None)
        for it in range(10000):
            step()
            if it % 50 == 0:  # plotting
                plt.cla()
                plt.plot([0, 1], [1, 0], lw=3)
                plt.draw(); plt.pause(0.01)
            break
    """)
    assert found[0].every == 50 and "it % 50 == 0" in found[0].every_source


def test_an_if_on_a_pass_index_past_the_pass_is_no_periodic_work(tmp_path: Path) -> None:
    """pytorch/examples' DCGAN saves samples `if i % 100 == 0`, i its batch index: over a
    FakeData pass of 16 batches that holds at each pass's start only - the pass's own work (its
    boundary), not work every 100 steps the probe goes on to time; over 300 batches it is."""
    small, large = [1] * 16, [1] * 300
    found = run_program(tmp_path, """
        save = lambda: None
        def train(loader):
            for epoch in range(25):
                for i, data in enumerate(loader, 0):
                    step(lambda obj: len(obj) if obj is loader else None)
                    if i % 100 == 0:
                        save()
                    break
                break
        train(small)
        train(large)
        for i in range(16):
            step()
            if (i + 1) % 50 == 0:
                save()
            break
    """, small=small, large=large)
    assert (found[0].steps, found[0].every) == (400, None)
    assert (found[1].steps, found[1].every) == (7500, 100)
    assert (found[2].steps, found[2].every) == (16, None)


def test_an_if_every_k_epochs_in_the_epochs_loop_is_no_work_every_k_steps(tmp_path: Path) -> None:
    """pytorch/examples' DDP tutorial saves `if epoch % self.save_every == 0` in its epochs loop,
    one call above the step's: work between passes, which the boundaries carry - not every
    `save_every` steps, as the argument's name alone read it (500 epochs of 32 steps: 160
    'periodic' slow steps charged). The plan says no `every`."""
    args = argparse.Namespace(save_every=100, total_epochs=500)
    (found,) = run_program(tmp_path, """
        class Trainer:
            def __init__(self, data, save_every):
                self.data, self.save_every = data, save_every
            def _run_epoch(self, epoch):
                for source in self.data:
                    step(lambda obj: len(obj) if obj is self.data else None)
                    return
            def train(self, max_epochs):
                for epoch in range(max_epochs):
                    self._run_epoch(epoch)
                    if epoch % self.save_every == 0:
                        self._save_snapshot(epoch)
                    break
            def _save_snapshot(self, epoch):
                pass
        Trainer(list(range(32)), args.save_every).train(args.total_epochs)
    """, args=args)
    assert (found.steps, found.every) == (16_000, 0)
    assert "epoch % self.save_every == 0" in found.every_source
    assert "every" not in found.fields()
    # the epochs it comes after: the 0th, 100th, ... (from 0)
    assert (found.fields()["every_epochs"], found.fields()["every_epochs_at"]) == (100, 0)


def epochs_loop(test: str, loop: str = "range(40)", first: str = "") -> str:
    """A loop of epochs over a loader of 8 batches, ``if {test}: evaluate()`` after each pass
    (``first``: the loop's first statement)."""
    return f"""
        rank = 0
        data = list(range(8))
        for epoch in {loop}:
            {first or 'pass'}
            for batch in data:
                step(lambda obj: len(obj) if obj is data else None)
                break
            if {test}:
                evaluate()
            break
    """


@pytest.mark.parametrize(("loop", "test", "at"), [
    ("range(1, 41)", "epoch % 10 == 0", 9),  # epochs counted from 1: after the 10th, 20th, ...
    ("range(40)", "(epoch + 1) % 10 == 0", 9),
    ("range(40)", "epoch % 10 == 3", 3),
    ("range(5, 45)", "epoch % 10 == 0 and rank == 0", 5),  # resumed at 5: its 6th, 16th, ...
    ("tqdm(range(40), desc='epochs')", "(epoch + 1) % 10 == 0", 9),  # under a progress bar
    ("trange(1, 41)", "epoch % 10 == 0", 9),
    ("np.arange(1, 41)", "epoch % 10 == 0", 9),  # NumPy's (was unread: no length at all)
])
def test_the_epochs_a_periodic_evaluation_follows_are_read(tmp_path: Path, loop: str, test: str,
                                                           at: int) -> None:
    import numpy as np

    (found,) = run_program(tmp_path, epochs_loop(test, loop), evaluate=lambda: None,
                           tqdm=lambda it, **_: it, trange=lambda *a: range(*a), np=np)
    assert (found.epochs, found.every_epochs, found.every_epochs_at) == (40, 10, at)


@pytest.mark.parametrize(("first", "at"), [("epoch += 1", 9), ("epoch = epoch * 2", None)])
def test_an_epochs_index_the_loop_moves_first_is_read_where_the_if_reads_it(
        tmp_path: Path, first: str, at: int | None) -> None:
    """pytorch/examples' minGPT-DDP trainer: `for epoch in range(...): epoch += 1` then `if
    epoch % self.save_every == 0`: after the K-th, 2K-th, ... epochs (j0 = K - 1), not the 1st.
    An index assigned otherwise before the if says nothing."""
    (found,) = run_program(tmp_path, epochs_loop("epoch % 10 == 0", first=first),
                           evaluate=lambda: None)
    assert (found.every_epochs, found.every_epochs_at) == ((10, at) if at is not None else (None, 0))


def test_work_after_every_kth_epoch_is_read_beside_work_every_k_steps(tmp_path: Path) -> None:
    """timm's train.py has both: an `if` every K steps in its step loop, and its validation
    after every K-th epoch in the epochs' loop - each read where it is."""
    found, *_ = run_program(tmp_path, """
        data = list(range(100))
        for epoch in range(40):
            for i, batch in enumerate(data):
                step(lambda obj: len(obj) if obj is data else None)
                if i % 50 == 0:
                    save_image()
                break
            if epoch % 10 == 0:
                evaluate()
            break
    """, save_image=lambda: None, evaluate=lambda: None)
    assert (found.every, found.every_epochs, found.every_epochs_at) == (50, 10, 0)
    assert "i % 50" in found.every_source and "epoch % 10" in found.every_epochs_source


@pytest.mark.parametrize(("skip", "read"), [
    ("epoch_p_1 % args.val_interval != 0 and epoch_p_1 != num_epochs", (5, 4)),
    ("epoch_p_1 > 3", None),  # a skip on another test: nothing said
])
def test_the_epochs_a_skip_guard_lets_work_are_read(tmp_path: Path, skip: str,
                                                    read: tuple[int, int] | None) -> None:
    """timm's train.py: `epoch_p_1 = epoch + 1; if epoch_p_1 % args.val_interval != 0 and
    epoch_p_1 != num_epochs: continue`, then validation and a checkpoint - after every K-th
    epoch and the last."""
    found, *_ = run_program(tmp_path, f"""
        data = list(range(8))
        num_epochs = 40
        for epoch in range(num_epochs):
            for batch in data:
                step(lambda obj: len(obj) if obj is data else None)
                break
            epoch_p_1 = epoch + 1
            if {skip}:
                continue
            validate()
            break
    """, args=argparse.Namespace(val_interval=5), validate=lambda: None)
    assert ((found.every_epochs, found.every_epochs_at) if read else found.every_epochs) == read
    if read:
        assert "the passes it does not skip" in found.every_source
        assert found.every_epochs_last and not found.every_epochs_first


@pytest.mark.parametrize(("loop", "test", "read"), [
    ("range(40)", "epoch % 10 == 0 or epoch == 39", (10, 0, False, True)),
    ("range(40)", "(epoch + 1) % 10 == 0 or epoch == 0", (10, 9, True, False)),
    ("range(1, 41)", "epoch % 10 == 0 or epoch == args.epochs", (10, 9, False, True)),
    ("range(40)", "rank == 0 and (epoch % 20 == 0 or epoch + 1 == args.epochs)",
     (20, 0, False, True)),  # MAE's pretraining: a checkpoint every 20 epochs and at the end
    ("range(40)", "epoch == 0 or (epoch + 1) % 5 == 0 or epoch == args.epochs - 1",
     (5, 4, True, True)),
])
def test_work_after_every_kth_epoch_and_the_first_or_the_last_is_read(
        tmp_path: Path, loop: str, test: str, read: tuple[int, int, bool, bool]) -> None:
    """`if epoch % args.val_freq == 0 or epoch == args.epochs - 1:` (DINO's linear evaluation):
    after every K-th epoch and the last - was read as no epochs at all, a pass after epoch 0
    then charged at every epoch."""
    (found,) = run_program(tmp_path, epochs_loop(test, loop), evaluate=lambda: None,
                           args=argparse.Namespace(epochs=40))
    assert (found.every_epochs, found.every_epochs_at, found.every_epochs_first,
            found.every_epochs_last) == read
    fields = found.fields()
    assert fields.get("every_epochs_first", False) == read[2]
    assert fields.get("every_epochs_last", False) == read[3]


@pytest.mark.parametrize(("test", "read"), [
    ("epoch > 5 and epoch % 10 == 0", (10, 0, 6)),  # after epochs 11, 21, 31 (from 1)
    ("epoch >= args.min_epoch and args.eval > 0 and epoch % args.eval == 0", (10, 0, 12)),
    ("epoch and epoch % 10 == 0", (10, 0, 1)),  # not after the first
    ("epoch % 10 == 0 and epoch != 0", (10, 0, 1)),
    ("(epoch % 10 == 0 and epoch > 0) or epoch + 1 == args.epochs", (10, 0, 1)),
])
def test_work_after_every_kth_epoch_from_a_start_is_read(tmp_path: Path, test: str,
                                                         read: tuple[int, int, int]) -> None:
    """`if epoch >= args.min_epoch and epoch % args.evaluate_epoch == 0:` - every K-th epoch
    from a start; was read as no epochs (two tests on the index)."""
    (found,) = run_program(tmp_path, epochs_loop(test), evaluate=lambda: None,
                           args=argparse.Namespace(epochs=40, min_epoch=12, eval=10))
    assert (found.every_epochs, found.every_epochs_at, found.every_epochs_from) == read
    assert found.fields().get("every_epochs_from") == read[2]


@pytest.mark.parametrize("test", ["epoch % 10 == 0 or epoch == 17", "epoch % 10 == 0 or rank == 0",
                                  "epoch < 30 and epoch % 10 == 0",
                                  "epoch % 10 == 0 and epoch % 3 == 0",
                                  # an else evaluates too: not only every 10th
                                  "epoch % 10 == 0:\n                evaluate()\n"
                                  "            elif epoch > 30"])
def test_an_if_on_the_epochs_index_in_another_form_says_no_epochs(tmp_path: Path,
                                                                  test: str) -> None:
    (found,) = run_program(tmp_path, epochs_loop(test), evaluate=lambda: None)
    assert found.every_epochs is None and found.every == 0  # not every K steps either


def test_a_loop_over_the_training_loader_makes_the_epoch(tmp_path: Path) -> None:
    loader = [1, 2, 3]
    (found,) = run_program(tmp_path, """
        for epoch in range(4):
            for x in enumerate(loader):
                step(lambda obj: 120 if obj is loader else None)
                break
            break
    """, loader=loader)
    assert (found.epochs, found.steps) == (4, 480)
    assert found.steps_per_epoch is None  # the DataLoader's: the hook knows it


def test_an_unreadable_loop_leaves_the_total_to_settings_by_name(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max_steps", type=int, default=10)
    agent_length.watch_arguments()
    parser.parse_args(["--max_steps", "700"])
    try:
        (found,) = run_program(tmp_path, """
            import itertools
            for i in itertools.count():
                step()
                break
        """)
    finally:
        agent_length._NAMESPACES.clear()
    assert found.steps == 700 and found.source == "argument --max_steps = 700"


def test_islice_of_a_stream_counts_its_stop(tmp_path: Path) -> None:
    (found,) = run_program(tmp_path, """
        import itertools
        for i, batch in enumerate(itertools.islice(stream(), args.max_steps)):
            step()
            break
    """, stream=lambda: iter(int, 1), args=argparse.Namespace(
        max_steps=1200))
    assert found.steps == 1200


class KFold:
    """scikit-learn's cross-validator protocol (the suite does not install scikit-learn): its
    ``get_n_splits()`` is the library's own count, ``split()`` a generator of the folds."""

    __module__ = "sklearn.model_selection._split"

    def __init__(self, n_splits: int) -> None:
        self.n_splits, self.splits = n_splits, 0

    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        return self.n_splits

    def split(self, data: Any) -> Any:
        self.splits += 1
        return iter([((), ())] * self.n_splits)


class NotAFold(KFold):
    __module__ = "train"  # the same methods in the program's own code: not called


def test_a_k_fold_loop_counts_its_folds_between_the_epochs_and_the_pass(tmp_path: Path) -> None:
    """Lightning Fabric's k-fold example: for each epoch, for each fold of KFold(5).split(data),
    a pass of that fold's loader - 2 x 5 passes, read as 10 epochs of 150 steps (the reader
    fell back on --epochs = 2: 300 steps of a 1 500-step job)."""
    body = """
        def train(loader):
            for batch_idx, batch in enumerate(loader):
                step(lambda obj: 150 if obj is loader else None)
                return
        for epoch in range(1, args.epochs + 1):
            for fold, (train_ids, val_ids) in enumerate(kfold.split(dataset)):
                train(loader)
                break
            break
    """
    args = argparse.Namespace(epochs=2)
    kfold = KFold(5)
    (found,) = run_program(tmp_path, body, kfold=kfold, dataset=None, loader=[0], args=args)
    assert (found.epochs, found.steps) == (10, 1500)
    assert kfold.splits == 1  # the program's own call: the reader called no split()
    assert "enumerate(kfold.split(dataset))" in found.source
    (found,) = run_program(tmp_path, body, kfold=NotAFold(5), dataset=None, loader=[0],
                           args=args)
    assert found.steps != 1500  # a splitter of the program's own is not counted


def test_nothing_of_the_program_is_called_to_read_a_bound(tmp_path: Path) -> None:
    calls: list[str] = []

    class Sneaky:
        @property
        def epochs(self) -> int:
            calls.append("epochs")
            return 5

        def count(self) -> int:
            calls.append("count")
            return 5

        def get(self, key: str, default: int = 0) -> int:  # a config-like object of its own
            calls.append("get")
            return 5

        def __bool__(self) -> bool:
            calls.append("bool")
            return True

    found = run_program(tmp_path, """
        for e in range(s.epochs):
            step()
            break
        for e in range(s.count()):
            step()
            break
        for e in range(s.get("epochs", 3)):
            step()
            break
        for e in range(3 if s else 1):
            step()
            break
    """, s=Sneaky())
    assert calls == ["epochs", "count", "get", "bool"]  # the program's own, none of the reader's
    assert all(f.steps is None for f in found)


def test_a_configs_keys_bound_the_loops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hydra hands a program an OmegaConf DictConfig; others read a dict with defaults or the
    environment. Each is read through the mapping's own accessors."""
    omegaconf = pytest.importorskip("omegaconf")
    cfg = omegaconf.OmegaConf.create({"train": {"epochs": 7, "sizes": [10, 20]},
                                      "data": {"n": 100}, "steps": "${data.n}"})
    monkeypatch.setenv("PROBECAST_TEST_EPOCHS", "4")
    found = run_program(tmp_path, """
        import os
        data = list(range(cfg.data.n))
        for epoch in range(cfg.train.epochs):
            for i in range(0, len(data), cfg["train"]["sizes"][0]):
                step()
                break
            break
        config = {"lr": 0.1}
        for epoch in range(config.get("epochs", 6)):
            for i in range(cfg.get("steps")):
                step()
                break
            break
        for epoch in range(int(os.environ.get("PROBECAST_TEST_EPOCHS", "2"))):
            for i in range(cfg.get("missing", 3) * cfg.train.get("sizes")[1]):
                step()
                break
            break
    """, cfg=cfg)
    assert [(f.steps_per_epoch, f.epochs) for f in found] == [(10, 7), (100, 6), (60, 4)]
    assert "for epoch in range(cfg.train.epochs)" in found[0].source


def test_an_iterable_that_declares_its_length_makes_the_epoch(tmp_path: Path) -> None:
    """A hand-written batch iterator (__iter__ and __len__) is a pass of len(loader) steps; a
    map-style dataset's __len__ is read where the program's own expression calls len() on it;
    a generator says nothing."""
    class Batches:
        def __init__(self, n: int, size: int) -> None:
            self.n, self.size = n, size

        def __len__(self) -> int:
            return self.n // self.size

        def __iter__(self) -> Any:
            return iter(range(len(self)))

    class Samples:  # torch's map-style Dataset: __getitem__ and __len__, no __iter__
        def __len__(self) -> int:
            return 1000

        def __getitem__(self, i: int) -> int:
            return i

    found = run_program(tmp_path, """
        for epoch in range(40):
            for xb in loader:
                step()
                break
            break
        for epoch in range(3):
            for i in range(0, len(dataset), 50):
                step()
                break
            break
        for epoch in range(3):
            for item in dataset:
                step()
                break
            break
        def batches():
            yield 1
        for epoch in range(3):
            for item in batches():
                step()
                break
            break
    """, loader=Batches(8192, 32), dataset=Samples())
    assert [(f.steps_per_epoch, f.epochs) for f in found] == [(256, 40), (20, 3), (None, None),
                                                              (None, None)]
    assert "for xb in loader" in found[0].source


def test_a_generator_of_the_programs_own_makes_the_pass_its_loop_counts(tmp_path: Path) -> None:
    """for xb, yb in iterate_minibatches(X, y, 50): the generator is suspended at its yield
    inside its own loop, read in its own frame (its locals too); a loop yielding twice a turn,
    or two such generators under way at once that the values passed do not tell apart, say
    nothing."""
    found = run_program(tmp_path, """
        def iterate_minibatches(inputs, targets, batchsize, shuffle=False):
            indices = list(range(len(inputs)))
            for start_idx in range(0, len(inputs) - batchsize + 1, batchsize):
                excerpt = indices[start_idx:start_idx + batchsize]
                yield [inputs[i] for i in excerpt], [targets[i] for i in excerpt]
        X, y = list(range(1000)), [0] * 1000
        for epoch in range(7):
            for xb, yb in iterate_minibatches(X, y, 50, shuffle=True):
                step()
                break
            break

        def batch_iter(data, batch_size, num_epochs):
            num_batches_per_epoch = int((len(data) - 1) / batch_size) + 1
            for epoch in range(num_epochs):
                for batch_num in range(num_batches_per_epoch):
                    yield data[batch_num * batch_size:(batch_num + 1) * batch_size]
        for batch in batch_iter(X, 64, 5):
            step()
            break

        def pairs(n):
            for i in range(n):
                yield i
                yield -i
        for b in pairs(10):
            step()
            break

        held = batch_iter(X, 64, 5)
        next(held)
        for batch in batch_iter(X, 64, 5):
            step()
            break
        del held
        demo = batch_iter(X, 8, 2)  # a notebook's look at one batch, left under way
        next(demo)
        for batch in batch_iter(X, 64, 5):  # told apart by the values passed
            step()
            break

        class Corpus:
            def __init__(self, tokens):
                self.tokens = tokens

            def batches(self, size):
                for i in range(0, len(self.tokens) - size, size):
                    yield self.tokens[i:i + size]

            @staticmethod
            def chunks(tokens, size):
                for i in range(len(tokens) // size):
                    yield tokens[i * size:(i + 1) * size]
        corpus = Corpus(X)
        for epoch in range(3):
            for batch in corpus.batches(100):
                step()
                break
            break
        for batch in Corpus.chunks(X, 250):
            step()
            break
    """)
    assert [(f.steps_per_epoch, f.epochs, f.steps) for f in found] == [
        (20, 7, 140), (80, None, 80), (None, None, None), (None, None, None), (80, None, 80),
        (9, 3, 27), (4, None, 4)]
    assert "iterate_minibatches(X, y, 50, shuffle=True)" in found[0].source


def test_a_dataloader_the_torch_adapter_calls_no_epoch_is_not_counted_by_its_length(
        tmp_path: Path) -> None:
    """torch_data counts a DataLoader's passes and says where one is no epoch (minGPT's sampler
    of 1e10 draws); the reader does not then take len(loader) for an epoch."""
    torch = pytest.importorskip("torch")
    data = torch.utils.data
    endless = data.DataLoader(data.TensorDataset(torch.zeros(64, 2)), batch_size=2,
                              sampler=data.RandomSampler(range(64), replacement=True,
                                                         num_samples=10**10))
    (found,) = run_program(tmp_path, """
        for xb in loader:
            step(no_epoch)
            break
    """, loader=endless, no_epoch=lambda obj: None)
    assert found.steps is None and found.steps_per_epoch is None


def test_slotted_and_named_tuple_configs_and_conditional_bounds(tmp_path: Path) -> None:
    """A @dataclass(slots=True) or typing.NamedTuple config keeps its fields in descriptors that
    only read the instance; a bound may be chosen by a test on plain values (a dry run)."""
    import dataclasses
    import typing

    @dataclasses.dataclass(slots=True)
    class Slotted:
        epochs: int = 6

    class Settings(typing.NamedTuple):
        epochs: int = 4
        steps: int = 25

    args = argparse.Namespace(epochs=5, dry_run=None, debug=False, resume="")
    found = run_program(tmp_path, """
        for e in range(slotted.epochs):
            for i in range(settings.steps):
                step()
                break
            break
        for e in range(1 if args.dry_run else settings.epochs):
            for i in range(args.epochs if not args.debug and args.epochs > 2 else 1):
                step()
                break
            break
        for e in range(2 if args.resume == "" else 9):
            for i in range(3 if args.dry_run is None or args.debug else 4):
                step()
                break
            break
    """, slotted=Slotted(), settings=Settings(), args=args)
    assert [(f.steps_per_epoch, f.epochs) for f in found] == [(25, 6), (5, 4), (3, 2)]


def test_absl_flags_and_getenv_bound_the_loops(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """TensorFlow's and JAX's research scripts read absl's FLAGS; others the environment."""
    flags = pytest.importorskip("absl.flags")
    fv = flags.FlagValues()
    flags.DEFINE_integer("num_epochs", 5, "epochs", flag_values=fv)
    flags.DEFINE_integer("steps", 30, "steps an epoch", flag_values=fv)
    monkeypatch.setenv("PROBECAST_TEST_STEPS", "25")
    program = """
        import os
        for epoch in range(FLAGS.num_epochs):
            for i in range(int(os.getenv("PROBECAST_TEST_STEPS", "8"))):
                step()
                break
            break
        for epoch in range(FLAGS.num_epochs):
            for i in range(FLAGS.steps):
                step()
                break
            break
    """
    fv(["train.py", "--num_epochs=9"])  # as absl's app.run parses them before main()
    assert [(f.steps_per_epoch, f.epochs) for f in run_program(tmp_path, program, FLAGS=fv)] \
        == [(25, 9), (30, 9)]


def test_fit_in_a_loop_counts_its_calls(tmp_path: Path) -> None:
    found = run_program(tmp_path, """
        EPOCHS = 29
        for i in range(EPOCHS):
            fit()
            break
    """)
    assert found == [(29, "for i in range(EPOCHS) (train.py:3)")]


# ---- the model: the job's length and what the estimate does with it --------------------------

def state_of(events: list[dict[str, Any]]) -> Any:
    reader = EventReader()
    return fold_all(list(reader.read(json.dumps(e) for e in events)))


def log(steps_per_epoch: int, dts: list[float], plan: dict[str, Any] | None = None,
        end: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    t = 2.0
    events: list[dict[str, Any]] = [
        {"ev": "start", "t": 0.0, "v": 3, "probe": "p", "instance": "g5.xlarge",
         "batch_size": 32, "workload": "gpt", "steps_per_epoch": steps_per_epoch,
         "val_steps": 0, "framework": "torch 2.13.0"},
        {"ev": "init", "t": 2.0, "dt": 2.0}]
    if plan:
        events.append({"ev": "plan", "t": 2.0, **plan})
    for i, dt in enumerate(dts):
        t += dt
        events.append({"ev": "step", "t": t, "dt": dt, "epoch": 0, "step": i})
    if end:
        events.append({"ev": "done", "t": t, "dt": 0.0, "status": end["status"]})
        events.append({"ev": "end", "t": t + 0.5, "dt": 0.5, **end})
    return events


def test_a_step_budgeted_job_with_periodic_evaluation() -> None:
    dts = [0.1] * 45
    dts[40] = 1.1  # the evaluation at iteration 40 lands in step 40
    st = state_of(log(0, dts, plan={"steps": 1000, "every": 40, "source": "while True",
                                   "every_source": "if it % 40 == 0"}))
    length = resolve(st)
    assert (length.n_it, length.n_ep, length.steps) == (1000, 1.0, 1000)
    row = estimate_row(Candidate("k", "k", st), Pricing(Catalog.embedded()), RankOptions())
    t = row.terms
    assert row.equation == "steps" and t["every"] == 40 and t["n_per"] == 24
    assert t["t_per"] == pytest.approx(1.0)
    assert t["t_it"] == pytest.approx(0.1)  # the slow step is not a steady step
    assert row.runtime_s == pytest.approx(2.0 + 0.1 + 999 * 0.1 + 24 * 1.0, rel=0.02)
    assert "24 x 1.000" in row.formula


def test_periodic_work_is_timed_past_step_0_and_a_quiet_occurrence_costs_nothing() -> None:
    """Step 0's occurrence is the program's start as well (a second step still warming up):
    where the probe saw a later one, the later one is the cost; one that took no longer than a
    step is an occurrence that cost nothing - not left out of the mean."""
    dts = [0.1] * 45
    dts[1] = 1.3  # warm-up in the second step, where `it % 40 == 0` at it=0 also lands
    st = state_of(log(0, dts, plan={"steps": 1000, "every": 40, "every_source": "if it % 40"}))
    row = estimate_row(Candidate("k", "k", st), Pricing(Catalog.embedded()), RankOptions())
    assert row.terms["t_per"] == pytest.approx(0.0)
    dts[40] = 0.6  # a real occurrence at 40, and none at 80 (not reached): 0.5 s each
    st = state_of(log(0, dts, plan={"steps": 1000, "every": 40, "every_source": "if it % 40"}))
    assert st.periodic(0.1).extra_s == pytest.approx((0.5,))
    st = state_of(log(0, dts[:2] + [0.1] * 36, plan={"steps": 1000, "every": 40}))
    assert st.periodic(0.1).extra_s == pytest.approx((1.2,))  # step 0's alone: what was seen


def test_dcgan_on_an_h200_is_charged_no_warm_up_as_periodic_work() -> None:
    """pytorch/examples' DCGAN (`if i % 100 == 0` on an epoch's batch index: at each epoch's
    start, 16 batches an epoch), probed on an H200: its second step (1.36 s: cuDNN autotuning)
    had been its periodic work, 3 x 1.34 s more; step 101 took 0.016 s. The estimate holds its
    plain run."""
    corpus = Path(__file__).resolve().parents[2] / "benchmarks" / "corpus" / "runs-gpu-h200-public"
    st = fold_all(read_log(corpus / "probe-pt-dcgan.jsonl.gz")[0])
    row = estimate_row(Candidate("k", "k", st), Pricing(Catalog.embedded()), RankOptions())
    truth = json.loads((corpus / "pt-dcgan.truth.json").read_text())["wall_s"]
    assert row.terms["t_per"] == pytest.approx(0.0)
    assert row.runtime_low_s <= truth <= row.runtime_high_s


def test_steps_with_epochs_make_fractional_epochs_and_users_win() -> None:
    st = state_of(log(100, [0.1] * 30, plan={"steps": 1000, "epochs": 3, "source": "loops"}))
    assert resolve(st).n_ep == pytest.approx(10.0)
    assert resolve(st, steps=250).n_ep == pytest.approx(2.5)
    assert resolve(st, epochs=4).n_ep == 4 and resolve(st, epochs=4).source == "user"
    st = state_of(log(0, [0.1] * 30, plan={"steps": 429, "epochs": 3}))
    assert (resolve(st).n_it, resolve(st).n_ep) == (143, pytest.approx(3.0))


def test_a_pass_far_longer_than_the_probe_is_no_epoch() -> None:
    st = state_of(log(312_500_000, [0.01] * 30, plan={"steps": 5000, "source": "while True"}))
    length = resolve(st)
    assert length.steps == 5000 and length.n_it == 5000 and "not an epoch" in length.note
    st = state_of(log(312_500_000, [0.01] * 30))
    length = resolve(st)
    assert length.unknown and "--steps" in length.unknown


def test_unknown_length_ranks_every_row_of_the_job_per_thousand_steps() -> None:
    known = state_of(log(100, [0.1] * 30))
    unknown = state_of(log(0, [0.2] * 30))
    ranking = build_ranking([Candidate("a", "a", known), Candidate("b", "b", unknown)],
                            Pricing(Catalog.embedded()), RankOptions())
    rows = ranking.groups["gpt"]
    assert all(r.per_steps == 1000 for r in rows)
    assert [round(r.runtime_s) for r in rows] == [100, 200]  # start-up apart
    assert rows[1].length_unknown and "per 1,000 steps" in rows[1].length


def test_a_run_the_probe_saw_whole_is_its_own_answer() -> None:
    st = state_of(log(0, [0.5] * 6, plan={"steps": 6, "source": "for i in range(opt.steps)"},
                      end={"status": "complete", "exit_code": 0}))
    row = estimate_row(Candidate("k", "k", st), Pricing(Catalog.embedded()), RankOptions())
    assert row.equation == "measured" and row.runtime_s == pytest.approx(5.5)
    assert row.runtime_low_s < 5.5 < row.runtime_high_s


def test_a_run_of_unknown_length_the_probe_saw_whole_is_its_own_answer() -> None:
    """pytorch/examples' regression trains until its loss is small enough: no length anywhere
    in the program, but a probe that saw it end by itself knows it - and its runtime."""
    whole = state_of(log(0, [0.01] * 562, end={"status": "complete", "exit_code": 0}))
    length = resolve(whole)
    assert not length.unknown and length.steps == 562 and "seen by the probe" in length.source
    row = estimate_row(Candidate("r", "r", whole), Pricing(Catalog.embedded()), RankOptions())
    assert not row.per_steps and row.equation == "measured" and row.steps == 562
    assert row.runtime_s == pytest.approx(2.0 + 5.62 + 0.5)
    # stopped by the probe, or failed: still unknown (nothing says how far it would have gone)
    for end in ({"status": "probe-done", "exit_code": 0}, {"status": "failed", "exit_code": 1}):
        assert resolve(state_of(log(0, [0.01] * 30, end=end))).unknown


def test_a_trainers_settings_are_its_length() -> None:
    from types import SimpleNamespace

    from probecast.core.agent.adapters import Trainers
    from probecast.core.agent.adapters.hf_trainer import HfTrainerAdapter
    from probecast.core.agent.adapters.lightning import LightningAdapter

    hf = SimpleNamespace(args=SimpleNamespace(max_steps=600, num_train_epochs=3.0,
                                              eval_strategy="steps", eval_steps=100),
                         control=None)
    lightning = SimpleNamespace(max_steps=-1, max_epochs=7, val_check_interval=50)
    made = Trainers()
    made.add(HfTrainerAdapter(made), hf)
    found = made.length()
    assert found is not None and (found.steps, found.epochs, found.every) == (600, None, 100)
    assert found.source == "TrainingArguments.max_steps = 600"
    made = Trainers()
    made.add(LightningAdapter(made), lightning)
    found = made.length()
    assert found is not None and (found.steps, found.epochs, found.every) == (None, 7, 50)
    # the first trainer made with an answer gives it
    made.add(HfTrainerAdapter(made), hf)
    assert made.planned_epochs() == 7 and made.accumulation() is None


def test_a_real_training_arguments_evaluation_interval_is_read() -> None:
    """TrainingArguments keeps its strategy as an enum whose str is "IntervalStrategy.STEPS" in
    recent releases ("steps" in older ones): read either way (it was missed: no `every`)."""
    pytest.importorskip("transformers")
    from types import SimpleNamespace

    from transformers import TrainingArguments

    from probecast.core.agent.adapters import Trainers
    from probecast.core.agent.adapters.hf_trainer import HfTrainerAdapter

    args = TrainingArguments(output_dir="unused", num_train_epochs=3, eval_strategy="steps",
                             eval_steps=50, report_to=[], use_cpu=True)
    made = Trainers()
    made.add(HfTrainerAdapter(made), SimpleNamespace(args=args, control=None))
    found = made.length()
    assert found is not None and (found.epochs, found.every) == (3, 50)
    # a real EarlyStoppingCallback (patience 2), evaluating every epoch: its soonest end after 3
    from transformers import EarlyStoppingCallback

    args = TrainingArguments(output_dir="unused", num_train_epochs=30, eval_strategy="epoch",
                             report_to=[], use_cpu=True)
    made = Trainers()
    made.add(HfTrainerAdapter(made), SimpleNamespace(args=args, control=None, callback_handler=(
        SimpleNamespace(callbacks=[EarlyStoppingCallback(early_stopping_patience=2)]))))
    found = made.length()
    assert found is not None and (found.earliest_epochs, found.earliest_steps) == (3, None)


def test_a_trainers_early_stop_gives_its_soonest_end_unless_it_outlasts_the_epochs() -> None:
    """Lightning's EarlyStopping: patience + 1 validations, one every check_val_every_n_epoch
    epochs, never before min_epochs; the Trainer's EarlyStoppingCallback: patience + 1
    evaluations, one an epoch (or every K steps: in steps). A patience that outlasts the length
    is no early stop."""
    from types import SimpleNamespace

    from probecast.core.agent.adapters import Trainers
    from probecast.core.agent.adapters.hf_trainer import HfTrainerAdapter
    from probecast.core.agent.adapters.lightning import LightningAdapter

    class EarlyStoppingCallback:  # as transformers names it
        early_stopping_patience = 2

    def lightning(epochs: int, patience: int, every: int = 1, least: int | None = None,
                  interval: float = 1.0) -> Any:
        made = Trainers()
        made.add(LightningAdapter(made), SimpleNamespace(
            max_steps=-1, max_epochs=epochs, val_check_interval=interval, min_epochs=least,
            check_val_every_n_epoch=every,
            early_stopping_callbacks=[SimpleNamespace(patience=patience)]))
        return made.length()

    def hf(epochs: int, strategy: str, every: int | None = None, steps: int = -1) -> Any:
        made = Trainers()
        made.add(HfTrainerAdapter(made), SimpleNamespace(
            args=SimpleNamespace(num_train_epochs=epochs, max_steps=steps, eval_strategy=strategy,
                                 eval_steps=every),
            callback_handler=SimpleNamespace(callbacks=[EarlyStoppingCallback()]), control=None))
        return made.length()

    assert (lightning(40, 2).earliest_epochs, lightning(40, 2).early) == (3, "EarlyStopping")
    assert lightning(40, 2, every=2).earliest_epochs == 6
    assert lightning(40, 2, least=10).earliest_epochs == 10
    assert (lightning(3, 5).earliest_epochs, lightning(3, 5).early) == (None, "")
    assert lightning(3, 5).fields().get("earliest_epochs") is None
    assert (hf(30, "epoch").earliest_epochs, hf(30, "epoch").early) == (3, "EarlyStoppingCallback")
    assert (hf(30, "steps").earliest_epochs, hf(30, "steps").early) == (None, "EarlyStoppingCallback")
    assert (hf(3, "epoch").earliest_epochs, hf(3, "epoch").early) == (None, "")
    # evaluating every K steps: patience + 1 evaluations, in steps; none past max_steps
    assert (hf(30, "steps", 50).earliest_steps, hf(30, "steps", 50).every) == (150, 50)
    assert hf(30, "steps", 50).fields()["earliest_steps"] == 150
    assert (hf(30, "steps", 50, steps=120).early, hf(30, "steps", 50, steps=120).earliest_steps) \
        == ("", None)
    assert lightning(40, 2).fields()["earliest_epochs"] == 3
    # a validation every 50 steps: the soonest in steps; every half epoch: (2 + 1) / 2 epochs
    assert (lightning(40, 2, interval=50).earliest_steps,
            lightning(40, 2, interval=50).earliest_epochs) == (150, None)
    assert lightning(40, 2, interval=50).fields()["earliest_steps"] == 150
    assert lightning(40, 2, interval=0.5).earliest_epochs == 2


def test_a_trainer_is_stopped_through_its_own_flag() -> None:
    from types import SimpleNamespace

    from probecast.core.agent.adapters import Trainers
    from probecast.core.agent.adapters.hf_trainer import HfTrainerAdapter
    from probecast.core.agent.adapters.lightning import LightningAdapter

    hf = SimpleNamespace(args=SimpleNamespace(gradient_accumulation_steps=4, num_train_epochs=2.5),
                         control=SimpleNamespace(should_training_stop=False))
    lightning = SimpleNamespace(should_stop=False, accumulate_grad_batches=2,
                                num_training_batches=float("inf"))
    made = Trainers()
    made.add(HfTrainerAdapter(made), hf)
    made.add(LightningAdapter(made), lightning)
    assert made.accumulation() == 4 and made.planned_epochs() == 2 and made.batches() is None
    made.stop()
    assert hf.control.should_training_stop is True and lightning.should_stop is True


CALLBACK_TRAINER = """
    class Trainer:
        iter_num = 0
        max_iters = 2000
        callbacks = []
        def run(self):
            while True:
                step()
                for cb in self.callbacks:
                    cb(self)
                self.iter_num += 1
                if self.iter_num >= self.max_iters:
                    break
                break
    def generate(): pass
    def save(): pass
    def evaluate(): pass
    def batch_end_callback(trainer):
        if trainer.iter_num % 10 == 0:
            print("loss")
        if trainer.iter_num % WORK == 0:
            generate()
            save()
    def another_phase():
        for step_ in range(100):
            if step_ % 7 == 0:
                evaluate()
    t = Trainer()
    t.callbacks.append(batch_end_callback)
    t.run()
"""


def test_periodic_work_in_a_callback_the_loop_calls_is_read_off_its_step_counter(
        tmp_path: Path) -> None:
    """minGPT's chargpt: the loop is the library's, the sample-and-save every 500 iterations is
    a callback of the program's; a print every 10 is not work, and another loop's `if` is that
    loop's."""
    (found,) = run_program(tmp_path, CALLBACK_TRAINER.replace("WORK", "500"))
    assert found.steps == 2000 and found.every == 500
    assert "trainer.iter_num % 500 == 0" in found.every_source
    (tmp_path / "b").mkdir()  # another file: the reader caches a file's tree by its name
    (found,) = run_program(tmp_path / "b", CALLBACK_TRAINER.replace(
        "            generate()\n            save()\n", "            print()\n").replace("WORK", "500"))
    assert found.every is None  # no work in it (and the other loop's every 7 is not this one's)


def test_an_update_loop_around_a_sampler_loop_times_its_pass_as_periodic_work(
        tmp_path: Path) -> None:
    """Lightning's Fabric PPO example: each update collects a rollout, then trains
    `update_epochs` passes over a BatchSampler of the rollout's indexes. The sampler's length is
    PyTorch's to give; the update loop's own work (the rollout) comes every 40 steps - not the
    rollout's `args.num_steps`, which a setting read by name took for the job's length."""
    torch_data = pytest.importorskip("torch.utils.data")
    indexes = list(range(256))
    sampler = torch_data.BatchSampler(torch_data.RandomSampler(indexes), batch_size=64,
                                      drop_last=False)
    ns = argparse.Namespace(update_epochs=10, num_steps=128, total_timesteps=32768, num_envs=2)
    (found,) = run_program(tmp_path, """
        def train():
            for epoch in range(args.update_epochs):
                for batch_idxes in sampler:
                    step()
                    return
        num_updates = args.total_timesteps // (args.num_envs * args.num_steps)
        for update in range(1, num_updates + 1):
            for s in range(0, args.num_steps):
                pass
            train()
            break
    """, args=ns, sampler=sampler)
    assert (found.steps, found.steps_per_epoch, found.every) == (5120, 4, 40)
    assert "for update in range(1, num_updates + 1)" in found.every_source
    assert "num_steps" not in found.source


def test_a_loop_stepping_several_optimizers_in_turn_is_one_step(tmp_path: Path) -> None:
    """MorvanZhou's batch-normalisation tutorial trains two nets side by side, each batch
    `for net, opt in zip(nets, opts)`: the probe's step is the first optimizer's (the lead's),
    so an epoch is the loader's batches, not twice them."""
    torch = pytest.importorskip("torch")
    nets = [torch.nn.Linear(2, 1) for _ in range(2)]
    opts = [torch.optim.Adam(n.parameters()) for n in nets]
    (found,) = run_program(tmp_path, """
        for epoch in range(12):
            for step_i, batch in enumerate(loader):
                for net, opt in zip(nets, opts):
                    step()
                    break
                break
            break
    """, nets=nets, opts=opts, loader=list(range(32)))
    assert (found.steps, found.epochs) == (384, 12)
    assert "each optimizer in turn" in found.source


def test_an_endless_loop_stopped_by_a_condition_says_the_condition(tmp_path: Path) -> None:
    """pytorch/examples' REINFORCE and actor-critic train ``for i_episode in count(1):`` until
    ``running_reward > env.spec.reward_threshold``: no count to read. The plan says the condition
    (the break of an inner loop ends that loop, not this one); a loop of a count says none."""
    found = run_program(tmp_path, """
        from itertools import count
        running_reward, threshold = 10.0, 475.0
        solved = lambda r: r > 2 * threshold
        for i_episode in count(1):
            for t in range(1, 10000):
                if t > 3:
                    break
            step()
            running_reward += 100.0
            if i_episode % 10 == 0:
                pass
            elif running_reward > threshold:
                break
        while True:
            step()
            try:
                pass
            finally:
                if solved(running_reward):
                    break
            running_reward += 1000.0
        for epoch in range(3):
            step()
            if running_reward > threshold:
                break
    """)
    untils = [f.fields().get("until") for f in found]  # one reading a step() call
    assert untils[0] == "running_reward > threshold (train.py:13)"
    assert found[5].fields() == {"until": "solved(running_reward) (train.py:20)"}
    assert "until" not in found[-1].fields() and found[-1].steps == 3


def test_a_rate_over_an_unknown_length_names_the_condition_training_stops_at() -> None:
    """The `plan`'s until, with no length: the ranking's header says what stops training."""
    state = state_of(log(0, [0.01] * 30, plan={"until": "running_reward > 475 (rl.py:9)"}))
    length = resolve(state)
    assert length.unknown.startswith("the program trains until running_reward > 475 (rl.py:9)")


def test_a_loop_that_leaves_its_loader_at_an_index_makes_a_shorter_epoch(tmp_path: Path) -> None:
    """``if batch_idx * BATCHSIZE >= N_TRAIN_EXAMPLES: break`` (Optuna's PyTorch example):
    an epoch is the 30 batches before that index, not the loader's 469; a break that follows
    the step takes one pass more; a test on the index that never holds leaves the length."""
    loader = list(range(469))  # the loader: 469 batches a pass
    found = run_program(tmp_path, """
        BATCHSIZE, N_TRAIN_EXAMPLES = 128, 128 * 30
        for epoch in range(10):
            for batch_idx, batch in enumerate(loader):
                if batch_idx * BATCHSIZE >= N_TRAIN_EXAMPLES:
                    break
                step(lambda obj: 469 if obj is loader else None)
                break
            break
        for epoch in range(10):
            for i, batch in enumerate(loader, 1):
                step(lambda obj: 469 if obj is loader else None)
                if i == 40:
                    break
                break
            break
        for epoch in range(10):
            for i, batch in enumerate(loader):
                if i > 10_000:
                    break
                step(lambda obj: 469 if obj is loader else None)
                break
            break
    """, loader=loader)
    assert [(f.steps_per_epoch, f.steps) for f in found] == [(30, 300), (40, 400), (None, 4690)]
    assert "left at `batch_idx * BATCHSIZE >= N_TRAIN_EXAMPLES` (train.py:5)" in found[0].source


def test_a_package_pip_installed_into_a_folder_on_the_path_is_no_user_code(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``pip install --target libs`` and PYTHONPATH=libs: its packages are libraries (their
    loops, Optuna's loop of trials, are not the program's), the program beside them is not."""
    from probecast.core.agent.own_code import user_code

    libs, project = tmp_path / "libs", tmp_path / "project"
    (libs / "optuna" / "study").mkdir(parents=True)
    (libs / "optuna-5.0.0.dist-info").mkdir()
    project.mkdir()
    (project / "probecast.egg-info").mkdir()  # a project installed editable is still the user's
    monkeypatch.setattr(sys, "path", [str(project), str(libs), *sys.path[1:]])
    assert not user_code(str(libs / "optuna" / "study" / "_optimize.py"))
    assert user_code(str(project / "train.py"))
    assert not user_code(str(tmp_path / "home" / ".local" / "lib" / "python3.11" / "site-packages"
                              / "optuna" / "study.py"))


def test_a_study_of_trials_is_n_times_its_training_with_a_pruners_soonest_end() -> None:
    """Optuna's 100 trials of 10 epochs: 1 000 epochs; its MedianPruner lets 5 trials run
    whole, then may end each after its first report: 5 x 10 + 95 x 1 = 145 at the soonest. A
    trial's own early stop comes first where sooner; no pruner, no soonest end."""
    from probecast.core.agent.repeats import Repeats

    pruned = Repeats(100, "Optuna: study.optimize(n_trials=100)", pruned_after=1, unpruned=5)
    plan = pruned.of({"epochs": 10, "steps": 300, "source": "for epoch in range(EPOCHS)"})
    assert (plan["epochs"], plan["steps"], plan["earliest_epochs"]) == (1000, 30000, 145)
    assert plan["source"] == "Optuna: study.optimize(n_trials=100) x for epoch in range(EPOCHS)"
    own = pruned.of({"epochs": 10, "earliest_epochs": 4})  # a patience of 3 in the objective
    assert (own["epochs"], own["earliest_epochs"]) == (1000, 5 * 4 + 95 * 1)
    plain = Repeats(4, "Optuna: study.optimize(n_trials=4)").of({"epochs": 3})
    assert (plain["epochs"], "earliest_epochs" in plain) == (12, False)


def test_the_loops_of_the_library_that_trains_for_the_program_where_it_says_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """skorch's ``net.fit(X, y)``: the program has no loop and no setting by name; the loops
    are the library's own (``for _ in range(epochs)`` around its pass over the data), read
    where nothing else says. A framework's own loops (torch's) are never read so."""
    libs = tmp_path / "libs"
    (libs / "trainlib").mkdir(parents=True)
    (libs / "trainlib-1.0.dist-info").mkdir()
    (libs / "trainlib" / "__init__.py").write_text(textwrap.dedent("""
        def fit(step, epochs):
            for _ in range(epochs):
                for batch in range(12):
                    step()
                    return
    """))
    monkeypatch.syspath_prepend(str(libs))
    monkeypatch.setattr(sys, "path", [sys.path[1], *sys.path])  # the program's own first
    monkeypatch.delitem(sys.modules, "trainlib", raising=False)
    import trainlib  # type: ignore[import-not-found]

    (found,) = run_program(tmp_path, """
        net_epochs = 7
        trainlib.fit(step, net_epochs)
    """, trainlib=trainlib)
    assert (found.steps_per_epoch, found.epochs, found.steps) == (12, 7, 84)
    assert "__init__.py" in found.source


def test_a_loop_over_a_literal_list_tuple_or_set_counts_its_items(tmp_path: Path) -> None:
    """``for learning_rate in [1e-3, 1e-2, 5e-2]:`` around a run of training (a sweep written
    out): three runs. Before, a literal was no value the reader read, and the job had no plan;
    one with a starred item is not counted."""
    found = run_program(tmp_path, """
        def run(lr):
            for epoch in range(4):
                step()
                return
        for learning_rate in [1e-3, 1e-2, 5e-2]:
            run(learning_rate)
            break
        for name in ("a", "b"):
            for seed in {1, 2, 3}:
                run(seed)
                break
            break
        for lr in [*extra, 0.1]:
            run(lr)
            break
    """, extra=[0.5])
    assert [(f.epochs, f.steps) if f else None for f in found][:2] == [(3, 12), (6, 24)]
    assert found[2] is None or found[2].steps is None
