"""Estimate accuracy: probe prefixes of real full-training logs vs. their real end time.

    python benchmarks/step_statistics.py sample_logs/cpu-keras [--steps 30] [--markdown]

For every *complete* log (a full training recorded by the agent with --full), take the prefix a
probe would have produced - init, the first K steps, the first two validation passes - estimate
the whole training with each steady-state statistic, with and without validation, and with and
without one observed epoch boundary (the first step of epoch 2), and compare to the real
end time. Prints per-log errors and a summary: median / max absolute % error per variant.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from probecast.core.agent.policy import StopPolicy  # noqa: E402
from probecast.core.model.estimate.runtime import NoEstimate, estimate_runtime  # noqa: E402
from probecast.core.model.events import Epoch, Event, Init, Start, Step, Val, read_log  # noqa: E402
from probecast.core.model.logstore import discover_logs  # noqa: E402
from probecast.core.model.state import fold_all  # noqa: E402

STATS = ("second", "mean10", "median", "trimmed", "mean")


@dataclass
class Case:
    name: str
    events: list[Event]
    real: float
    n_ep: int


def load_cases(paths: list[str]) -> list[Case]:
    files, errors = discover_logs(paths)
    for e in errors:
        print(e, file=sys.stderr)
    cases = []
    for f in files:
        events, report = read_log(f)
        if report.end is None or report.end.status != "complete":
            continue
        # Keras logs an `epoch` per epoch; PyTorch's loops have no epoch end to report, and
        # number their steps' epochs instead
        n_ep = max(sum(1 for e in events if isinstance(e, Epoch)),
                   1 + max((e.epoch for e in events if isinstance(e, Step)), default=-1))
        cases.append(Case(f.stem, events, report.end.t, n_ep))
    return cases


def prefix(events: list[Event], steps: int, boundary: bool) -> list[Event]:
    """What a probe of `steps` steps would have logged (plus two validations, and optionally
    the first step of epoch 2 - one observed boundary)."""
    out: list[Event] = []
    n = 0
    vals = [e for e in events if isinstance(e, Val)][:2]
    first_of_e1 = next((e for e in events if isinstance(e, Step) and e.epoch == 1), None)
    for e in events:
        if isinstance(e, (Start, Init)):
            out.append(e)
        elif isinstance(e, Step) and e.epoch == 0 and n < steps:
            out.append(e)
            n += 1
    out.extend(vals)
    if boundary and first_of_e1 is not None:
        out.append(first_of_e1)
    return out


def adaptive_steps(events: list[Event], target: float, min_steps: int) -> int:
    policy = StopPolicy(max_steps=None, target_ci=target, min_steps=min_steps)
    for i, e in enumerate(s for s in events if isinstance(s, Step) and s.epoch == 0):
        policy.observe(e.dt, steady=i > 0)
        if policy.should_stop():
            return policy.steps
    return policy.steps


def estimate(events: list[Event], n_ep: int, stat: str, validation: bool) -> float:
    state = fold_all(events)
    if stat == "mean10":  # the dissertation's Table 5.5: mean of iterations 2..10
        from probecast.core.agent.steady import StepSeries

        series = StepSeries()
        for v in list(state.steady.values)[:9]:
            series.add(v)
        state.steady = series
        stat = "mean"
    return estimate_runtime(state, n_ep, use_validation=validation, equation="5.3" if validation
                            else "5.4", statistic=stat).runtime_s


def run(cases: list[Case], steps: int, target: float) -> dict[str, list[float]]:
    errors: dict[str, list[float]] = {}
    print(f"{'log':<28} {'real':>7}  " + " ".join(f"{s:>8}" for s in STATS) + "   (+boundary, trimmed)")
    for c in cases:
        row = []
        for stat in STATS:
            for boundary in (False, True):
                for validation in (True, False):
                    try:
                        est = estimate(prefix(c.events, steps, boundary), c.n_ep, stat, validation)
                    except NoEstimate:
                        continue
                    err = 100 * (est - c.real) / c.real
                    key = f"{stat}{' +boundary' if boundary else ''}{'' if validation else ' no-val'}"
                    errors.setdefault(key, []).append(err)
                    if validation and not boundary:
                        row.append(err)
        k = adaptive_steps(c.events, target, 10)
        est = estimate(prefix(c.events, k, True), c.n_ep, "trimmed", True)
        errors.setdefault(f"adaptive ci<={target:.0%} +boundary", []).append(100 * (est - c.real) / c.real)
        errors.setdefault("adaptive steps", []).append(k)
        bnd = errors["trimmed +boundary"][-1]
        print(f"{c.name[:28]:<28} {c.real:>6.1f}s  " + " ".join(f"{e:>+7.1f}%" for e in row)
              + f"   {bnd:+.1f}%")
    return errors


def summary(errors: dict[str, list[float]], markdown: bool) -> str:
    lines = []
    if markdown:
        lines += ["| estimator (probe prefix) | median abs % error | max abs % error | n |",
                  "|---|---:|---:|---:|"]
    for key, errs in errors.items():
        if key == "adaptive steps":
            continue
        a = [abs(e) for e in errs]
        if markdown:
            lines.append(f"| {key} | {statistics.median(a):.1f} | {max(a):.1f} | {len(a)} |")
        else:
            lines.append(f"{key:<36} median {statistics.median(a):6.1f}%  max {max(a):6.1f}%  n={len(a)}")
    steps = errors.get("adaptive steps")
    if steps:
        lines.append(f"adaptive stop: median {statistics.median(steps):.0f} steps "
                     f"(min {min(steps):.0f}, max {max(steps):.0f})")
    return "\n".join(lines)


def wall_of(events: list[Event]) -> float:
    """Wall time a probe of these events took: the sum of its timed events' dt (for a prefix cut
    from a full run, the borrowed validation passes count at what they cost)."""
    return sum(getattr(e, "dt", 0.0) for e in events)


def probe_length(cases: list[Case], target: float) -> list[str]:
    """Accuracy vs cost per probe length: fixed step counts and adaptive stopping."""
    out = ["probe length                 median abs err   max abs err   probe wall / full wall (median)"]
    for label, boundary in (("within epoch 1", False), ("+ one epoch boundary", True)):
        for k in (10, 30, 100, None):
            errs, ratios = [], []
            for c in cases:
                steps = adaptive_steps(c.events, target, 10) if k is None else k
                pre = prefix(c.events, steps, boundary)
                try:
                    est = estimate(pre, c.n_ep, "trimmed", True)
                except NoEstimate:
                    continue
                errs.append(abs(100 * (est - c.real) / c.real))
                wall = wall_of(pre)
                if boundary:  # reaching epoch 2 means running all of epoch 1 first
                    first_e1 = next(e for e in c.events if isinstance(e, Step) and e.epoch == 1)
                    wall = first_e1.t + sum(v.dt for v in pre if isinstance(v, Val))
                ratios.append(wall / c.real)
            if errs:
                name = f"{'adaptive ci<=' + format(target, '.0%') if k is None else str(k) + ' steps'}"
                out.append(f"{name + ', ' + label:<36} {statistics.median(errs):6.1f}%      "
                           f"{max(errs):6.1f}%        {statistics.median(ratios):.3f}")
    return out


def real_probes(paths: list[str]) -> list[str]:
    """Real short probes (probe-TAG.jsonl) against the full run of the same setting (full-TAG)."""
    files, _ = discover_logs(paths)
    full = {f.stem[len("full-"):]: f for f in files if f.stem.startswith("full-")}
    out = ["real probes vs their full runs (Eq. auto, trimmed mean, planned epochs of the full run):",
           f"{'setting':<34} {'steps':>5} {'boundary':>8} {'error':>8} {'probe/full wall time':>21}"]
    errs, ratios, picks = [], [], {}
    for f in files:
        if not f.stem.startswith("probe-") or f.stem[len("probe-"):] not in full:
            continue
        tag = f.stem[len("probe-"):]
        pev, _ = read_log(f)
        fev, frep = read_log(full[tag])
        if frep.end is None or frep.end.status != "complete":
            continue
        n_ep = sum(1 for e in fev if isinstance(e, Epoch))
        st = fold_all(pev)
        try:
            est = estimate_runtime(st, n_ep).runtime_s
        except NoEstimate:
            continue
        real = frep.end.t
        err = 100 * (est - real) / real
        ratio = wall_of(pev) / real
        errs.append(abs(err))
        ratios.append(ratio)
        out.append(f"{tag:<34} {st.steps:>5} {len(st.boundary_steps):>8} {err:>+7.1f}% {ratio:>21.3f}")
        workload = tag.split("-b")[0]
        picks.setdefault(workload, []).append((tag, est, real))
    if errs:
        out.append(f"real probes: median abs error {statistics.median(errs):.1f}%, max {max(errs):.1f}%, "
                   f"median probe/full wall time {statistics.median(ratios):.3f}")
    out += pick_report(picks)
    return out


# Stand-in prices for the two host configurations (1 core costs half of 2 cores).
PRICES = {"cpu-1core": 0.10, "cpu-2core": 0.20}


def pick_report(picks: dict[str, list[tuple[str, float, float]]]) -> list[str]:
    out = ["picks (per workload, over host configuration x batch size):"]
    for workload, rows in sorted(picks.items()):
        if len(rows) < 2:
            continue
        for what, key in (("fastest", lambda r, i: r[i]),
                          ("cheapest", lambda r, i: r[i] * _host(r[0]))):
            pred = min(rows, key=lambda r: key(r, 1))[0]
            true_sorted = sorted(rows, key=lambda r: key(r, 2))
            true = true_sorted[0][0]
            gap = (key(true_sorted[1], 2) - key(true_sorted[0], 2)) / key(true_sorted[0], 2)
            verdict = "right" if pred == true else ("wrong" if gap >= 0.05 else "tie (<5% gap)")
            out.append(f"  {workload:<14} {what:<8} predicted {pred:<30} true {true:<30} "
                       f"gap {gap:5.1%}: {verdict}")
    return out


def _host(tag: str) -> float:
    return PRICES["cpu-2core" if tag.endswith("cpu-2core") else "cpu-1core"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--steps", type=int, default=30, help="probe length in steps (fixed-length variants)")
    ap.add_argument("--target-ci", type=float, default=0.02)
    ap.add_argument("--markdown", action="store_true")
    ns = ap.parse_args()
    cases = load_cases(ns.logs)
    if not cases:
        print("no complete (full-run) logs found", file=sys.stderr)
        return 1
    errors = run(cases, ns.steps, ns.target_ci)
    print()
    print(summary(errors, ns.markdown))
    print()
    print("\n".join(probe_length(cases, ns.target_ci)))
    print()
    print("\n".join(real_probes(ns.logs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
