"""The recorded runs the constants are measured on (calibrate.py): each full run with a probe of
the same setting, and the estimate of the full run from that probe.

A corpus is a folder of full runs (``NAME`` or ``full-NAME``) and their probes
(``probe-NAME``); a full run without a recorded probe gets one cut out of its own log - what the
default probe sees: start-up, the first epoch with its validation, one boundary, a few steps of
the next, then the program's post-training work (``cut_probe``)."""

from __future__ import annotations

import hashlib
import logging
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from ..estimate.bounds import Calibration, calibration_key, on_gpu, pick
from ..estimate.runtime import NoEstimate, training_estimate, whole_process
from ..events import Done, End, Event, EventReader, Step
from ..logstore import discover_logs, open_log
from ..state import ProbeState, fold_all

log = logging.getLogger(__name__)

CUT_STEPS = 10  # steps of the second epoch a cut probe keeps (the default probe sees a few)


@dataclass
class Pair:
    """A full run and a probe of the same setting."""

    name: str
    corpus: str
    program: str
    cores: int
    batch: int
    probe: ProbeState
    full: ProbeState
    cut: bool  # the probe was cut out of the full run's log
    cut_probe: ProbeState  # the probe cut out of the full run's log (always made)
    bare_probe: ProbeState  # ... and the same ending where the cut does, as a live probe's log

    @property
    def mechanism(self) -> str:
        """The set of constants the run's estimate takes (bounds.calibration_key)."""
        return calibration_key(self.full)

    @property
    def on_gpu(self) -> bool:
        return on_gpu(self.full)

    @property
    def truth(self) -> float:
        assert self.full.end is not None  # less the agent's own start-up (not the program's)
        return self.full.end.t - self.full.agent_init_s

    @property
    def epochs(self) -> int:
        """Epochs the full run really ran (custom loops log no epoch events: their steps say)."""
        return max(len(self.full.epochs_done), len(self.full.steps_by_epoch))

    @property
    def fit_truth(self) -> float:
        """fit() alone: the first step to the end of training (the last `done`)."""
        st = self.full
        t_init = st.t_init or 0.0
        end = st.end.t if st.end else 0.0
        post = st.post_time or 0.0
        return end - t_init - post - (st.fit_end_time or 0.0)

    def as_cut(self, bare: bool = False) -> Pair:
        return replace(self, probe=self.bare_probe if bare else self.cut_probe, cut=True)

    def variant(self, name: str) -> Pair:
        """``recorded`` (the real probe), ``cut`` or ``bare`` (cut, with no end)."""
        return self if name == "recorded" else self.as_cut(bare=name == "bare")


def read(path: Path) -> list[Event]:
    reader = EventReader()
    with open_log(path) as fh:
        return list(reader.read(fh))


def cut_probe(events: list[Event], steps: int = CUT_STEPS, bare: bool = False) -> list[Event]:
    """What the default probe sees of a full run: through ``steps`` steps of the second epoch,
    then - as a real probe measures it itself - the program's post-training work (the full run's
    `end`). Its `done` costs nothing: a probe stopped mid-epoch tears its iterator down at a
    moment of its own, and the full run's final teardown is not what it would have seen.
    ``bare``: the log just stops there (no `done`, no `end`), as a live probe's does."""
    out: list[Event] = []
    seen = 0
    for e in events:
        if isinstance(e, Step) and e.epoch >= 1:
            if seen >= steps or e.epoch > 1:
                break
            seen += 1
        out.append(e)
    done = [e for e in events if isinstance(e, Done)]
    end = events[-1]
    t = out[-1].t
    if done and isinstance(end, End) and not bare:
        out.append(Done(t, 0.0, "probe-done", "cut"))
        out.append(End(t + end.dt, end.dt, "probe-done", "cut", exit_code=end.exit_code))
    return out


def corpus_logs(paths: list[str], exclude: str | None = None) -> dict[str, Path]:
    """The logs of the corpus folders by name (``x.jsonl.gz`` -> ``x``), less those whose file
    name matches ``exclude``."""
    files, errors = discover_logs(paths)
    for e in errors:
        log.warning(e)
    return {f.name.split(".jsonl")[0]: f for f in files
            if not (exclude and re.search(exclude, f.name))}


def load_pairs(paths: list[str], corpus: str = "", exclude: str | None = None,
               used: list[Path] | None = None) -> list[Pair]:
    """Every complete full run of the folders with its probe; ``used`` collects the logs read."""
    by_name = corpus_logs(paths, exclude)
    pairs = []
    for name, f in sorted(by_name.items()):
        if name.startswith("probe-"):
            continue
        key = name[len("full-"):] if name.startswith("full-") else name
        events = read(f)
        full = fold_all(events)
        if full.end is None or full.end.status != "complete" or full.start is None:
            continue
        cut = fold_all(cut_probe(events))
        bare = fold_all(cut_probe(events, bare=True))
        probe_file = by_name.get(f"probe-{key}")
        probe = fold_all(read(probe_file)) if probe_file is not None else cut
        if used is not None:
            used += [f] if probe_file is None else [f, probe_file]
        start = full.start
        cores = 2 if "2core" in start.instance else 1
        pairs.append(Pair(key, corpus or str(paths[0]), start.workload, cores, start.batch_size,
                          probe, full, probe_file is None, cut, bare))
    return pairs


def content_digest(files: Iterable[tuple[str, Path]]) -> str:
    """sha256 over each (name, log) in name order: the name, then the log's text as read
    (a gzipped log's content, not its compressed bytes; line ends as \\n)."""
    h = hashlib.sha256()
    for name, path in sorted(files):
        with open_log(path) as fh:
            text = fh.read()
        h.update(f"{name}\n{len(text)}\n".encode())
        h.update(text.replace("\r\n", "\n").encode())
    return h.hexdigest()


@dataclass
class Result:
    """The estimate of a pair's full run from its probe, and the constants it was drawn with."""

    pair: Pair
    est: float
    low: float
    high: float
    sigma: float
    uncertainty: dict[str, float]
    fit_est: float
    q: float  # the multiplier its interval was drawn with (its mechanism's calibration)

    @property
    def err(self) -> float:
        return (self.est - self.pair.truth) / self.pair.truth

    @property
    def log_err(self) -> float:
        """log(truth / estimate): how far the truth lies over (+) or under (-) the estimate."""
        return math.log(self.pair.truth / self.est)

    @property
    def inside(self) -> bool:
        return self.low <= self.pair.truth <= self.high

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2 / self.est


Calibrations = dict[str, Calibration]


def evaluate(pairs: Iterable[Pair], cals: Calibrations | Calibration) -> list[Result]:
    """Each pair's full run estimated from its probe at the epochs the full run really ran, with
    its mechanism's and device's constants (as bounds.pick chooses them for a live probe)."""
    out = []
    for p in pairs:
        cal = cals if isinstance(cals, Calibration) else pick(cals, p.mechanism)
        try:
            train = training_estimate(p.probe, p.epochs, use_validation=True, equation="auto",
                                      statistic="trimmed")
        except NoEstimate as exc:
            log.warning("%s: no estimate (%s)", p.name, exc)
            continue
        est = whole_process(p.probe, train, p.epochs, cal)
        u = est.uncertainty
        out.append(Result(p, est.runtime_s, est.low_s, est.high_s, u["sigma"], dict(u),
                          est.terms.fit_s or 0.0, cal.q))
    return out
