"""Calibration (core/model/calibrate*.py): each fit on inputs whose answer is known by hand or by
construction, and the shipped calibration.json as the module makes it of the committed corpus."""

from __future__ import annotations

import gzip
import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import cast

import numpy as np
import pytest

from conftest import ROOT
from probecast.core.model.calibrate import main as calibrate
from probecast.core.model.estimate.bounds import (OTHER, TF, TORCH, Calibration, _load_all,
                                                  calibration_key, on_gpu, pick)
from probecast.core.model.calibrate.bounds import (GRID, boundary_costs, can_promise, conformal,
                                                   fit_all, fit_beta_binomial, fit_device,
                                                   fit_noise, needed_q)
from probecast.core.model.calibrate.runs import evaluate, load_pairs
from probecast.core.model.logstore import load_probe
from probecast.core.model.calibrate.pairs import (Decision, claim_threshold, correlation,
                                                  fit_kappa, standardised_error)
from probecast.core.model.calibrate.runs import Pair, Result, content_digest
from probecast.core.model.rank.decisions import BOUND_Z, PairConstants

# ---- split conformal ---------------------------------------------------------------------------


def test_conformal_takes_the_ceil_n_plus_1_times_coverage_th_smallest() -> None:
    # 19 values: ceil(20 * 0.9) = 18 -> the 18th smallest, whatever the order given
    values = [float(v) for v in range(19, 0, -1)]
    assert conformal(values) == 18.0
    # 9 values: ceil(10 * 0.9) = 9 -> the largest; 5: ceil(6 * 0.9) = 6 > 5 -> the largest too
    assert conformal([3.0, 1.0, 2.0, 9.0, 4.0, 5.0, 8.0, 7.0, 6.0]) == 9.0
    assert conformal([0.5, 0.1, 0.3, 0.2, 0.4]) == 0.5
    # at 50 %: ceil(10 * 0.5) = 5 -> the 5th smallest of 9
    assert conformal([9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0], coverage=0.5) == 5.0
    # rounded up, never down: 12 values, 13 * 0.9 = 11.7 -> the 12th; 10 at 50 %: 5.5 -> the 6th
    assert conformal([float(v) for v in range(1, 13)]) == 12.0
    assert conformal([float(v) for v in range(1, 11)], coverage=0.5) == 6.0
    assert math.isnan(conformal([]))


# ---- the noise model: x ~ N(0, a^2 + (b w)^2 + c^2 / T + s^2) ----------------------------------


def _one_step(fitted: float, true: float) -> bool:
    """Within one step of fit_noise's grid (its values grow by 20 % a step)."""
    return true / 1.2 <= fitted <= true * 1.2


def test_fit_noise_recovers_a_level_and_a_share_of_the_wander() -> None:
    rng = np.random.default_rng(7)
    a, b = GRID[10], GRID[18]  # 0.031, 0.133
    w = rng.uniform(0.0, 0.3, 4000)
    x = rng.normal(0.0, np.sqrt(a * a + (b * w) ** 2))
    rows = [(float(xi), float(wi), 1.0) for xi, wi in zip(x, w)]
    fa, fb, fc = fit_noise(rows, with_length=False)
    assert _one_step(fa, a) and _one_step(fb, b) and fc == 0.0


def test_fit_noise_tells_load_that_averages_out_from_a_level_shift() -> None:
    rng = np.random.default_rng(11)
    c = GRID[20]  # 0.19: the deviation of a 1-second run; a 100-second one drifts 10 x less
    t = rng.choice([1.0, 10.0, 100.0, 1000.0], 400)  # 400 rows: 31^3 grid points each
    x = rng.normal(0.0, c / np.sqrt(t))
    rows = [(float(xi), 0.0, float(ti)) for xi, ti in zip(x, t)]
    fa, fb, fc = fit_noise(rows, with_length=True)
    assert _one_step(fc, c)
    assert fa < 0.01 and fb == 0.0  # no level shift, nothing from the wander
    # without the length term the same runs read as one level shift in between
    assert fit_noise(rows, with_length=False)[2] == 0.0


