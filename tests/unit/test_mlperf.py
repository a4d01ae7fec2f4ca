"""MLPerf Training result logs -> probecast logs, on small real excerpts (tests/data/mlperf, see
its README for where each came from and what was cut).

Every expected number here is worked out by hand from the excerpt's own lines: the ``time_ms``
values are copied from them (the excerpt's line is named beside each) and the durations are their
differences. Each reader/converter bug these excerpts found (ranks, points, offsets, overlaps)
has a test here.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from probecast.core.model.events import (SCHEMA_VERSION, Block, Done, End, Epoch, Event, Init, Log,
                                         Start, Val, dumps, parse_line)
from probecast.core.model.mlperf.runs import MlRun, ResultPath, read_run, to_events
from probecast.core.model.pricing import Catalog
from probecast.core.model.state import fold_all

DATA = Path(__file__).resolve().parents[1] / "data" / "mlperf"
LLAMA = "v4.0/Oracle/results/1xBM.GPU.H100.8/llama2_70b_lora/result_1.txt"
BERT = "v3.1/Azure/results/ND_H100_v5_pytorch/bert/result_0.txt"
GNN = "v4.0/ASUSTeK/results/ESC_N8A-E12/gnn/result_4.txt"
DLRM = "v4.0/JuniperNetworks/results/a100_n8_ngc23.09_merlin_hugectr/dlrm_dcnv2/result_9.txt"
UNET = "v4.0/Oracle/results/9xBM.GPU.H100.8/unet3d/result_11.txt"
SSD = "v4.0/Oracle/results/1xBM.GPU.H100.8/ssd/result_1.txt"
RESNET = "v3.1/NVIDIA/results/eos_ngc23.09_mxnet/resnet/result_2.txt"
TINY = "v4.0/tinycorp/results/tinybox_green/resnet/result_0.txt"
SD4 = "v4.0/Quanta_Cloud_Technology/results/D74H-7U/stable_diffusion/result_3.txt"
SD3 = "v3.1/Dell/results/XE9680x8H100-SXM-80GB/stable_diffusion/result_2.txt"
ALL = [LLAMA, BERT, GNN, DLRM, UNET, SSD, RESNET, TINY, SD4, SD3]

CATALOG = Catalog.embedded()


@cache
def convert(rel: str) -> tuple[MlRun, tuple[Event, ...]]:
    run = read_run(DATA / rel)
    return run, tuple(to_events(run, CATALOG))


def s(a_ms: int, b_ms: int) -> float:
    """Seconds from one logged time_ms to a later one."""
    return (b_ms - a_ms) / 1000


def of(events: tuple[Event, ...], kind: type[Event]) -> list[Event]:
    return [e for e in events if type(e) is kind]


def blocks(rel: str) -> list[Block]:
    return [e for e in convert(rel)[1] if isinstance(e, Block)]


def vals(rel: str) -> list[Val]:
    return [e for e in convert(rel)[1] if isinstance(e, Val)]


def start(rel: str) -> Start:
    first = convert(rel)[1][0]
    assert isinstance(first, Start)
    return first


def init(rel: str) -> Init:
    found = of(convert(rel)[1], Init)
    assert len(found) == 1 and isinstance(found[0], Init)
    return found[0]


def end(rel: str) -> End:
    last = convert(rel)[1][-1]
    assert isinstance(last, End)
    return last


def approx(xs: list[float]) -> object:
    return pytest.approx(xs, abs=1e-9)


# ---- every excerpt: the schema's rules ------------------------------------------------------

@pytest.mark.parametrize("rel", ALL)
def test_timed_dt_add_up_to_the_end_and_times_never_go_back(rel: str) -> None:
    events = convert(rel)[1]
    timed = [e for e in events if isinstance(e, (Init, Block, Val, Done, End))]
    assert sum(e.dt for e in timed) == pytest.approx(end(rel).t, abs=1e-6)
    ts = [e.t for e in events]
    assert ts == sorted(ts)
    assert all(e.dt >= 0 for e in timed)


@pytest.mark.parametrize("rel", ALL)
def test_every_event_round_trips_through_the_schema(rel: str) -> None:
    events = convert(rel)[1]
    assert start(rel).v == SCHEMA_VERSION == 4
    for ev in events:
        assert parse_line(dumps(ev)) == ev


@pytest.mark.parametrize("rel", ALL)
def test_folding_the_log_sees_its_blocks_vals_and_end(rel: str) -> None:
    events = convert(rel)[1]
    state = fold_all(list(events))
    assert [(b.index, b.dt, b.progress, b.unit) for b in state.blocks] == \
        [(b.index, b.dt, b.progress, b.unit) for b in blocks(rel)]
    assert [v.dt for v in state.vals] == [v.dt for v in vals(rel)]
    assert state.elapsed == pytest.approx(end(rel).t, abs=1e-6)
    assert state.end is not None and state.end.status == end(rel).status
    assert state.t_init == init(rel).dt


@pytest.mark.parametrize("rel", ALL)
def test_where_the_result_sits_names_release_submitter_system_benchmark(rel: str) -> None:
    release, submitter, _, system, benchmark, _ = rel.split("/")
    where = ResultPath.of(DATA / rel)
    assert (where.release, where.submitter, where.system, where.benchmark) == \
        (release, submitter, system, benchmark)
    assert where.system_json == DATA / release / submitter / "systems" / f"{system}.json"
    assert where.system_json.is_file()
    st = start(rel)
    assert st.instance == system and st.host == submitter
    assert st.workload == f"mlperf {benchmark}"
    assert st.probe == f"{release}/{submitter}/{system}/{benchmark}/{Path(rel).stem}"
    assert not any("PLACEHOLDER" in str(x).upper() for x in (st.instance, st.host, st.probe, st.note))


# devices = nodes x accelerators_per_node of systems/<system>.json; $/h = catalog price x nodes
@pytest.mark.parametrize("rel, nodes, per_node, gpu, price", [
    (LLAMA, 1, 8, "NVIDIA H100-SXM5-80GB", 80.0),  # BM.GPU.H100.8 $80/h
    (SSD, 1, 8, "NVIDIA H100-SXM5-80GB", 80.0),
    (UNET, 9, 8, "NVIDIA H100-SXM5-80GB", 9 * 80.0),  # 9 nodes (its JSON's system_name says 8x)
    (BERT, 1, 8, "NVIDIA H100-SXM-80GB", 98.32),  # Standard_ND96isr_H100_v5 $98.32/h
    (GNN, 1, 8, "NVIDIA H100-SXM5-80GB", None),  # on-prem systems: unpriced
    (DLRM, 8, 8, "NVIDIA A100-SXM4-80GB", None),
    (RESNET, 1, 8, "NVIDIA H100-SXM5-80GB", None),
    (TINY, 1, 6, "NVIDIA GeForce RTX 4090", None),
    (SD4, 1, 8, "NVIDIA H100-SXM5-80GB", None),
    (SD3, 1, 8, "NVIDIA H100-SXM5-80GB", None),
])
def test_system_devices_and_price(rel: str, nodes: int, per_node: int, gpu: str,
                                  price: float | None) -> None:
    run, _ = convert(rel)
    st = start(rel)
    assert (run.system.nodes, run.system.accelerators_per_node) == (nodes, per_node)
    assert len(st.devices) == run.system.devices == nodes * per_node
    assert {d.name for d in st.devices} == {gpu} and {d.kind for d in st.devices} == {"gpu"}
    memory = 24 * 1024 if "4090" in gpu else 80 * 1024
    assert {d.memory_mb for d in st.devices} == {memory}
    if price is None:
        assert st.price_per_hour is None
    else:
        assert st.price_per_hour == pytest.approx(price)
        assert "priced as" in st.note and f"{nodes} x " in st.note


# ---- v4.0 Oracle 1xBM.GPU.H100.8 llama2_70b_lora: rank prefix, placeholders, a loss -----------

def test_llama_rank_prefixed_lines_placeholders_and_the_global_batch() -> None:
    run, _ = convert(LLAMA)
    assert {e.rank for e in run.read.events} == {0}  # every line is "0: :::MLLOG ..."
    assert run.read.value("submission_org") == "SUBMISSION_ORG_PLACEHOLDER"  # line 8
    assert run.read.value("submission_platform") == "1xSUBMISSION_PLATFORM_PLACEHOLDER"  # line 11
    assert start(LLAMA).batch_size == 8  # line 13
    assert run.read.other_lines == 23  # 75 lines, 52 MLLOG (ranks 0-7 print the rest)
    assert (run.read.duplicates, run.read.after_stop, run.read.malformed) == (0, 0, [])


def test_llama_blocks_of_samples_and_evaluations_of_a_loss() -> None:
    init_start, init_stop, run_stop = 1714271799860, 1714271859794, 1714273596488  # lines 6, 34, 71
    block_stop = [1714272635025, 1714272866062, 1714273096698, 1714273326768, 1714273556798]
    eval_stop = [1714272675770, 1714272906289, 1714273136456, 1714273366443, 1714273596488]
    assert init(LLAMA).dt == pytest.approx(s(init_start, init_stop))
    bs = blocks(LLAMA)
    assert [b.progress for b in bs] == [1536, 1920, 2304, 2688, 3072]  # 1536 first, then 384
    assert {b.unit for b in bs} == {"samples"} and [b.index for b in bs] == [1, 2, 3, 4, 5]
    assert [b.dt for b in bs] == approx(
        [s(a, b) for a, b in zip([init_stop, *eval_stop[:-1]], block_stop)])
    vs = vals(LLAMA)
    assert [v.dt for v in vs] == approx([s(a, b) for a, b in zip(block_stop, eval_stop)])
    loss = [v.metrics["eval_accuracy"] for v in vs]  # named eval_accuracy, but a loss
    assert loss == [0.9418500065803528, 0.9365009665489197, 0.9314047694206238,
                    0.9271087050437927, 0.9247717261314392]
    assert loss == sorted(loss, reverse=True) and loss[-1] <= 0.925  # lower is better: target met
    assert [e.epoch for e in of(convert(LLAMA)[1], Epoch)] == [1, 2, 3, 4, 5]
    e = end(LLAMA)
    assert (e.status, e.exit_code) == ("complete", 0)
    assert e.t == pytest.approx(s(init_start, run_stop))


def test_a_cut_off_mllog_line_is_counted_and_the_run_still_read() -> None:
    """The one constructed case: line 51 of the llama excerpt (the eval_accuracy at 1920
    samples) cut after 120 of its 240 characters, its JSON left unclosed."""
    lines = (DATA / LLAMA).read_text().splitlines()
    assert '"key": "eval_accuracy"' in lines[50] and '"samples_count": 1920' in lines[50]
    lines[50] = lines[50][:120]
    run = read_run(DATA / LLAMA, text="\n".join(lines) + "\n")
    events = to_events(run, CATALOG)
    assert run.read.malformed == [51]
    warnings = [e.msg for e in events if isinstance(e, Log)]
    assert any("could not be read" in m and "line 51" in m for m in warnings)
    vs = [e for e in events if isinstance(e, Val)]
    assert len(vs) == 5 and vs[1].metrics == {}  # its eval_start/eval_stop still time it
    assert [v.metrics.get("eval_accuracy") for v in (vs[0], vs[4])] == \
        [0.9418500065803528, 0.9247717261314392]
    assert isinstance(events[-1], End) and events[-1].status == "complete"


# ---- v3.1 Azure ND_H100_v5_pytorch bert: repeated lines, glued output, samples as epoch_num ---

BERT_EVAL_MS = [1684271741002, 1684271761008, 1684271780361, 1684271800525, 1684271819902,
                1684271840021, 1684271859493, 1684271879759, 1684271899554, 1684271919852,
                1684271939240, 1684271959368, 1684271978843, 1684271999006, 1684272018384,
                1684272038564, 1684272058052]  # lines 56-88, every other line
BERT_EVAL_SAMPLES = [150027, 300069, 449738, 600361, 750089, 900113, 1050530, 1200071, 1350045,
                     1500898, 1650131, 1799211, 1949180, 2099114, 2248997, 2398795, 2548766]
BERT_ACCURACY = [0.3777318596839905, 0.3962310552597046, 0.49232548475265503, 0.6496036052703857,
                 0.700449526309967, 0.7078309655189514, 0.711230993270874, 0.7133443355560303,
                 0.713921070098877, 0.7157308459281921, 0.71612548828125, 0.7174168229103088,
                 0.7184092998504639, 0.7191985845565796, 0.7194787859916687, 0.7199785113334656,
                 0.7203521728515625]


def test_bert_glued_line_repeated_init_and_timing() -> None:
    run, _ = convert(BERT)
    # line 23: "device: cuda:2 n_gpu: 8, ... True:::MLLOG {... submission_org ...}"
    assert run.read.value("submission_org") == "Azure"
    assert run.read.value("submission_platform") == "ND_H100_v5"
    assert start(BERT).batch_size == 768  # line 29
    init_start, init_stop, run_stop = 1684271667229, 1684271719164, 1684272058054  # 8-15, 50, 96
    assert init(BERT).dt == pytest.approx(s(init_start, init_stop))
    bs = blocks(BERT)
    # each evaluation is timed as a point: the training before it is one block
    assert [b.progress for b in bs[:17]] == BERT_EVAL_SAMPLES
    assert [b.dt for b in bs[:17]] == approx(
        [s(a, b) for a, b in zip([init_stop, *BERT_EVAL_MS[:-1]], BERT_EVAL_MS)])
    assert run.read.after_stop == 1  # the tracked_stats after run_stop (line 97)
    e = end(BERT)
    assert (e.status, e.exit_code) == ("complete", 0)
    assert e.t == pytest.approx(s(init_start, run_stop))


def test_bert_blocks_end_at_the_samples_the_log_reached() -> None:
    bs = blocks(BERT)
    assert len(bs) == 17 and bs[-1].progress == 2548766  # = train_samples, line 94


def test_bert_every_evaluation_is_a_val_with_its_accuracy() -> None:
    vs = vals(BERT)
    assert [v.metrics["eval_accuracy"] for v in vs] == BERT_ACCURACY
    assert [v.dt for v in vs] == [0.0] * 17


def test_bert_progress_unit_is_samples() -> None:
    assert {b.unit for b in blocks(BERT)} == {"samples"}


# ---- duplicates: the same line printed by every rank -------------------------------------------

@pytest.mark.parametrize("rel, expected", [
    (LLAMA, 0),
    (SSD, 7),  # "status" printed 8 times (lines 65-72)
    (DLRM, 7),  # cache_clear x8 (lines 3-10)
    pytest.param(BERT, 7),
    pytest.param(GNN, 7),
    pytest.param(SD4, 14),
    pytest.param(SD3, 15),
])
def test_lines_repeated_by_ranks_are_read_once_and_counted(rel: str, expected: int) -> None:
    run, _ = convert(rel)
    assert [e.key for e in run.read.events].count("init_start") == 1
    assert run.read.duplicates == expected


# ---- v4.0 ASUSTeK gnn: fractional epochs, init_start from 8 ranks at 8 times -------------------

GNN_EVAL = [  # (eval_start, eval_stop, epoch_num) lines 25-66
    (1715761542445, 1715761547455, 0.05), (1715761581061, 1715761585937, 0.1),
    (1715761620017, 1715761624811, 0.15), (1715761658931, 1715761663782, 0.2),
    (1715761697849, 1715761702745, 0.25), (1715761736740, 1715761741604, 0.3),
    (1715761775228, 1715761780075, 0.35), (1715761813742, 1715761818510, 0.4),
    (1715761851896, 1715761856716, 0.45), (1715761890355, 1715761895106, 0.5),
    (1715761928706, 1715761933458, 0.55), (1715761966854, 1715761971668, 0.6),
    (1715762005312, 1715762010079, 0.65), (1715762043836, 1715762048697, 0.7)]


def test_gnn_fractional_epochs_between_evaluations() -> None:
    init_start, init_stop, run_stop = 1715761224661, 1715761485588, 1715762048701  # 2, 20, 70
    assert init(GNN).dt == pytest.approx(s(init_start, init_stop))  # the earliest rank's start
    bs = blocks(GNN)
    assert [b.progress for b in bs[:14]] == [p for _, _, p in GNN_EVAL]
    ends = [init_stop] + [b for _, b, _ in GNN_EVAL]
    assert [b.dt for b in bs[:14]] == approx([s(ends[i], a) for i, (a, _, _) in enumerate(GNN_EVAL)])
    vs = vals(GNN)
    assert [v.dt for v in vs] == approx([s(a, b) for a, b, _ in GNN_EVAL])
    assert vs[0].metrics == {"eval_accuracy": 0.6784922422803332}
    assert vs[-1].metrics == {"eval_accuracy": 0.7200003551604818}
    assert convert(GNN)[0].read.after_stop == 1  # the "status" line after run_stop
    assert end(GNN).t == pytest.approx(s(init_start, run_stop))


def test_gnn_no_block_without_progress() -> None:
    ps = [b.progress for b in blocks(GNN)]
    assert len(ps) == 14 and all(a is not None and b is not None and a < b
                                 for a, b in zip(ps, ps[1:]))


# ---- v4.0 Juniper dlrm_dcnv2: fractional epochs, truncated, its last line cut off -------------

def test_dlrm_truncated_run_with_a_real_cut_off_last_line() -> None:
    run, events = convert(DLRM)
    assert run.read.malformed == [64]  # the file ends inside line 64's JSON
    assert run.run_stop is None and run.status == ""
    assert not of(events, Done)
    e = end(DLRM)
    assert (e.status, e.exit_code) == ("failed", None) and "without run_stop" in e.reason
    init_start, init_stop, last = 1714420946049, 1714421006590, 1714421105923  # 11, 30, 63
    assert init(DLRM).dt == pytest.approx(s(init_start, init_stop))
    assert e.t == pytest.approx(s(init_start, last))  # the last event read: eval_start, line 63
    bs = blocks(DLRM)
    assert [b.progress for b in bs] == [
        0.0499403937236202, 0.09991300705609434, 0.14988562038856848, 0.19985823372104264,
        0.24983084705351677, 0.2998034603859909, 0.34977607371846503, 0.3997486870509392,
        0.44972130038341335, 0.4996939137158875, 0.5496665270483616]
    assert bs[0].dt == pytest.approx(s(init_stop, 1714421014851))  # to eval_start, line 33
    assert bs[-1].dt == pytest.approx(s(1714421098093, last))  # eval_stop (62) to eval_start (63)
    vs = vals(DLRM)
    assert len(vs) == 10  # the 11th evaluation's metric is on the cut-off line
    assert vs[0].dt == pytest.approx(s(1714421014851, 1714421016172))  # lines 33, 35
    assert vs[-1].metrics == {"eval_accuracy": 0.799974799156189}  # line 61
    assert any("could not be read" in e.msg for e in events if isinstance(e, Log))


# ---- v4.0 Oracle 9xBM.GPU.H100.8 unet3d: rank 0 trains, rank 56 evaluates and stops -----------

def test_unet3d_blocks_progress_from_the_next_block_start() -> None:
    init_start, init_stop = 1714603727861, 1714603743164  # lines 2, 21
    assert init(UNET).dt == pytest.approx(s(init_start, init_stop))
    bs = blocks(UNET)
    # block_stop has no progress of its own: the next block_start's first_epoch_num is it
    assert [b.progress for b in bs[:3]] == [3360, 6720, 10080]  # lines 31, 34, 37
    stops = [1714603745326, 1714603746289, 1714603747249]  # lines 30, 33, 36
    assert [b.dt for b in bs[:3]] == approx([s(a, b) for a, b in zip([init_stop, *stops], stops)])
    assert start(UNET).batch_size == 56


def test_unet3d_keeps_the_evaluating_ranks_lines() -> None:
    run, _ = convert(UNET)
    assert run.status == "success"
    e = end(UNET)
    assert (e.status, e.exit_code) == ("complete", 0)
    assert e.t == pytest.approx(s(1714603727861, 1714603822714))  # run_stop, line 67
    assert [v.metrics["eval_accuracy"] for v in vals(UNET)] == [
        0.897285521030426, 0.9024739265441895, 0.8922467827796936, 0.9084648489952087]
    assert run.read.after_stop == 2  # rank 0's tracked_stats and block_stop (lines 68, 69)


def test_unet3d_evaluations_that_overlap_training_take_no_time() -> None:
    assert [v.dt for v in vals(UNET)] == [0.0] * 4
    stops = [1714603819508, 1714603820584, 1714603821656]  # block_stop lines 45, 53, 61
    bs = blocks(UNET)
    assert [b.dt for b in bs[-2:]] == approx([s(a, b) for a, b in zip(stops, stops[1:])])


# ---- v4.0 Oracle 1xBM.GPU.H100.8 ssd: 0-based epochs, evaluations after each, events after stop

def test_ssd_zero_based_epochs_and_what_follows_run_stop() -> None:
    init_start, init_stop, run_stop = 1715179549664, 1715179617514, 1715181820128  # 11, 31, 61
    epoch_stop = [1715180137723, 1715180689262, 1715181238438, 1715181783674]  # epochs 0-3
    eval_stop = [1715180181104, 1715180726968, 1715181272489, 1715181818136]  # evals 1-4
    assert init(SSD).dt == pytest.approx(s(init_start, init_stop))
    bs, vs = blocks(SSD), vals(SSD)
    assert [b.progress for b in bs] == [1, 2, 3, 4]  # epoch 0 ends with 1 epoch done
    assert [b.t for b in bs] == approx([s(init_start, t) for t in epoch_stop])
    assert [v.t - v.dt for v in vs] == approx([s(init_start, t) for t in epoch_stop])
    assert bs[0].dt == pytest.approx(s(init_stop, epoch_stop[0]))
    assert vs[-1].t <= s(init_start, eval_stop[-1]) + 1e-9  # when the last evaluation ended
    assert [v.metrics["eval_accuracy"] for v in vs] == [
        0.2350243970229401, 0.2884298158175954, 0.33169177048084125, 0.34204138147489815]
    run, events = convert(SSD)
    assert run.read.after_stop == 3  # epoch_stop 4, tracked_stats, status (lines 62-72)
    assert any("after run_stop" in e.msg for e in events if isinstance(e, Log))
    done = of(events, Done)
    assert len(done) == 1 and done[0].t == pytest.approx(s(init_start, run_stop))
    assert end(SSD).t == pytest.approx(s(init_start, run_stop))


def test_ssd_evaluation_time_ends_where_training_resumed() -> None:
    epoch_stop = [1715180137723, 1715180689262, 1715181238438, 1715181783674]  # lines 37-55
    epoch_start = [1715180171144, 1715180721072, 1715181267619, 1715181813278]  # 40, 46, 52, 58
    assert [v.dt for v in vals(SSD)] == approx([s(a, b) for a, b in zip(epoch_stop, epoch_start)])


# ---- v3.1 NVIDIA resnet: 1-based epochs, an evaluation every 4, aborted -----------------------

def test_resnet_one_based_epochs_evaluated_every_few_and_aborted() -> None:
    init_start, init_stop, run_stop = 1695517463886, 1695517509286, 1695518357779  # 7, 30, 72
    assert init(RESNET).dt == pytest.approx(s(init_start, init_stop))
    bs = blocks(RESNET)
    assert [b.progress for b in bs] == [1, 2, 3, 32, 33, 34, 35, 36, 37]  # epochs 4-31 cut
    assert [b.dt for b in bs[:3]] == approx([s(init_stop, 1695517535512),
                                             s(1695517535512, 1695517558242),
                                             s(1695517558242, 1695517581003)])
    assert bs[3].dt == pytest.approx(s(1695517581932, 1695518243722))  # eval_stop 3 -> epoch 32
    vs = vals(RESNET)
    assert [v.metrics["eval_accuracy"] for v in vs] == [0.30762, 0.75794]  # after epochs 3, 35
    assert vs[0].dt == pytest.approx(s(1695517581003, 1695517581932))  # epoch_stop 3 -> eval
    assert [e.epoch for e in vs] == [3, 7]  # the block the evaluation follows
    run, events = convert(RESNET)
    assert run.status == "aborted"
    done, e = of(events, Done), end(RESNET)
    assert len(done) == 1 and isinstance(done[0], Done) and done[0].status == "failed"
    assert (e.status, e.exit_code) == ("failed", 1) and "aborted" in e.reason
    assert e.t == pytest.approx(s(init_start, run_stop))


# ---- v4.0 tinycorp tinybox_green resnet: truncated, evaluated every epoch near the end ---------

def test_tinybox_truncated_resnet() -> None:
    init_start, init_stop, first = 1715316660676, 1715318445190, 1715318725190  # 7, 8, 25
    run, events = convert(TINY)
    # run_start (line 9) comes 12 s after init_stop: init + the first block cover it either way
    assert init(TINY).dt + blocks(TINY)[0].dt == pytest.approx(s(init_start, first))
    assert init(TINY).dt == pytest.approx(s(init_start, init_stop))
    assert [b.progress for b in blocks(TINY)] == [1, 2, 3, 4, 5, 6, 7, 32, 33, 34, 35, 36, 37]
    assert [v.metrics["eval_accuracy"] for v in vals(TINY)] == [
        0.33106, 0.43772, 0.7556, 0.7571, 0.758, 0.75858, 0.75842]
    assert run.run_stop is None and not of(events, Done)
    e = end(TINY)
    assert e.status == "failed" and e.t == pytest.approx(s(init_start, 1715326150053))  # line 70


# ---- stable diffusion: evaluations after run_stop (v4.0), step_num progress (v3.1) ------------

def test_sd_v4_evaluations_after_run_stop_are_left_out() -> None:
    init_start, init_stop, run_stop = 1715283888961, 1715284080171, 1715286671756  # 10, 42, 72
    run, events = convert(SD4)
    # run_stop is the file's last line but its time is the last block_stop's (line 59): the
    # three evaluations (lines 60-71) happened after it
    assert run.read.after_stop == 12
    assert not vals(SD4)
    assert run.read.value("submission_org") == "SUBMISSION_ORG_PLACEHOLDER"  # line 38
    assert init(SD4).dt == pytest.approx(s(init_start, init_stop))
    bs = blocks(SD4)
    assert [b.progress for b in bs] == [51200, 102400, 153600, 1996800, 2048000, 2099200,
                                        2508800, 2560000]
    assert {b.unit for b in bs} == {"samples"}
    stops = [1715284126912, 1715284178021, 1715284229376, 1715286099028, 1715286151027,
             1715286203311, 1715286619638, 1715286671756]  # block_stop lines 45-59
    assert [b.dt for b in bs] == approx([s(a, b) for a, b in zip([init_stop, *stops], stops)])
    e = end(SD4)
    assert (e.status, e.exit_code) == ("complete", 0)
    assert e.t == pytest.approx(s(init_start, run_stop))


def test_sd_v3_step_progress_and_run_stop_before_the_last_block_stop() -> None:
    init_start, init_stop, run_stop = 1696370311551, 1696370432074, 1696373172844  # 10, 35, 80
    run, _ = convert(SD3)
    assert init(SD3).dt == pytest.approx(s(init_start, init_stop))
    bs = blocks(SD3)
    assert [b.progress for b in bs] == [100, 200, 4800, 4900, 5000]
    assert {b.unit for b in bs} == {"steps"}
    stops = [1696370491633, 1696370545622, 1696373062322, 1696373117670]  # lines 38-47
    assert [b.dt for b in bs[:4]] == approx([s(a, b) for a, b in zip([init_stop, *stops], stops)])
    # step 5000 ends at run_stop (its metrics at that time, lines 78-79), 69 ms before its
    # block_stop (line 50): that and everything after it is past the run
    assert bs[4].dt == pytest.approx(s(stops[-1], run_stop))
    assert run.read.after_stop == 28  # lines 50-77
    e = end(SD3)
    assert (e.status, e.exit_code) == ("complete", 0)
    assert e.t == pytest.approx(s(init_start, run_stop))


def test_sd_v3_the_evaluation_at_run_stop_is_a_val() -> None:
    vs = vals(SD3)
    assert len(vs) == 1
    assert vs[0].metrics == {"FID": 82.91841125488281, "CLIP": 0.1641803234815597}
