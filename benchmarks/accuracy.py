"""Can a user bet on the number? Real probes against the real whole runs they predict.

    .venv/bin/python benchmarks/accuracy.py benchmarks/corpus/runs [--fit] [--markdown]

Pairs every probe log (``probe-NAME``) with the full run of the same setting (``NAME``, or
``full-NAME`` as benchmarks/record_runs.py names them), estimates the full run's whole process -
launch to exit - from the probe at the number of epochs the full run really ran, and reports:

- how often the real total lies inside [low, high] (the promise: >= 90 %), and the half-width;
- the point error (median, max), against the whole process and against fit() alone;
- whether the fastest and cheapest picks per program match the real ones (or say "undecided"
  when the bounds overlap), and what the probe cost against the job.

The runs are split in two by name order: the even ones calibrate (``--fit`` measures the
constants of core/model/bounds.py on them and writes core/model/calibration.json), the odd ones
are held out and reported. A full run without a probe of its own is probed by cutting its log
(the first epoch and the first step of the second: what the default probe sees) - marked "cut".
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import platform
import statistics
import sys
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from probecast.core.model.bounds import Calibration  # noqa: E402
from probecast.core.model.estimate import NoEstimate, training_estimate  # noqa: E402
from probecast.core.model.estimate import whole_process  # noqa: E402
from probecast.core.model.events import Done, End, Event, Step  # noqa: E402
from probecast.core.model.logstore import discover_logs, open_log  # noqa: E402
from probecast.core.model.events import EventReader  # noqa: E402
from probecast.core.model.state import ProbeState, fold_all  # noqa: E402

PRICE_PER_CORE_HOUR = 0.05  # made-up but proportional: a 2-core host costs twice a 1-core one


@dataclass
class Pair:
    name: str
    program: str
    cores: int
    batch: int
    probe: ProbeState
    full: ProbeState
    cut: bool  # the probe was cut out of the full run's log

    @property
    def truth(self) -> float:
        assert self.full.end is not None
        return self.full.end.t

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


def read(path: Path) -> list[Event]:
    reader = EventReader()
    with open_log(path) as fh:
        return list(reader.read(fh))


def cut_probe(events: list[Event]) -> list[Event]:
    """What the default probe sees of a full run: through the first step of the second epoch,
    then - as a real probe measures them itself - the end of fit() and the post-training work
    (taken from the full run's last `done` and `end`)."""
    out: list[Event] = []
    for e in events:
        out.append(e)
        if isinstance(e, Step) and e.epoch == 1:
            break
    done = [e for e in events if isinstance(e, Done)]
    end = events[-1]
    t = out[-1].t
    if done and isinstance(end, End):
        t += done[-1].dt
        out.append(Done(t, done[-1].dt, "probe-done", "cut"))
        out.append(End(t + end.dt, end.dt, "probe-done", "cut", exit_code=end.exit_code))
    return out


def load_pairs(paths: list[str]) -> list[Pair]:
    files, errors = discover_logs(paths)
    for e in errors:
        print(e, file=sys.stderr)
    by_name = {f.name.split(".jsonl")[0]: f for f in files}
    pairs = []
    for name, f in sorted(by_name.items()):
        if name.startswith("probe-"):
            continue
        key = name[len("full-"):] if name.startswith("full-") else name
        events = read(f)
        full = fold_all(events)
        if full.end is None or full.end.status != "complete" or full.start is None:
            continue
        probe_file = by_name.get(f"probe-{key}")
        if probe_file is not None:
            probe, cut = fold_all(read(probe_file)), False
        else:
            probe, cut = fold_all(cut_probe(events)), True
        start = full.start
        cores = 2 if "2core" in start.instance else 1
        program = start.workload
        pairs.append(Pair(key, program, cores, start.batch_size, probe, full, cut))
    return pairs


@dataclass
class Result:
    pair: Pair
    est: float
    low: float
    high: float
    sigma: float
    unseen: float
    unseen_low: float
    fit_est: float

    @property
    def err(self) -> float:
        return (self.est - self.pair.truth) / self.pair.truth

    @property
    def inside(self) -> bool:
        return self.low <= self.pair.truth <= self.high

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2 / self.est

    @property
    def needed_q(self) -> float:
        """The smallest q that puts the truth inside the interval."""
        gap = self.pair.truth - self.est
        gap = max(0.0, gap - self.unseen) if gap > 0 else min(0.0, gap + self.unseen_low)
        return abs(gap) / self.sigma if self.sigma > 0 else math.inf


def evaluate(pairs: list[Pair], cal: Calibration) -> list[Result]:
    out = []
    for p in pairs:
        try:
            train = training_estimate(p.probe, p.epochs, use_validation=True, equation="auto",
                                      statistic="trimmed")
        except NoEstimate as exc:
            print(f"{p.name}: no estimate ({exc})", file=sys.stderr)
            continue
        est = whole_process(p.probe, train, p.epochs, cal)
        u = est.uncertainty
        out.append(Result(p, est.runtime_s, est.low_s, est.high_s, u["sigma"], u["unseen_high"],
                          u["unseen_low"], est.terms.fit_s or 0.0))
    return out


# ---- measuring the calibration constants on the calibration runs ------------------------------


def boundary_overheads(st: ProbeState) -> list[float]:
    t_it = st.step_time("trimmed")[0]
    return [b - t_it for b in st.boundary_steps] if t_it == t_it else []


def measure(pairs: list[Pair]) -> Calibration:
    """Each constant is a measured quantity of the full runs (not fitted to make coverage)."""
    overheads = [o for p in pairs for o in boundary_overheads(p.full)]
    rel_spreads = []
    for p in pairs:
        o = boundary_overheads(p.full)
        if len(o) >= 2 and statistics.mean(o) > 0.2:
            rel_spreads.append(statistics.pstdev(o) / statistics.mean(o))
    val_spreads = []
    for p in pairs:
        later = [v.dt for v in p.full.vals[1:]]
        if len(later) >= 2:
            val_spreads.append(statistics.pstdev(later) / statistics.mean(later))
    posts = [(p.probe.post_time, p.full.post_time) for p in pairs
             if p.probe.post_time and p.full.post_time and not p.cut]
    post_rel = (statistics.median(abs(a - b) / b for a, b in posts) * 2) if posts else 0.2
    # start-up: the probe's T_init against the full run's (another process, another moment)
    inits = [(p.probe.t_init, p.full.t_init) for p in pairs
             if p.probe.t_init and p.full.t_init and not p.cut]
    init_rel = (statistics.median(abs(b - a) / a for a, b in inits) * 2) if inits else 0.1
    base = Calibration()
    return replace(
        base,
        # the largest stall: the high side's allowance for each boundary still to come
        unseen_boundary_s=round(max(overheads, default=base.unseen_boundary_s), 2),
        stall_cap_s=round(1.5 * max(overheads, default=base.unseen_boundary_s), 1),
        boundary_min_s=round(max(0.0, min(overheads, default=base.boundary_min_s)), 3),
        # typical spreads around what a probe saw (the stalls are in the allowance above)
        boundary_rel=round(statistics.median(rel_spreads), 3) if rel_spreads else base.boundary_rel,
        val_rel=round(statistics.median(val_spreads) * 2, 3) if val_spreads else base.val_rel,
        post_rel=round(post_rel, 3),
        init_rel=round(init_rel, 3),
    )


def needed_stall_ratio(pairs: list[Pair], cal: Calibration) -> list[float]:
    """Per calibration run: the smallest stall_ratio that puts its real total inside."""
    out = []
    for p in pairs:
        lo, hi = 0.0, 4.0
        for _ in range(30):  # bisection: coverage grows with the ratio
            mid = (lo + hi) / 2
            r = evaluate([p], replace(cal, stall_ratio=mid))
            if r and r[0].pair.truth <= r[0].high:
                hi = mid
            else:
                lo = mid
        out.append(hi)
    return out


def conformal_q(results: list[Result], coverage: float = 0.9) -> float:
    """Split conformal: the ceil((n+1)*coverage)-th smallest needed q (the max if that is n+1)."""
    needed = sorted(r.needed_q for r in results)
    k = min(len(needed), math.ceil((len(needed) + 1) * coverage))
    return needed[k - 1] if needed else 2.0


# ---- reporting ---------------------------------------------------------------------------------


def picks(results: list[Result]) -> list[str]:
    """Per program: is the predicted fastest / cheapest the real one (or said undecided)?"""
    lines = []
    groups: dict[str, list[Result]] = {}
    for r in results:
        groups.setdefault(r.pair.program, []).append(r)
    ok_t = ok_c = und = n = 0
    for program, rs in sorted(groups.items()):
        if len(rs) < 2:
            continue
        n += 1
        real_fast = min(rs, key=lambda r: r.pair.truth)
        pred_fast = min(rs, key=lambda r: r.est)
        cost = {id(r): r.pair.cores for r in rs}
        real_cheap = min(rs, key=lambda r: r.pair.truth * cost[id(r)])
        pred_cheap = min(rs, key=lambda r: r.est * cost[id(r)])
        undecided = [r for r in rs if r is not pred_fast and r.low <= pred_fast.high]
        ok_t += real_fast is pred_fast
        ok_c += real_cheap is pred_cheap
        und += bool(undecided)
        lines.append(f"  {program[:28]:<28} fastest {'right' if real_fast is pred_fast else 'WRONG'}"
                     f" ({pred_fast.pair.name.split('-', 1)[1]}), cheapest "
                     f"{'right' if real_cheap is pred_cheap else 'WRONG'}"
                     + (f"; undecided with {len(undecided)} (bounds overlap)" if undecided else ""))
    lines.insert(0, f"picks: fastest right in {ok_t}/{n} programs, cheapest right in {ok_c}/{n}; "
                    f"{und}/{n} rankings say the leader's bounds overlap another's")
    return lines


def report(title: str, results: list[Result], markdown: bool) -> list[str]:
    if not results:
        return [f"{title}: no runs"]
    errs = [abs(r.err) for r in results]
    fit_errs = [abs((r.fit_est - r.pair.fit_truth) / r.pair.fit_truth) for r in results
                if r.pair.fit_truth > 0]
    inside = sum(r.inside for r in results)
    long = [r for r in results if r.pair.epochs >= 10]
    probe_cost = [r.pair.probe.end.t / r.pair.truth for r in results
                  if r.pair.probe.end is not None and not r.pair.cut]
    lines = [f"{title}: {len(results)} runs ({sum(r.pair.cut for r in results)} probes cut "
             "from the full log)"]
    rows = [
        ("real total inside [low, high]", f"{inside}/{len(results)} = {inside / len(results):.0%}"),
        ("median half-width", f"{statistics.median(r.half_width for r in results):.1%}"),
        ("median half-width, runs of >= 10 epochs",
         f"{statistics.median(r.half_width for r in long):.1%} ({len(long)} runs)" if long else "-"),
        ("point error vs whole process: median / max",
         f"{statistics.median(errs):.1%} / {max(errs):.1%}"),
        ("point error vs fit() alone: median / max",
         f"{statistics.median(fit_errs):.1%} / {max(fit_errs):.1%}" if fit_errs else "-"),
        ("probe wall time / full run: median / max",
         f"{statistics.median(probe_cost):.0%} / {max(probe_cost):.0%}" if probe_cost else "-"),
    ]
    if markdown:
        lines += ["", "| measure | value |", "|---|---|"] + [f"| {a} | {b} |" for a, b in rows]
    else:
        lines += [f"  {a:<44} {b}" for a, b in rows]
    lines.append("")
    lines.append(f"  {'run':<40} {'epochs':>6} {'real':>7} {'est':>7} {'err':>7} "
                 f"{'bounds':>17} {'in':>3}")
    for r in sorted(results, key=lambda r: r.pair.name):
        lines.append(f"  {r.pair.name[:40]:<40} {r.pair.epochs:>6} {r.pair.truth:>6.1f}s "
                     f"{r.est:>6.1f}s {r.err:>+6.1%} {r.low:>7.1f}-{r.high:<7.1f}s "
                     f"{'yes' if r.inside else 'NO':>3}{' cut' if r.pair.cut else ''}")
    return lines + [""] + picks(results)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logs", nargs="+", help="directories of full runs and probes")
    ap.add_argument("--fit", action="store_true",
                    help="measure the constants on the calibration half and write calibration.json")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--all-held-out", action="store_true",
                    help="report every run as held out (a corpus the calibration never saw, "
                         "e.g. the PyTorch runs against the Keras calibration)")
    ns = ap.parse_args()
    pairs = load_pairs(ns.logs)
    if not pairs:
        print("no complete full runs found", file=sys.stderr)
        return 1
    calib = [p for i, p in enumerate(pairs) if i % 2 == 0]
    held = [p for i, p in enumerate(pairs) if i % 2 == 1] or pairs
    cal = Calibration.load()
    if ns.fit:
        measured = replace(measure(calib), q=2.0)  # the symmetric part: about 95 % if normal
        ratios = sorted(needed_stall_ratio(calib, measured))
        k = min(len(ratios), math.ceil((len(ratios) + 1) * 0.9))
        measured = replace(measured, stall_ratio=round(ratios[k - 1], 3))
        q = max(1.0, conformal_q(evaluate(calib, replace(measured, q=1.0))))
        cal = replace(measured, q=round(q, 3), source=(
            f"benchmarks/accuracy.py --fit on {len(calib)} of {len(pairs)} recorded runs "
            f"({', '.join(sorted({p.program for p in calib}))}), {dt.date.today()}, "
            f"{platform.machine()} {platform.node()}"))
        out = ROOT / "core" / "model" / "calibration.json"
        out.write_text(json.dumps({k: getattr(cal, k) for k in cal.__dataclass_fields__},
                                  indent=2) + "\n")
        print(f"wrote {out}: q={cal.q} stall_ratio={cal.stall_ratio} "
              f"largest stall={cal.unseen_boundary_s}s "
              f"boundary_rel={cal.boundary_rel} val_rel={cal.val_rel} "
              f"post_rel={cal.post_rel} init_rel={cal.init_rel}")
    print(f"calibration: {cal.source}\n")
    if ns.all_held_out:
        print("\n".join(report("HELD-OUT runs (all)", evaluate(pairs, cal), ns.markdown)))
        return 0
    print("\n".join(report("calibration runs", evaluate(calib, cal), ns.markdown)))
    print()
    print("\n".join(report("HELD-OUT runs", evaluate(held, cal), ns.markdown)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