def test_fit_noise_counts_the_probes_own_error_apart() -> None:
    """Deviations wholly explained by each probe's known standard error leave nothing to fit."""
    rng = np.random.default_rng(3)
    s = rng.uniform(0.02, 0.1, 400)
    x = rng.normal(0.0, s)
    rows = [(float(xi), 0.1, 1.0, float(si)) for xi, si in zip(x, s)]
    fa, fb, fc = fit_noise(rows, with_length=True)
    assert math.sqrt(fa ** 2 + (fb * 0.1) ** 2 + fc ** 2) < 0.02  # little besides (sampling)
    # counted as unknown, the same deviations are a noise of their own: ~6 % (sqrt E[s^2])
    fa, fb, fc = fit_noise([r[:3] for r in rows], with_length=True)
    assert math.sqrt(fa ** 2 + (fb * 0.1) ** 2 + fc ** 2) == pytest.approx(0.064, rel=0.2)


def test_fit_noise_on_too_few_runs_keeps_the_defaults() -> None:
    rows = [(0.5, 0.1, 1.0)] * 3
    assert fit_noise(rows, with_length=True) == (Calibration.drift_base,
                                                 Calibration.drift_per_wander, 0.0)


# ---- stall odds and boundary costs -------------------------------------------------------------


def test_beta_binomial_of_runs_that_agree_is_narrow_around_their_share() -> None:
    a, b = fit_beta_binomial([(10, 20)] * 50)
    assert abs(a / (a + b) - 0.5) < 0.05 and a + b > 20
    a, b = fit_beta_binomial([(15, 20)] * 50)  # a is the stalls' side
    assert abs(a / (a + b) - 0.75) < 0.05 and a + b > 20


def test_beta_binomial_of_runs_that_all_or_never_stall_is_wide() -> None:
    """Half the runs stall at every boundary, half at none: the odds are the run's, U-shaped."""
    a, b = fit_beta_binomial([(20, 20)] * 25 + [(0, 20)] * 25)
    assert a < 1 and b < 1 and abs(a - b) < 0.05
    assert fit_beta_binomial([]) == (1.0, 1.0)


def test_boundary_costs_by_hand() -> None:
    """Later boundaries cost 0.05 + 0.5 x the first: the carry is 0.5; the typical cost is the
    median of the later ones (0.25; their mean is 0.325); what is left of a run's later cost
    besides that, 0.05 + 0.5 x - 0.25 - 0.5 (x - 0.25) = -0.075."""
    firsts = [0.1, 0.3, 0.5, 1.3]
    runs = [[x, 0.05 + 0.5 * x, 0.05 + 0.5 * x] for x in firsts]
    assert boundary_costs(runs) == {"free_boundary_s": 0.25, "boundary_carry": 0.5,
                                    "boundary_run_s": 0.075, "boundary_abs_s": 0.005}
    # within a run the later boundaries spread +-0.02 around their mean: their s.d.
    spread = [[x, y - 0.02, y + 0.02] for x, _, y in runs]
    assert boundary_costs(spread)["boundary_abs_s"] == 0.02
    # the carry is a share: a slope below 0 is none, and above 1 all
    falling = [[x, 0.5 - x, 0.5 - x] for x in firsts]
    assert boundary_costs(falling)["boundary_carry"] == 0.0
    # too few runs with later boundaries to tell: the defaults stand
    assert boundary_costs(runs[:3] + [[0.1, 0.1]]) == {}


# ---- q: the multiplier that puts a run's real total inside -------------------------------------


def _result(est: float, truth: float, steps_sd: float = 0.0, low: float = 0.0,
            high: float = 0.0, cores: int = 1, program: str = "p") -> Result:
    pair = cast(Pair, _FakePair(truth, cores, program))
    u = {"steps": steps_sd, "boundaries": 0.0, "validation": 0.0, "post": 0.0, "floor": 0.0}
    return Result(pair, est, low, high, steps_sd, u, est, 2.0)


@dataclass
class _FakePair:
    """What the fits read of a pair: its real total, cores, corpus and program."""

    truth: float
    cores: int
    program: str
    corpus: str = "c"


def test_needed_q_is_how_many_sigmas_the_truth_lies_off() -> None:
    r = _result(est=100.0, truth=125.0, steps_sd=10.0)
    assert needed_q(r, Calibration()) == pytest.approx(2.5, abs=1e-9)
    assert needed_q(_result(100.0, 80.0, steps_sd=10.0), Calibration()) == pytest.approx(2.0)
    assert needed_q(_result(100.0, 700.0, steps_sd=10.0), Calibration()) == math.inf


