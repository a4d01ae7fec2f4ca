"""PyTorch jobs probed with no code change: a plain loop, gradient accumulation, a loop with no
DataLoader, torchrun with two gloo ranks, a Lightning module, a Hugging Face Trainer, and the
built-in torch-cnn workload. Real PyTorch (CPU), the agent run as a user runs it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sshd import free_port

from probecast.core.agent.policy import DEFAULT_MAX_STEPS, STEADY_STEP_CAP
from probecast.core.model.estimate.runtime import estimate_runtime, measured_run
from probecast.core.model.estimate.length import resolve
from probecast.core.model.events import Done, End, Log, Plan, Start, Step, Val, read_log
from probecast.core.model.logstore import load_probe

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

PY = sys.executable
SCRIPTS = Path(__file__).parent / "torch_scripts"
TORCHRUN = str(Path(PY).parent / "torchrun")


def agent(tmp: Path, *command: str, extra: tuple[str, ...] = ("--batch-size", "32"),
          timeout: float = 240) -> tuple[Path, str]:
    """The agent, as probecast runs it locally: events on stdout, the program's output kept."""
    log, output = tmp / "probe.jsonl", tmp / "probe.output"
    with open(log, "w") as fh:
        r = subprocess.run([PY, "-m", "probecast.core.agent", "run", "--probe", "p",
                            "--output", str(output), *extra, "--", *command],
                           cwd=tmp, stdout=fh, stderr=subprocess.PIPE, text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr[-3000:]
    return log, output.read_text(errors="replace")


# A boundary budget no machine's steps exhaust: where a test counts work the probe goes on to
# time (epoch boundaries, a pass after the K-th epoch), the default 30 s decides on a slow or
# loaded host (418 Lightning steps of 85 ms under two busy cores: not affordable, no pass timed)
GOES_ON = ("--batch-size", "32", "--boundary-budget", "600")


def no_process_left(name: str) -> None:
    left = subprocess.run(["pgrep", "-f", name], capture_output=True, text=True).stdout.strip()
    assert not left, f"still running: {left}"


def test_a_plain_loop_is_timed_stopped_and_its_post_training_code_runs(tmp_path: Path) -> None:
    log, output = agent(tmp_path, PY, str(SCRIPTS / "plain.py"))
    events, report = read_log(log)
    assert not report.malformed
    start = next(e for e in events if isinstance(e, Start))
    assert start.steps_per_epoch == 112 and start.framework.startswith("torch ")
    steps = [e for e in events if isinstance(e, Step)]
    # stopped long before the 60 epochs: at most the steady floor's cap and two boundaries, however
    # fast the machine's steps (20 epochs were seen whole where a step took half a millisecond)
    assert 30 <= len(steps) <= STEADY_STEP_CAP * DEFAULT_MAX_STEPS + 3 * 112 < 60 * 112
    assert {e.epoch for e in steps} >= {0, 1}  # went on to time an epoch boundary
    assert [s.step for s in steps if s.epoch == 0] == list(range(112))  # every batch a step
    vals = [e for e in events if isinstance(e, Val)]
    assert vals and vals[0].steps == 2  # 512 validation samples / 256 a batch
    done = next(e for e in events if isinstance(e, Done))
    end = events[-1]
    assert isinstance(end, End) and end.status == "probe-done" and end.exit_code == 0
    assert "post-training work done" in output  # the loops ran out; the code after them ran
    st = load_probe(log).state
    assert st.post_time is not None and st.post_time >= 0.3  # the script sleeps 0.3 s after
    est = estimate_runtime(st, 20)
    assert est.terms.t_post == st.post_time and est.low_s <= est.runtime_s <= est.high_s
    assert done.t < end.t
    # the hook's own time inside each steady step, said and taken off: the plain loop's step
    median_step_ms = 1000 * sorted(s.dt for s in steps[1:])[len(steps) // 2]
    assert done.hook_ms is not None and 0 < done.hook_ms < median_step_ms
    assert st.hook_s == pytest.approx(done.hook_ms / 1000)
    assert any(n.startswith("the agent's own") for n in est.notes)


def test_a_dataloader_made_again_each_epoch_is_the_next_epoch_and_the_probe_stops(
        tmp_path: Path) -> None:
    """A new DataLoader each epoch (through a wrapper that moves its batches): its pass was read
    as validation, no epoch ever ended, and a probe going on for an epoch boundary went on to the
    end of the job (Lightning Fabric's k-fold example, probed whole). Each new loader's pass is
    the next epoch now, the boundary is timed where it comes, and the loop is run dry."""
    log, output = agent(tmp_path, PY, str(SCRIPTS / "loader_each_epoch.py"))
    events, _ = read_log(log)
    steps = [e for e in events if isinstance(e, Step)]
    # stopped long before the 60 epochs: at most the steady floor's cap and two boundaries, however
    # fast the machine's steps (20 epochs were seen whole where a step took half a millisecond)
    assert 30 <= len(steps) <= STEADY_STEP_CAP * DEFAULT_MAX_STEPS + 3 * 112 < 60 * 112
    assert {e.epoch for e in steps} >= {0, 1}  # an epoch boundary, timed
    assert [s.step for s in steps if s.epoch == 0] == list(range(112))
    assert all(e.steps == 2 for e in events if isinstance(e, Val))  # no training pass as one
    plan = next(e for e in events if isinstance(e, Plan))
    assert plan.epochs == 60 and "range(60)" in plan.source
    end = events[-1]
    assert isinstance(end, End) and end.status == "probe-done" and end.exit_code == 0
    assert "post-training work done" in output  # run dry through its wrapper, not unwound
    assert "no-post" not in [e.code for e in events if isinstance(e, Log)]


def test_a_pass_over_the_training_loader_from_another_line_is_no_epoch(tmp_path: Path) -> None:
    """LLMs-from-scratch's gpt_train.py estimates the loss on one training batch every 5 steps,
    from its own loop over the training loader, inside the training pass. That pass was read as
    a new epoch and its batches as the steps': "3 batch(es) per optimizer step ... 2 steps per
    epoch" for its 8, the estimate -65 %. It is a side pass now: timed as validation, its
    batches no step's; the epoch-end pass over the ran-out training data (the training
    accuracy) stays at the boundary, as before."""
    log, output = agent(tmp_path, PY, str(SCRIPTS / "side_pass.py"), extra=GOES_ON)
    events, _ = read_log(log)
    start = next(e for e in events if isinstance(e, Start))
    assert start.steps_per_epoch == 40
    assert all(e.steps_per_epoch in (None, 40) for e in events if isinstance(e, Plan))
    plan = next(e for e in events if isinstance(e, Plan) and e.steps)
    assert plan.steps == 30 * 40 and "range(30)" in plan.source
    steps = [e for e in events if isinstance(e, Step)]
    assert [s.step for s in steps if s.epoch == 0] == list(range(40))  # one epoch, whole
    assert {e.epoch for e in steps} >= {0, 1}
    vals = [e for e in events if isinstance(e, Val)]
    assert vals and all(e.steps <= 2 for e in vals if e.epoch == 0)  # the side passes: 2 each
    assert "post-training work done" in output


def test_gradient_accumulation_divides_the_loader_into_optimizer_steps(tmp_path: Path) -> None:
    log, output = agent(tmp_path, PY, str(SCRIPTS / "accumulate.py"))
    events, _ = read_log(log)
    start = next(e for e in events if isinstance(e, Start))
    assert start.steps_per_epoch == 4096 // 16 // 4  # 256 batches, 4 per optimizer step
    assert "saved" in output


def test_a_loop_with_no_dataloader_is_read_from_its_loops_and_left(tmp_path: Path) -> None:
    log, output = agent(tmp_path, PY, str(SCRIPTS / "no_loader.py"))
    events, _ = read_log(log)
    start = next(e for e in events if isinstance(e, Start))
    assert start.steps_per_epoch == 256  # for i in range(0, len(x), 32): 8192 / 32
    plan = next(e for e in events if isinstance(e, Plan))
    assert (plan.epochs, plan.steps) == (50, 50 * 256) and "range(50)" in plan.source
    assert {e.epoch for e in events if isinstance(e, Step)} >= {0, 1}  # its boundary, counted
    logs = {e.code: e.msg for e in events if isinstance(e, Log)}
    assert "for i in range(0, len(x), 32)" in logs["torch-loop"]
    # no loader to run dry: both loops left at the step's next line, as a break would; the
    # post-training code ran (and was timed), nothing was unwound
    assert "no-post" not in logs
    assert any("loop left at its next line" in e.msg for e in events if isinstance(e, Log))
    assert "post-training code ran" in output
    steps = [e for e in events if isinstance(e, Step)]
    assert steps[-1].epoch < 50 - 1  # stopped early: it did not train on unobserved
    assert isinstance(events[-1], End) and events[-1].status == "probe-done"


def test_a_while_whose_counter_each_step_advances_is_the_jobs_steps(tmp_path: Path) -> None:
    """`while step < train_num_steps:` around the loader's loop, `step += 1` at each step: its
    bound is 20 000 steps (313 passes of 64, the last cut short), not 20 000 passes - 1.28
    million steps before (step_counters.py)."""
    log, output = agent(tmp_path, PY, str(SCRIPTS / "while_steps.py"))
    events, _ = read_log(log)
    plan = next(e for e in events if isinstance(e, Plan) and e.steps)
    assert (plan.steps, plan.epochs) == (20000, 313), plan
    assert "while step < train_num_steps" in plan.source and "20000 steps" in plan.source
    assert isinstance(events[-1], End) and events[-1].status == "probe-done"
    assert "post-training code ran" in output  # the while left at its next pass, as a break


def test_a_hand_written_batch_iterator_makes_the_epoch(tmp_path: Path) -> None:
    """Before: no DataLoader and an iterable of the program's own - 'steps per epoch unknown',
    the job ranked per 1 000 steps though it says 40 epochs of len(loader) batches."""
    log, output = agent(tmp_path, PY, str(SCRIPTS / "own_loader.py"), extra=GOES_ON)
    events, _ = read_log(log)
    start = next(e for e in events if isinstance(e, Start))
    assert start.steps_per_epoch == 8192 // 32
    plan = next(e for e in events if isinstance(e, Plan) and e.steps)
    assert (plan.epochs, plan.steps) == (40, 40 * 256) and "in loader" in plan.source
    assert {e.epoch for e in events if isinstance(e, Step)} >= {0, 1}  # a boundary timed
    assert "post-training code ran" in output


def test_a_generator_of_minibatches_makes_the_epoch(tmp_path: Path) -> None:
    """Before: 'steps per epoch unknown (no DataLoader seen)', ranked per 1 000 steps."""
    log, output = agent(tmp_path, PY, str(SCRIPTS / "generator_batches.py"), extra=GOES_ON)
    events, _ = read_log(log)
    assert next(e for e in events if isinstance(e, Start)).steps_per_epoch == 8192 // 32
    plan = next(e for e in events if isinstance(e, Plan) and e.steps)
    assert (plan.epochs, plan.steps) == (40, 40 * 256) and "iterate_minibatches" in plan.source
    assert {e.epoch for e in events if isinstance(e, Step)} >= {0, 1}  # a boundary timed
    assert "post-training code ran" in output


def test_a_generator_yielding_the_loaders_batches_makes_the_epoch(tmp_path: Path) -> None:
    """torchvision's references: ``for x, y in metric_logger.log_every(data_loader, ...)`` in
    ``train_one_epoch``, called once an epoch from ``main``'s loop. Before: the generator's
    loop over the loader was not counted (a DataLoader has no length of its own to the reader)
    - no length at all, ranked per 1 000 steps (loops._loader_generator)."""
    log, output = agent(tmp_path, PY, str(SCRIPTS / "metric_logger.py"), extra=GOES_ON)
    events, _ = read_log(log)
    plan = next(e for e in events if isinstance(e, Plan) and e.steps)
    assert (plan.epochs, plan.steps) == (40, 40 * 128) and "log_every" in plan.source
    assert {e.epoch for e in events if isinstance(e, Step)} >= {0, 1}  # a boundary timed
    assert "post-training code ran" in output


def test_a_train_and_val_phase_loop_steps_once_an_epoch(tmp_path: Path) -> None:
    """The transfer-learning tutorial's ``for phase in ["train", "val"]`` around
    ``dataloaders[phase]``. Before: no length (a loader picked from a dict was not the
    training loader to the reader), ranked per 1 000 steps; the phase loop counted twice an
    epoch where a name was iterated (split_loops.py)."""
    log, output = agent(tmp_path, PY, str(SCRIPTS / "train_val_phases.py"), extra=GOES_ON)
    events, _ = read_log(log)
    plan = next(e for e in events if isinstance(e, Plan) and e.steps)
    assert (plan.epochs, plan.steps) == (30, 30 * 128) and not plan.every
    assert "stepping in 'train' only" in plan.source
    assert {e.epoch for e in events if isinstance(e, Step)} >= {0, 1}  # a boundary timed
    assert "post-training code ran" in output


def test_a_generator_wrapping_the_validation_loader_is_not_given_an_empty_pass(
        tmp_path: Path) -> None:
    """timm's PrefetchLoader shape: a generator one batch behind, which crashes on a pass with
    no batches. Before: once the probe ended training, the validation pass left in that epoch
    was emptied and the program died of an UnboundLocalError (timm's train.py, exit 1) -
    its post-training code never ran. Such a pass runs whole now."""
    log, output = agent(tmp_path, PY, str(SCRIPTS / "prefetch_wrapper.py"),
                        extra=("--batch-size", "32", "--max-steps", "30",
                               "--boundary-budget", "0"))
    events, _ = read_log(log)
    end = events[-1]
    assert isinstance(end, End) and end.exit_code == 0 and end.status == "probe-done", end
    assert "post-training code ran" in output


def test_a_break_on_the_kl_ends_each_epochs_policy_steps_and_the_bounds_reach_that(
        tmp_path: Path) -> None:
    """Spinning Up's PPO shape: each epoch up to 80 policy steps (a loop that breaks once the
    KL is too far), then 80 value steps - an epoch is 160 steps at most, 81 at the soonest (the
    value loop's are counted: before, 80, and a 2 000-epoch job came out at -51 %). The probe
    goes on for the break and sees the run whole; a repeat may take from 81 steps an epoch to
    160, at the steady step's time - the low bound is that run's, not 0 s (an epoch's rollout
    runs whatever the break)."""
    log, _ = agent(tmp_path, PY, str(SCRIPTS / "kl_break.py"), extra=GOES_ON)
    events, _ = read_log(log)
    plan = next(e for e in events if isinstance(e, Plan) and e.steps)
    assert (plan.epochs, plan.steps, plan.earliest_steps, plan.earliest_pass_steps) == (
        30, 30 * 160, 30 * 81, 81)
    assert "range(train_v_iters)" in plan.source
    assert any(isinstance(e, Log) and e.code == "early-stop" and "kl > 1.5 * target_kl" in e.msg
               for e in events)
    assert next(e for e in events if isinstance(e, Done)).status == "complete"
    # both loops' steps are in the length read: no warning that they are not
    assert not any(isinstance(e, Log) and e.code == "alternating-optimizers" for e in events)
    # the epochs are the program's: the loop around the steps marks them, however many steps
    # its break leaves an epoch - and every step of both loops is told
    steps = [e for e in events if isinstance(e, Step)]
    assert {e.epoch for e in steps} == set(range(30))
    assert all(81 <= sum(e.epoch == k for e in steps) <= 160 for k in range(30))
    state = load_probe(log).state
    est = measured_run(state, estimate_runtime(state, 30))  # a run seen whole: its own answer
    assert "a break can end each epoch's loop sooner" in " ".join(est.notes)
    assert 0.3 * est.runtime_s < est.low_s < est.runtime_s < est.high_s


def test_a_ppo_shaped_job_stopped_early_is_estimated_at_the_steps_its_epochs_took(
        tmp_path: Path) -> None:
    """The same shape at 20 000 epochs (hours: no wait sees it whole): the probe stops it after a
    few. Its epochs in the log are the program's (it prints each one it ends), and the estimate
    takes the steps an epoch the probe saw its epochs take, the high bound reaching the planned
    160 and the low the soonest 81 (before: 80 steps an epoch by count, epochs out of step with
    the program's)."""
    log, output = agent(tmp_path, PY, str(SCRIPTS / "kl_break.py"), "20000")
    events, _ = read_log(log)
    assert next(e for e in events if isinstance(e, Done)).status == "probe-done"
    steps = [e for e in events if isinstance(e, Step)]
    printed = [int(line.split()[1]) for line in output.splitlines() if line.startswith("epoch ")]
    assert printed and max(e.epoch for e in steps) in (printed[-1], printed[-1] + 1)
    state = load_probe(log).state
    length = resolve(state)
    whole = [sum(e.epoch == k for e in steps) for k in range(max(e.epoch for e in steps))]
    assert length.n_it == min(160, round(sum(whole) / len(whole)))
    assert length.n_ep == 20000
    est = estimate_runtime(state, length.n_ep, n_it=length.n_it)
    planned = estimate_runtime(state, 20000, n_it=160)
    assert est.high_s >= planned.high_s and est.low_s <= est.runtime_s <= planned.runtime_s


def test_a_hydra_style_configs_settings_are_the_length(tmp_path: Path) -> None:
    """Hydra hands a program an OmegaConf DictConfig: the loops' bounds are its keys (before:
    no epochs read, the length unknown)."""
    pytest.importorskip("omegaconf")
    log, output = agent(tmp_path, PY, str(SCRIPTS / "omegaconf_loop.py"), "train.epochs=40")
    events, _ = read_log(log)
    start = next(e for e in events if isinstance(e, Start))
    assert start.steps_per_epoch == 4096 // 64
    plan = next(e for e in events if isinstance(e, Plan) and e.steps)
    assert (plan.epochs, plan.steps) == (40, 40 * 64) and "cfg.train.epochs" in plan.source
    assert "post-training code ran" in output


# The loop ends its function: no line to go on from, the probe can only unwind it
GUARDED = """import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(8192, 32); y = (x[:, 0] > 0).long()
model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 2))
opt = torch.optim.Adam(model.parameters(), 1e-3)


def train():
    for epoch in range(50):
        for i in range(0, len(x), 32):
            try:
                opt.zero_grad()
                nn.functional.cross_entropy(model(x[i:i + 32]), y[i:i + 32]).backward()
                opt.step()
            except Exception:  # a bad batch is skipped
                pass


train()
print("never printed")
"""


def test_a_step_wrapped_in_except_exception_is_still_stopped(tmp_path: Path) -> None:
    """A loop the probe can only unwind (it ends its function): ProbeStop leaves through the
    program's own `except Exception:` around its step (it is a BaseException), and the loop
    does not train on, unobserved, for all its 50 epochs."""
    script = tmp_path / "guarded.py"
    script.write_text(GUARDED)
    log, output = agent(tmp_path, PY, str(script), extra=("--max-steps", "20",
                                                          "--boundary-budget", "0"), timeout=120)
    events, _ = read_log(log)
    assert len([e for e in events if isinstance(e, Step)]) == 20
    assert "no-post" in {e.code for e in events if isinstance(e, Log)}
    assert "never printed" not in output
    assert isinstance(events[-1], End) and events[-1].status == "probe-done"


def test_torchrun_two_ranks_stop_together_and_rank_0_is_timed(tmp_path: Path) -> None:
    # a free port: another suite on this machine runs this test too (a fixed one collided)
    port = str(free_port("127.0.0.1"))
    log, output = agent(tmp_path, TORCHRUN, "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
                        "--master_port", port, str(SCRIPTS / "ddp.py"))
    events, _ = read_log(log)
    start = next(e for e in events if isinstance(e, Start))
    assert start.steps_per_epoch == 4096 // 2 // 32  # each rank's share (DistributedSampler)
    assert '"rank"' not in log.read_text().splitlines()[0]  # rank 0 leads (others carry a rank)
    assert "rank 0 finished" in output and "rank 1 finished" in output  # both left the loop
    logs = {e.code: e.msg for e in events if isinstance(e, Log)}
    assert "rank 0" in logs["multi-process"]
    assert isinstance(events[-1], End) and events[-1].exit_code == 0
    no_process_left(str(SCRIPTS / "ddp.py"))


def test_an_evaluation_every_tenth_epoch_is_counted_ten_times_in_a_hundred(tmp_path: Path) -> None:
    """`if epoch % 10 == 0: evaluate()` in the epochs loop: the plan says after which epochs
    (every 10th, from epoch 0); the probe times the pass after epoch 0 and sees epoch 1 end
    without one, so the estimate counts 10 passes of 100 epochs (a pass an epoch: +104 % on
    such a job)."""
    log, output = agent(tmp_path, PY, str(SCRIPTS / "eval_every.py"), extra=GOES_ON)
    events, _ = read_log(log)
    plan = next(e for e in events if isinstance(e, Plan))
    assert (plan.epochs, plan.every_epochs, plan.every_epochs_at) == (100, 10, 0)
    assert "(epoch + plus) % every == 0" in plan.every_epochs_source and plan.every is None
    assert [v.epoch for v in events if isinstance(v, Val)][:1] == [0]
    est = estimate_runtime(load_probe(log).state, 100)
    assert est.equation == "5.3" and est.terms.n_val == 10


def test_an_evaluation_every_tenth_epoch_and_the_last_is_counted_there(tmp_path: Path) -> None:
    """`if epoch % args.val_freq == 0 or epoch == args.epochs - 1:` (DINO's form): after every
    10th epoch and the last - 6 passes in 45 epochs. Read as no epochs, the pass the probe timed
    after epoch 0 was charged at each of the 45."""
    log, _ = agent(tmp_path, PY, str(SCRIPTS / "eval_last.py"), extra=GOES_ON)
    events, _ = read_log(log)
    plan = next(e for e in events if isinstance(e, Plan))
    assert (plan.epochs, plan.every_epochs, plan.every_epochs_at) == (45, 10, 0)
    assert plan.every_epochs_last and not plan.every_epochs_first
    est = estimate_runtime(load_probe(log).state, 45)
    assert est.equation == "5.3" and est.terms.n_val == 6


def test_the_probe_goes_on_to_the_first_epoch_an_evaluation_follows(tmp_path: Path) -> None:
    """`if (epoch + 1) % 4 == 0: evaluate()`: no pass in the 3 000 steps (epochs of 1 024) the
    probe goes on for by itself, so it goes on to the 5th epoch's first step (within the
    boundary budget), times the pass after the 4th, and the estimate counts 25 of them."""
    log, _ = agent(tmp_path, PY, str(SCRIPTS / "eval_every.py"), "after", extra=GOES_ON)
    events, _ = read_log(log)
    plan = next(e for e in events if isinstance(e, Plan))
    assert (plan.every_epochs, plan.every_epochs_at) == (4, 3)
    assert [v.epoch for v in events if isinstance(v, Val)][:1] == [3]
    assert max(s.epoch for s in events if isinstance(s, Step)) >= 4
    assert any("works after epoch 4" in e.msg for e in events if isinstance(e, Log))
    est = estimate_runtime(load_probe(log).state, 100)
    assert est.equation == "5.3" and est.terms.n_val == 25


def test_work_by_hand_every_tenth_epoch_lands_on_ten_boundaries(tmp_path: Path) -> None:
    """The same `if epoch % 10 == 0`, its work a test by hand (no loader, no validation pass):
    the boundary after epoch 0 carries it, the next does not - 10 of the 100 epochs end with it,
    on top of the other boundaries' cost."""
    log, _ = agent(tmp_path, PY, str(SCRIPTS / "eval_every.py"), "hand", extra=GOES_ON)
    events, _ = read_log(log)
    assert not [v for v in events if isinstance(v, Val)]
    est = estimate_runtime(load_probe(log).state, 100)
    t = est.terms
    assert t.n_per == 10 and t.t_per is not None and t.t_per > t.t_ep
    assert any("after epochs 1, 11, 21, ... (10 of 100)" in n for n in est.notes)


def test_ranks_agree_on_rank_0s_stop_at_agreed_steps_not_at_every_step(tmp_path: Path) -> None:
    """A collective at every step (and, on NCCL, the host waiting for the device at each) made a
    torchrun job of 1 ms steps 1.6x slower under the agent: rank 0's stop now reaches the other
    ranks at steps they agreed on, about AGREE_EVERY_S of steps apart - every rank leaves at the
    same step, that much after rank 0 decided, with a collective every few dozen steps."""
    from probecast.core.agent.adapters.torch_devices import AGREE_EVERY_S
    port = str(free_port("127.0.0.1"))
    r = subprocess.run([TORCHRUN, "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
                        "--master_port", port, str(SCRIPTS / "agree.py")],
                       capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    (at0, n0, took), (at1, n1, _) = ((float(w) for w in (tmp_path / f"left-{rank}.txt").read_text(
    ).split()) for rank in (0, 1))
    assert at0 == at1 and n0 == n1  # together, at the same step, after as many agreements
    # within the agreement's interval of rank 0's decision (a step is 1 ms or more: fewer steps)
    assert 400 <= at0 <= 400 + AGREE_EVERY_S / 0.001 + 1
    assert n0 <= 2 * took / AGREE_EVERY_S + 5  # about one each AGREE_EVERY_S, not one a step


def test_torchrun_ranks_leave_a_range_loop_together_and_meet_after_it(tmp_path: Path) -> None:
    """No DataLoader to run dry: every rank leaves its loop at the same step (the stop flag's
    all_reduce), at its next line, and the collective after training finds them all."""
    port = str(free_port("127.0.0.1"))
    log, output = agent(tmp_path, TORCHRUN, "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
                        "--master_port", port, str(SCRIPTS / "ddp_range.py"), timeout=180)
    events, _ = read_log(log)
    assert len([e for e in events if isinstance(e, Step)]) < 20000  # stopped early
    assert "rank 0 after training: 2 ranks" in output and "rank 1 after training: 2 ranks" in output
    assert any("loop left at its next line" in e.msg for e in events if isinstance(e, Log))
    assert isinstance(events[-1], End) and events[-1].exit_code == 0
    no_process_left(str(SCRIPTS / "ddp_range.py"))


def test_lightning_is_stopped_through_its_trainer_and_gives_its_epochs(tmp_path: Path) -> None:
    pytest.importorskip("lightning")
    log, output = agent(tmp_path, PY, str(SCRIPTS / "lit.py"))
    events, _ = read_log(log)
    start = next(e for e in events if isinstance(e, Start))
    assert "Lightning" in start.framework and start.epochs == 60
    assert start.steps_per_epoch == 112  # its fetcher reads ahead: not taken for accumulation
    assert [e for e in events if isinstance(e, Val)]
    assert "after fit: epochs run" in output
    epochs_run = int(output.split("after fit: epochs run")[1].split()[0])
    assert epochs_run < 60  # 60 x 112 steps: more than the probe goes on for on any machine


def test_lightning_validation_every_fourth_epoch_is_counted_fifteen_times(tmp_path: Path) -> None:
    """Trainer(check_val_every_n_epoch=4): validation after epochs 4, 8, ... - the plan says so,
    the probe goes on to the 5th epoch for the first pass if it has not reached it, and 60
    epochs count 15 passes, not 60."""
    pytest.importorskip("lightning")
    log, _ = agent(tmp_path, PY, str(SCRIPTS / "lit.py"), "every4", extra=GOES_ON)
    events, _ = read_log(log)
    plans = [e for e in events if isinstance(e, Plan) and e.every_epochs]
    assert plans and (plans[0].every_epochs, plans[0].every_epochs_at) == (4, 3)
    vals = [v.epoch for v in events if isinstance(v, Val)]
    assert vals and vals[0] == 3
    est = estimate_runtime(load_probe(log).state, 60)
    assert est.equation == "5.3" and est.terms.n_val == 15


def test_lightning_validation_twice_an_epoch_is_counted_twice(tmp_path: Path) -> None:
    """Trainer(val_check_interval=0.5, accumulate_grad_batches=4): 112 batches an epoch, 28
    steps, a validation after batches 56 and 112 - every 14 steps (the plan), both passes of
    each epoch counted. Before: one an epoch (-11.7 % on such a run, 80 epochs)."""
    pytest.importorskip("lightning")
    log, _ = agent(tmp_path, PY, str(SCRIPTS / "lit.py"), "half", extra=GOES_ON)
    events, _ = read_log(log)
    plan = next(e for e in events if isinstance(e, Plan) and e.every)
    assert plan.every == 14 and "val_check_interval=0.5" in plan.every_source
    est = estimate_runtime(load_probe(log).state, 60)
    assert est.terms.every == 14 and est.terms.n_per == (60 * 28 - 1) // 14
    assert est.terms.t_per and est.terms.t_val is None


def test_a_lightning_early_stop_within_reach_is_waited_for_and_seen_whole(tmp_path: Path) -> None:
    """Lightning's EarlyStopping (patience 2: its soonest end after 3 validations, one an
    epoch): the agent reads it from the Trainer, says the 40 epochs are an upper bound, and goes
    on for the program's own end - the run stops itself after 3 epochs, seen whole."""
    pytest.importorskip("lightning")
    from probecast.core.model.state import fold_all

    log, output = agent(tmp_path, PY, str(SCRIPTS / "lit.py"), "early",
                        extra=("--max-steps", "8"))
    events, _ = read_log(log)
    plan = next(e for e in events if isinstance(e, Plan))
    assert plan.epochs == 40 and plan.earliest_epochs == 3
    said = {e.code: e.msg for e in events if isinstance(e, Log)}
    assert "upper bound" in said["early-stop"]
    assert any("an early stop can end training from epoch 3 of 40" in e.msg
               for e in events if isinstance(e, Log))
    assert "after fit: epochs run 3" in output
    assert next(e for e in events if isinstance(e, Done)).status == "complete"
    st = fold_all(events)
    assert st.steps == 3 * 28 and isinstance(events[-1], End) and events[-1].exit_code == 0


def test_a_lightning_cli_program_parses_its_trainer_and_is_probed(tmp_path: Path) -> None:
    """LightningCLI builds its parser from the Trainer's signature: the agent's patched
    constructor must keep it (it failed with 'No action for key "trainer.max_epochs"'). A command
    that takes no batch size: its log's is the training DataLoader's own. A callback's
    next(iter(DataLoader(...))) at the epoch's end after the stop draws its sample (it was run
    dry and the whole program unwound: no test after fit), and the test after fit is timed."""
    pytest.importorskip("lightning")
    pytest.importorskip("jsonargparse")
    log, output = agent(tmp_path, PY, str(SCRIPTS / "lit_cli.py"),
                        extra=())  # the command takes none
    events, _ = read_log(log)
    start = next(e for e in events if isinstance(e, Start))
    assert "Lightning" in start.framework and start.epochs == 60
    assert start.steps_per_epoch == 112 and start.batch_size == 32
    epochs_run = int(output.split("after fit: epochs run")[1].split()[0])
    assert epochs_run < 60  # 60 x 112 steps: more than the probe goes on for on any machine
    assert output.count("sampled (3, 32)") == epochs_run and "tested after training" in output
    assert "no-post" not in {e.code for e in events if isinstance(e, Log)}
    assert load_probe(log).state.post_time is not None
    assert isinstance(events[-1], End) and events[-1].exit_code == 0


def test_hugging_face_trainer_is_stopped_through_its_control(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    log, output = agent(tmp_path, PY, str(SCRIPTS / "hf.py"), str(tmp_path / "hf-out"),
                        extra=("--max-steps", "20", "--boundary-budget", "0"))
    events, _ = read_log(log)
    start = next(e for e in events if isinstance(e, Start))
    assert "Hugging Face Trainer" in start.framework and start.epochs == 8
    assert start.steps_per_epoch == 100
    global_step = int(output.split("after train: global step")[1].split()[0])
    assert global_step < 8 * 100


def test_a_hugging_face_early_stop_within_reach_is_waited_for_and_seen_whole(
        tmp_path: Path) -> None:
    """The Trainer's EarlyStoppingCallback (patience 2, evaluating every 10 steps: its soonest
    end after 3 evaluations, 30 steps): the agent reads it from the Trainer's callbacks and
    arguments, says the 30 epochs are an upper bound and goes on for the program's own end -
    train() stops itself after 3 evaluations. (Evaluating every epoch, the same in epochs:
    test_length's unit tests on real TrainingArguments.)"""
    pytest.importorskip("transformers")
    log, output = agent(tmp_path, PY, str(SCRIPTS / "hf.py"), str(tmp_path / "hf-out"), "early",
                        extra=("--max-steps", "8"))
    events, _ = read_log(log)
    plan = next(e for e in events if isinstance(e, Plan))
    assert plan.epochs == 30 and (plan.earliest_epochs, plan.earliest_steps) == (None, 30)
    said = [e for e in events if isinstance(e, Log)]
    assert any(e.code == "early-stop" and "upper bound" in e.msg for e in said)
    assert any("an early stop can end training from step 30 of 600" in e.msg for e in said)
    assert "after train: global step 30" in output
    assert next(e for e in events if isinstance(e, Done)).status == "complete"
    assert isinstance(events[-1], End) and events[-1].exit_code == 0


def test_the_built_in_torch_workload_probes_headless(tmp_path: Path) -> None:
    r = subprocess.run([PY, "-m", "probecast.tui", "probe", "--headless", "--local",
                        "--workload", "torch-cnn", "--batch-size", "128", "--max-steps", "12",
                        "--train-size", "2000", "--val-size", "400",  # the probe reaches epoch 2
                        "--out", str(tmp_path / "logs")], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    (log,) = (tmp_path / "logs").glob("*.jsonl")
    st = load_probe(log).state
    assert st.start is not None and st.start.workload == "torch-cnn"
    assert st.start.steps_per_epoch == -(-2000 // 128)
    assert st.boundary_steps  # an epoch boundary timed, as the default probe does
    assert "Ranking" in r.stdout


def test_a_stopped_probe_names_the_checkpoints_it_left_in_the_programs_folder(
        tmp_path: Path) -> None:
    """The program saves a checkpoint each epoch in its own folder; the probe stops it after its
    first: the log says, before its end, which files the stopped run left there (the
    checkpoint first) and the estimate passes it on - a file that was there before is not
    named, nor probecast's own. A run to its end says nothing (it left what a plain run does)."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "data.bin").write_bytes(b"\0" * 64)
    os.utime(work / "data.bin", (1_000_000_000, 1_000_000_000))  # there before the probe
    script = SCRIPTS / "checkpoints.py"

    def probe(*extra: str) -> list:
        log = work / "probecast-logs" / "p.jsonl"
        log.parent.mkdir(exist_ok=True)
        with open(log, "w") as fh:
            r = subprocess.run([PY, "-m", "probecast.core.agent", "run", "--probe", "p",
                                "--output", str(work / ".probecast-p.output"), *extra, "--",
                                PY, str(script)],
                               cwd=work, stdout=fh, stderr=subprocess.PIPE, text=True, timeout=240)
        assert r.returncode == 0, r.stderr[-3000:]
        return read_log(log)[0]

    events = probe("--max-steps", "40")
    assert isinstance(events[-1], End) and events[-1].status == "probe-done"
    said = [e for e in events if isinstance(e, Log) and e.code == "left-files"]
    assert len(said) == 1 and events[-2] is said[0] and said[0].level == "warning"
    msg = said[0].msg
    assert "2 file(s)" in msg and msg.index("checkpoints/last.pt") < msg.index("results.txt")
    assert "data.bin" not in msg and "probecast" not in msg.split(":", 1)[1]
    assert said[0].t <= events[-1].t
    est = estimate_runtime(load_probe(work / "probecast-logs" / "p.jsonl").state, 8)
    assert any("checkpoints/last.pt" in n for n in est.notes)  # the detail view, --json

    (work / "results.txt").unlink()
    events = probe("--full")
    assert events[-1].status == "complete"
    assert not [e for e in events if isinstance(e, Log) and e.code == "left-files"]


def test_keras_on_the_torch_backend_is_timed_once_by_keras(tmp_path: Path) -> None:
    """keras.io's backend-agnostic examples set KERAS_BACKEND=torch: fit() then trains through
    torch autograd, and the PyTorch hook saw a backward pass a batch - each batch came out as
    two steps (a 5.5 ms one and a 1 ms one: the step time halved, -65 % on keras.io's
    structured-data example) and every internal DataLoader pass as a validation. Keras' own
    loop times it: one step a batch, its validation passes only."""
    pytest.importorskip("keras")
    log, output = agent(tmp_path, PY, str(SCRIPTS / "keras_torch_backend.py"),
                        extra=("--max-steps", "30"))
    events, report = read_log(log)
    assert not report.malformed
    steps = [(e.epoch, e.step) for e in events if isinstance(e, Step)]
    assert len(steps) == len(set(steps)), "a batch timed twice"
    assert [s for e, s in steps if e == 0] == list(range(32))  # 1024 samples / 32
    vals = [e for e in events if isinstance(e, Val)]
    assert vals and all(v.metrics for v in vals)  # Keras' passes, with its metrics
    start = next(e for e in events if isinstance(e, Start))
    assert start.framework.endswith("(torch backend)") and events[-1].status == "probe-done"
    assert "evaluated" in output
    # no tf.data under it: no autotuner stall is forecast (constants of a mechanism with no
    # recorded runs: the boundaries it saw come again, a stall allowed for on the high side only)
    est = estimate_runtime(load_probe(log).state, 8)
    assert est.terms.p_stall in (None, 0.0) and not any("autotuner" in n for n in est.notes)


def test_a_keras_custom_loop_on_the_torch_backend_runs_where_tensorflow_is_not(
        tmp_path: Path) -> None:
    """Keras' optimizer applied outside fit() on the torch backend, with no TensorFlow to
    import: the hook asked TensorFlow whether the step ran eagerly and the program died of its
    ImportError under the probe (as did a Keras custom loop on the jax backend) - it runs
    plainly. Each apply is a step now, the loop's length read, the program goes on."""
    pytest.importorskip("keras")
    log, output = agent(tmp_path, PY, str(SCRIPTS / "keras_torch_loop.py"),
                        extra=("--max-steps", "30"))
    events, _ = read_log(log)
    assert isinstance(events[-1], End) and events[-1].status == "probe-done", events[-1]
    plan = next(e for e in events if isinstance(e, Plan) and e.steps)
    assert (plan.epochs, plan.steps) == (40, 40 * 64)
    assert len([e for e in events if isinstance(e, Step)]) >= 30
    assert "post-training code ran" in output


BACKWARD_RESTORED = """
import io, torch
from probecast.core.agent.emit import Emitter
from probecast.core.agent.probe_session import ProbeSession
from probecast.core.agent.adapters.torch_loops import TorchLoopsAdapter
original = torch.autograd.backward
TorchLoopsAdapter(ProbeSession(Emitter(out=io.StringIO()))).install()
patched = torch.autograd.backward is not original
torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
print(patched, torch.autograd.backward is original)
"""


def test_backward_is_torchs_own_again_once_an_optimizer_is_made() -> None:
    """The hook wraps backward only to count a program's steps when it makes no optimizer;
    once one is made the wrapper would only cost each backward pass a frame (bwd +1 % on a 0.5 ms
    step): torch's own function is put back."""
    out = subprocess.run([PY, "-c", BACKWARD_RESTORED], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.split() == ["True", "True"]


RAISES = """
import sys, torch
w = torch.zeros(4, requires_grad=True)
x = torch.randn(256, 4)
for t in range(2000):
    loss = ((x @ w - 1.0) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.01 * w.grad
        w.grad = None
    if sys.argv[1] == "in-training" and t == 2:
        raise ValueError("bad value at step 3")
if sys.argv[1] == "after-training":
    raise ValueError("the plot after training")
"""


@pytest.mark.parametrize("where, status", [("in-training", "failed"),
                                           ("after-training", "complete")])
def test_an_error_that_ends_training_early_is_a_failure_not_its_end(
        tmp_path: Path, where: str, status: str) -> None:
    """A loop of hand-written updates (a backward pass a step, no optimizer) whose program
    raises at its 3rd step of 2 000 (pytorch/tutorials' 'Tensors and autograd' raises at its 1st
    on PyTorch 2.13): training did not run to its end - the probe said 'done, complete'. One that
    raises after its last step trained whole: its end says the exit status after training."""
    script = tmp_path / "raises.py"
    script.write_text(RAISES)
    log = tmp_path / "p.jsonl"
    r = subprocess.run([PY, "-m", "probecast.core.agent", "run", "--full", "--out", str(log), "--",
                        PY, str(script), where], cwd=tmp_path, capture_output=True, text=True,
                       timeout=240)
    events = read_log(log)[0]
    done, end = next(e for e in events if isinstance(e, Done)), events[-1]
    assert isinstance(end, End) and end.exit_code == 1
    assert (done.status, end.status) == (status, status), (done, end)
    assert (r.returncode != 0) == (status == "failed")
    if status == "failed":
        assert "raised ValueError at step 3" in end.reason
    else:
        assert "then the program exited with status 1" in end.reason