# ---- pairs: rho, kappa, the claim threshold ----------------------------------------------------


def test_correlation_is_clamped_and_needs_six_pairs() -> None:
    xs = [(float(i), 2.0 * i + 1) for i in range(8)]
    assert correlation(xs) == 0.95  # r = 1, kept below it: a few pairs never prove +-1
    assert correlation([(x, -y) for x, y in xs]) == -0.5
    assert correlation(xs[:5]) == 0.0
    assert correlation([(1.0, 2.0)] * 8) == 0.0  # no spread: no correlation to tell
    mixed = [(1.0, 1.0), (2.0, 3.0), (3.0, 2.0), (4.0, 5.0), (5.0, 4.0), (6.0, 6.0)]
    assert correlation(mixed) == pytest.approx(15.5 / 17.5)  # sum dx dy / sum dx^2, by hand


def test_standardised_error_uses_the_side_the_truth_lies_on() -> None:
    e = math.exp(1.0)
    # bounds [est / e^2, est * e]: below 2/Z, above 1/Z log units per s.d.
    over = _result(100.0, 100.0 * math.exp(0.5), low=100.0 / e ** 2, high=100.0 * e)
    under = _result(100.0, 100.0 * math.exp(-0.5), low=100.0 / e ** 2, high=100.0 * e)
    assert standardised_error(over) == pytest.approx(0.5 * BOUND_Z)
    assert standardised_error(under) == pytest.approx(-0.25 * BOUND_Z)


def test_kappa_makes_the_ratios_90_percent_interval_hold_90_percent_of_pairs() -> None:
    """Each run's bounds put one s.d. at 1/Z log units, so with rho 0 the spread of the
    difference is sqrt(2)/Z and the 90 % interval is +-sqrt(2): kappa is the conformal error on
    the ratio over sqrt(2)."""
    e = math.exp(1.0)
    misses = [0.1 * (i + 1) for i in range(19)]  # log(real ratio / estimated ratio) of each
    made = []
    for m in misses:
        lead = _result(100.0, 100.0, low=100.0 / e, high=100.0 * e, cores=1)
        other = _result(150.0, 150.0 * math.exp(m), low=150.0 / e, high=150.0 * e, cores=2)
        made.append(Decision("p", "time", lead, other, 0.9, other.pair.truth / lead.pair.truth))
    kappa = fit_kappa(made, rho_same=0.9, rho_other=0.0)
    assert kappa == pytest.approx(conformal(misses) / math.sqrt(2))  # 1.8 / sqrt(2)
    # had their errors moved together (rho 0.5), the difference would be narrower: kappa larger
    assert fit_kappa(made, rho_same=0.0, rho_other=0.5) > kappa


def _claims(p: float, right: int, wrong: int) -> list[Decision]:
    r = _result(1.0, 1.0)
    return ([Decision("p", "time", r, r, p, 1.5) for _ in range(right)]
            + [Decision("p", "time", r, r, p, 0.8) for _ in range(wrong)])


def test_claim_threshold_is_the_lowest_p_whose_claims_are_wrong_at_most_1_in_20() -> None:
    # at 0.85 and above: 110 claims, 5 wrong: (5 + 1) / 111 > 0.05; above 0.85: 100, none wrong
    made = _claims(0.99, right=100, wrong=0) + _claims(0.85, right=5, wrong=5)
    assert claim_threshold(made) == 0.86
    # 19 right claims: 1 / 20 = 0.05 - the floor; 18: 1 / 19 > 0.05 at any P - no claim at all
    assert claim_threshold(_claims(0.9, right=19, wrong=0)) == 0.8
    assert claim_threshold(_claims(0.9, right=18, wrong=0)) == 0.99
    # never below 4-to-1 odds, however right the claims at 0.6 were
    assert claim_threshold(_claims(0.6, right=1000, wrong=0)) == 0.99
    assert claim_threshold(made, target=0.1) == 0.8  # 6 / 111 <= 0.1


def test_decision_is_decided_at_its_threshold_and_wrong_when_the_other_was_ahead() -> None:
    r = _result(1.0, 1.0)
    d = Decision("p", "time", r, r, 0.8, 0.95, PairConstants(threshold=0.8).threshold)
    assert d.decided and d.wrong and not d.differs
    assert not Decision("p", "time", r, r, 0.79, 1.2, 0.8).decided


# ---- the corpus and the shipped file -----------------------------------------------------------


def test_content_digest_is_of_the_logs_text_in_name_order(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl.gz"
    a.write_text('{"ev": "start"}\n')
    with gzip.open(b, "wt") as fh:
        fh.write('{"ev": "end"}\n')
    one = content_digest([("x/a", a), ("x/b", b)])
    assert one == content_digest([("x/b", b), ("x/a", a)])
    c = tmp_path / "c.jsonl"
    c.write_text('{"ev": "end"}\r\n')  # the same log with other line ends, not gzipped
    assert content_digest([("x/a", a), ("x/b", c)]) == one
    assert content_digest([("x/a", a), ("x/c", c)]) != one  # another name
    b.unlink()
    with gzip.open(b, "wt") as fh:
        fh.write('{"ev": "end", "t": 1}\n')
    assert content_digest([("x/a", a), ("x/b", b)]) != one


def test_the_shipped_calibration_is_what_the_module_makes_of_the_committed_corpus() -> None:
    """calibration.json regenerates byte for byte from the corpora it names (made_by); a change
    to a fit, to the model it runs or to the corpus must rewrite it
    (python -m probecast.core.model.calibrate.main --write)."""
    corpora, exclude = calibrate.shipped_inputs()
    data = calibrate.calibrate(corpora, exclude)
    assert calibrate.render(data) == calibrate.SHIPPED.read_text(), (
        "calibration.json is not what core/model/calibrate/main.py makes of its corpus: "
        "python -m probecast.core.model.calibrate.main --write")
    made = data["made_by"]
    assert made["corpora"] == ["benchmarks/corpus/runs", "benchmarks/corpus/runs-torch",
                               "benchmarks/corpus/runs-long", "benchmarks/corpus/runs-gpu-h200",
                               "benchmarks/corpus/runs-gpu-h100"]
    assert made["runs"] == 71 and made["logs"] == 142
    # what bounds.py loads is what was measured
    assert _load_all()["tf"].q == data["mechanisms"]["tf"]["q"]


def test_the_command_prints_checks_and_names_what_it_measured_on(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Given corpora of its own it measures on them (stdout: the file it would write), and
    --check fails: the shipped file was made of more."""
    torch_runs = str(ROOT / "benchmarks" / "corpus" / "runs-torch")
    assert calibrate.main([torch_runs]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["made_by"]["corpora"] == ["benchmarks/corpus/runs-torch"]
    assert data["made_by"]["exclude"] is None and data["made_by"]["runs"] == 20
    assert set(data["mechanisms"]) == {"tf", "torch"}  # Keras' set: the cautious copy
    assert calibrate.main([torch_runs, "--check"]) == 1
    assert "DIFFERS" in capsys.readouterr().out


# ---- a set per device: GPU runs get constants of their own ------------------------------------

CORPUS = ROOT / "benchmarks" / "corpus"


def _pairs(*names: str) -> list[Pair]:
    return [p for n in names for p in load_pairs([str(CORPUS / n)], n, "15ep")]


def test_can_promise_needs_nine_runs_for_90_percent() -> None:
    # ceil((n+1) * 0.9) <= n first holds at n = 9; at n = 8 conformal can only take the largest
    assert not can_promise(8) and can_promise(9) and can_promise(12)
    assert can_promise(19, coverage=0.95) and not can_promise(18, coverage=0.95)


def test_pick_falls_back_from_a_device_to_its_mechanism_then_to_cautious_keras() -> None:
    sets = {TF: Calibration(q=1.5, mechanism=TF), TORCH: Calibration(q=2.5, mechanism=TORCH),
            f"{TORCH}-gpu": Calibration(q=3.5, mechanism=f"{TORCH}-gpu")}
    assert pick(sets, "torch-gpu").q == 3.5
    assert pick(sets, "torch").q == 2.5
    assert pick(sets, "tf-gpu") is sets[TF]  # no recorded GPU runs of Keras: the CPU set
    other = pick(sets, "other-gpu")
    assert other.mechanism == OTHER and other.q == 1.5 and not other.stall_point


def test_the_key_reads_the_device_from_the_recorded_logs() -> None:
    gpu = load_probe(ROOT / "sample_logs" / "gpu-h200" / "probe-gpt_loop-b64.jsonl").state
    assert on_gpu(gpu) and calibration_key(gpu) == "torch-gpu"
    assert Calibration.for_state(gpu) == _load_all()["torch-gpu"]
    cpu = next(p for p in _pairs("runs-torch") if p.program == "hf_trainer").full
    assert not on_gpu(cpu) and calibration_key(cpu) == "torch"
    # Keras of TF 1.x on a V100: no recorded runs of its mechanism on any device
    seismic = sorted((ROOT / "sample_logs" / "reconstructed-dissertation").glob("seismic-*"))[0]
    old = load_probe(seismic).state
    assert on_gpu(old) and calibration_key(old) == "other-gpu"
    assert Calibration.for_state(old).mechanism == OTHER


def test_gpu_runs_leave_the_cpu_sets_as_they_were() -> None:
    cpu = _pairs("runs", "runs-torch", "runs-long")
    gpu = _pairs("runs-gpu-h200", "runs-gpu-h100")
    assert gpu and all(p.on_gpu for p in gpu) and not any(p.on_gpu for p in cpu)
    alone, both = fit_all(cpu), fit_all(cpu + gpu)
    assert set(both) == set(alone) | {"torch-gpu"}
    assert all(both[m] == alone[m] for m in alone)


def test_the_gpu_set_holds_its_runs_and_few_runs_keep_the_cpu_q() -> None:
    """Measured on 12 GPU runs (enough to promise 90 %), q is the largest any of them needs -
    every one inside; on the 7 of one GPU (too few) q is at least the CPU set's."""
    cpu_torch = fit_all(_pairs("runs-torch"))[TORCH]
    h200, h100 = _pairs("runs-gpu-h200"), _pairs("runs-gpu-h100")
    both = fit_device(h200 + h100, cpu_torch, "torch-gpu")
    assert both.mechanism == "torch-gpu" and can_promise(len(h200 + h100))
    results = evaluate(h200 + h100, both)
    assert len(results) == 12 and all(r.inside for r in results)
    assert both.q == pytest.approx(max(needed_q(r, both) for r in results), abs=1e-3)
    # what GPU runs cannot tell stays the CPU set's; what they measure is theirs
    assert both.boundary_abs_s == cpu_torch.boundary_abs_s and not both.stalls
    assert both.drift_base > cpu_torch.drift_base  # two GPU processes' step levels differ more
    few = fit_device(h200, cpu_torch, "torch-gpu")
    assert not can_promise(len(h200)) and few.q >= cpu_torch.q


def test_the_teardown_when_training_ends_has_odds_of_its_own() -> None:
    """On two cores the recorded Keras runs' teardowns when fit() returned stalled about half as
    often as their epoch boundaries (9 of 30 against 57 %: benchmarks/stalls.py); on one core
    as often. The ratio is measured per kind of host, and the forecast's end of training takes
    it: a two-core probe expects less at the end than at a boundary."""
    from probecast.core.model.calibrate.bounds import end_ratio, teardown_counts
    from probecast.core.model.estimate.stalls import cores_usable, forecast

    pairs = _pairs("runs", "runs-long")
    many = [p for p in pairs if cores_usable(p.full) == 2]
    stalled, told = teardown_counts(many)
    assert told >= 10 and 0 < stalled < told
    assert 0.2 < end_ratio(many) < 0.9
    one = [p for p in pairs if cores_usable(p.full) == 1]
    assert end_ratio(one) > 0.9
    cal = Calibration.load(TF)
    assert cal.stall_end_ratio_many < 0.9 <= cal.stall_end_ratio_one
    two = load_probe(CORPUS / "runs" / "probe-mnist_convnet-b256-e8-c2.jsonl.gz").state
    t_it = two.step_time("trimmed")[0]
    fc = forecast(two, t_it, two.steps_per_epoch * t_it, 7, cal)
    assert fc.p_stall > 0 and fc.stall_s > 1.0
    assert fc.fit_end < fc.per_boundary
    even = forecast(two, t_it, two.steps_per_epoch * t_it, 7,
                    replace(cal, stall_end_ratio_many=1.0))
    assert even.fit_end == pytest.approx(even.per_boundary)

