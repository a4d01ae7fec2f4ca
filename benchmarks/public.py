"""Public training scripts nobody here wrote, probed as a user probes them and run plainly for
the truth: the check a newcomer's own job gets.

    .venv/bin/python benchmarks/public.py record SPEC OUT [--root DIR] [--only NAME ...]
    .venv/bin/python benchmarks/public.py judge OUT [--markdown] [--prefix P ...] [--stall-prior A B]
    .venv/bin/python benchmarks/public.py cost SPEC OUT [--reps 3] [--root DIR] [--only NAME ...]

SPEC is a JSON list of settings, each ``{"name", "cwd", "argv", "env"}``: the folder the
command runs from (relative to ``--root``, default SPEC's folder), the user's command line
(``python`` is this venv's interpreter) and extra environment (``PYTHONPATH`` entries relative
to the same folder); optionally ``"clean"``, paths under that folder removed before each run -
what a program reloads instead of doing again (a KerasTuner project folder made without
``overwrite=True``: the second run would reload the first's finished search and train nothing) -
and ``"cpus"``, the CPUs both runs are held to (``taskset -c``: ``"0"`` makes a one-core host).
The scripts themselves are public code and stay out of this repository:
benchmarks/corpus/public/README.md names each one's repository, commit and the data it was
given, and how to lay them out (its spec.json is the one recorded).

``record`` runs each setting twice, back to back, the probe first for every other setting
(``order.txt`` keeps the order; RESULTS §11 says why): once under the agent with the default
stop policy and nothing configured - what ``probecast --local -- CMD`` runs - into
``probe-NAME.jsonl.gz``, and once plainly, no agent, launch to exit timed here, into
``NAME.truth.json`` (with the program's output beside it). Both runs' output is timed line by
line (``probe-NAME.lines.gz``, ``NAME.lines.gz``; ``benchmarks/stamp.py``: the program runs with
``PYTHONUNBUFFERED=1``, as a terminal would show its prints) - ``benchmarks/progress.py`` reads
them side by side. Run it on a quiet machine.

``judge`` asks of every probe what the product answers (``probecast rank`` on the probe: the
length read from the program, the shipped constants - none measured on these scripts) and
compares it with the plain run: answered or not, the error, inside the bounds or not; then the
signed median, the median and largest |error| and the share inside, against the targets of
issue #37's check on public scripts (every case answered, |signed median| <= 5 %, median |error|
<= 10 %, max <= 35 %, >= 14 of 16 inside).
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from probecast.core.model.estimate import bounds  # noqa: E402
from probecast.core.model.estimate.early_stop import ENDED, UPPER_BOUND  # noqa: E402
from probecast.core.model.logstore import load_probe  # noqa: E402
from probecast.core.model.pricing import Catalog  # noqa: E402
from probecast.core.model.rank.ranking import Pricing, RankOptions, estimate_row  # noqa: E402
from probecast.core.model.rows import Candidate  # noqa: E402
from shapes import Judged  # noqa: E402 - benchmarks/shapes.py, beside this script: err, inside
from stamp import run_stamped  # noqa: E402 - benchmarks/stamp.py: each run's lines, timed


@dataclass(frozen=True)
class Setting:
    name: str
    cwd: Path
    argv: tuple[str, ...]
    env: dict[str, str]
    clean: tuple[str, ...] = ()  # paths under cwd removed before each run
    cpus: str = ""  # the CPUs both runs are held to ("0": a one-core host; taskset's list)

    def pinned(self, cmd: list[str]) -> list[str]:
        """``cmd`` held to the setting's CPUs, if it names any."""
        return ["taskset", "-c", self.cpus, *cmd] if self.cpus else cmd

    def cores(self) -> int:
        return len(self.cpus.split(",")) if self.cpus else _cores()

    def fresh(self) -> None:
        """Remove what an earlier run left that this one would reload instead of doing."""
        for name in self.clean:
            path = (self.cwd / name).resolve()
            if self.cwd.resolve() not in path.parents:
                raise SystemExit(f"{self.name}: clean path {name!r} is outside its folder")
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)


def load_spec(path: Path, root: Path | None = None) -> list[Setting]:
    base = (root or path.parent).resolve()
    out = []
    for item in json.loads(path.read_text()):
        env = dict(item.get("env", {}))
        if "PYTHONPATH" in env:
            env["PYTHONPATH"] = os.pathsep.join(str(base / p) for p in env["PYTHONPATH"].split(":"))
        out.append(Setting(item["name"], base / item["cwd"], tuple(item["argv"]), env,
                           tuple(item.get("clean", ())), str(item.get("cpus", ""))))
    return out


def _argv(words: tuple[str, ...]) -> list[str]:
    """``python`` is this venv's interpreter; a launcher it installed (torchrun) is its own."""
    first, *rest = words
    if first == "python":
        return [sys.executable, *rest]
    beside = Path(sys.executable).parent / first
    return [str(beside) if beside.exists() else first, *rest]


def _gzip(path: Path) -> None:
    if path.exists():
        with open(path, "rb") as src, gzip.open(f"{path}.gz", "wb", compresslevel=9) as dst:
            shutil.copyfileobj(src, dst)
        path.unlink()


def _env(s: Setting, cache: str) -> dict[str, str]:
    """The setting's environment, with a compile cache and a temp folder of its own (``cache``):
    each run starts as on a fresh host, whichever of the two runs first (record.py does the
    same)."""
    return {**os.environ, **s.env, "TF_CPP_MIN_LOG_LEVEL": "3", "MPLBACKEND": "Agg",
            "TORCHINDUCTOR_CACHE_DIR": cache, "TMPDIR": cache,
            "TRITON_CACHE_DIR": os.path.join(cache, "triton")}


def _cores() -> int:
    """The cores this process may run on: a run under ``taskset -c 0`` is a one-core host's."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _instance(s: Setting) -> str:
    return f"cpu-{s.cores()}core"


def _run_probe(s: Setting, out: Path, cache: str) -> tuple[int, float]:
    tag = f"probe-{s.name}"
    (out / f"{tag}.jsonl").unlink(missing_ok=True)
    env = _env(s, cache)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), s.env.get("PYTHONPATH"))
                                        if p)
    cmd = [sys.executable, "-m", "probecast.core.agent", "run", "--probe", tag,
           "--instance", _instance(s), "--out", str(out / f"{tag}.jsonl"),
           "--output", str(out / f"{tag}.output"), "--first-step-timeout", "900",
           "--workload-label", s.name, "--", *_argv(s.argv)]
    code, wall = run_stamped(s.pinned(cmd), None, out / f"{tag}.lines.gz", cwd=s.cwd, env=env)
    _gzip(out / f"{tag}.jsonl")
    _gzip(out / f"{tag}.output")
    return code, wall


def _run_plain(s: Setting, out: Path, cache: str) -> tuple[int, float]:
    env = _env(s, cache)
    raw = out / f"{s.name}.output"
    code, wall = run_stamped(s.pinned(_argv(s.argv)), raw, out / f"{s.name}.lines.gz",
                             cwd=s.cwd, env=env)
    _gzip(raw)
    (out / f"{s.name}.truth.json").write_text(json.dumps(
        {"wall_s": round(wall, 3), "exit": code, "argv": list(s.argv),
         "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
         "machine": f"{platform.node()} ({os.cpu_count()} CPUs"
                    f"{f', {s.cores()} usable' if s.cores() != os.cpu_count() else ''})"},
        indent=1) + "\n")
    return code, wall


def record(spec: Path, out: Path, only: list[str] | None, root: Path | None = None) -> int:
    out.mkdir(parents=True, exist_ok=True)
    settings = [s for s in load_spec(spec, root) if not only or s.name in only]
    for i, s in enumerate(settings):
        for probe in ((True, False) if i % 2 == 0 else (False, True)):
            tag = f"probe-{s.name}" if probe else s.name
            with open(out / "order.txt", "a") as fh:
                fh.write(f"{tag}\n")
            cache = tempfile.mkdtemp(prefix="probecast-compile-")
            s.fresh()
            rc, wall = (_run_probe if probe else _run_plain)(s, out, cache)
            shutil.rmtree(cache, ignore_errors=True)
            print(f"{tag:<40} exit {rc:>3}  {wall:7.1f}s", flush=True)
    return 0


def _run_full(s: Setting, out: Path, cache: str, rep: int) -> tuple[int, float]:
    """The setting under the agent with ``--full``: it sees the whole run, so it must take as
    long as the plain run (RESULTS §10)."""
    tag = f"full-{s.name}-{rep}"
    env = _env(s, cache)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), s.env.get("PYTHONPATH")) if p)
    cmd = [sys.executable, "-m", "probecast.core.agent", "run", "--full", "--probe", tag,
           "--instance", _instance(s), "--out", str(out / f"{tag}.jsonl"),
           "--first-step-timeout", "900", "--workload-label", s.name, "--", *_argv(s.argv)]
    code, wall = run_stamped(s.pinned(cmd), None, out / f"{tag}.lines.gz", cwd=s.cwd, env=env)
    _gzip(out / f"{tag}.jsonl")
    return code, wall


def cost(spec: Path, out: Path, only: list[str] | None, reps: int,
         root: Path | None = None) -> int:
    """Each setting plainly and under the agent with ``--full``, ``reps`` times, alternating
    which goes first; ``cost.jsonl`` gets a row a run. The agent's cost on a public script is
    the full run's wall over the plain one's next to it."""
    out.mkdir(parents=True, exist_ok=True)
    settings = [s for s in load_spec(spec, root) if not only or s.name in only]
    for rep in range(reps):
        for i, s in enumerate(settings):
            for full in ((True, False) if (i + rep) % 2 == 0 else (False, True)):
                cache = tempfile.mkdtemp(prefix="probecast-compile-")
                s.fresh()
                if full:
                    rc, wall = _run_full(s, out, cache, rep)
                else:
                    rc, wall = run_stamped(s.pinned(_argv(s.argv)), None,
                                           out / f"plain-{s.name}-{rep}.lines.gz",
                                           cwd=s.cwd, env=_env(s, cache))
                shutil.rmtree(cache, ignore_errors=True)
                row = {"name": s.name, "rep": rep, "variant": "full" if full else "plain",
                       "exit": rc, "wall_s": round(wall, 3)}
                with open(out / "cost.jsonl", "a") as fh:
                    fh.write(json.dumps(row) + "\n")
                print(f"{s.name:<32} rep {rep} {row['variant']:<5} exit {rc:>3} {wall:7.1f}s",
                      flush=True)
    print("\n".join(cost_report(out)))
    return 0


def cost_report(out: Path) -> list[str]:
    """Per script, the median over repetitions of full / plain (the two runs of a repetition,
    back to back), and their median over scripts."""
    rows = [json.loads(line) for line in (out / "cost.jsonl").read_text().splitlines() if line]
    walls: dict[tuple[str, int], dict[str, float]] = {}
    for r in rows:
        if r["exit"] == 0:
            walls.setdefault((r["name"], r["rep"]), {})[r["variant"]] = r["wall_s"]
    ratios: dict[str, list[float]] = {}
    for (name, _), w in sorted(walls.items()):
        if "full" in w and "plain" in w:
            ratios.setdefault(name, []).append(w["full"] / w["plain"])
    lines = ["| script | plain (s, median) | full / plain, each repetition | median |",
             "|---|---|---|---|"]
    for name, rs in ratios.items():
        plain = statistics.median(w["plain"] for (n, _), w in walls.items()
                                  if n == name and "plain" in w)
        lines.append(f"| {name} | {plain:.1f} | {' '.join(f'{r:.3f}' for r in rs)} | "
                     f"{statistics.median(rs):.3f} |")
    if ratios:
        pairs = [r for rs in ratios.values() for r in rs]
        lines.append(f"\n{len(pairs)} pairs: full / plain median {statistics.median(pairs):.3f}, "
                     f"slower under the agent {sum(r > 1 for r in pairs)} of {len(pairs)}")
        meds = [statistics.median(rs) for rs in ratios.values()]
        lines.append(f"{len(ratios)} scripts: full / plain median {statistics.median(meds):.3f}"
                     f" (range {min(meds):.3f}-{max(meds):.3f}); slower under the agent "
                     f"{sum(m > 1 for m in meds)} of {len(meds)}")
    return lines


def judge(out: Path) -> list[Judged]:
    pricing = Pricing(Catalog.embedded())
    judged = []
    for truth_file in sorted(out.glob("*.truth.json")):
        name = truth_file.name[: -len(".truth.json")]
        truth = json.loads(truth_file.read_text())
        probe = out / f"probe-{name}.jsonl.gz"
        if truth["exit"] != 0 or not probe.exists():
            print(f"{name}: plain run exit {truth['exit']}, probe "
                  f"{'found' if probe.exists() else 'missing'}", file=sys.stderr)
            continue
        record_ = load_probe(probe)
        candidate = Candidate(name, name, record_.state, path=str(probe))
        try:
            row, why = estimate_row(candidate, pricing, RankOptions()), ""
        except Exception as exc:  # noqa: BLE001 - a benchmark reports every failure
            row, why = None, f"{type(exc).__name__}: {exc}"
        judged.append(Judged(name, name, 0, float(truth["wall_s"]), 0, row, why))
    return judged


def report(judged: list[Judged], markdown: bool) -> list[str]:
    errs = [e for j in judged if (e := j.err) is not None]
    ins = [i for j in judged if (i := j.inside) is not None]
    answered = sum(j.row is not None and not j.row.per_steps for j in judged)
    lines = []
    head = "| script | real (s) | estimate (s) | bounds (s) | error | inside | equation |"
    lines += [head, "|" + "---|" * 7] if markdown else [head]
    for j in judged:
        r = j.row
        if r is None or r.per_steps:
            what = j.why if r is None else f"per {r.per_steps} steps: {r.length_unknown}"
            lines.append(f"| {j.name} | {j.truth:.1f} | - | - | - | - | {what} |")
            continue
        lines.append(f"| {j.name} | {j.truth:.1f} | {r.runtime_s:.1f} | "
                     f"{r.runtime_low_s:.1f}-{r.runtime_high_s:.1f} | {j.err:+.1%} | "
                     f"{'yes' if j.inside else 'NO'} | {r.equation} |")
    lines.append("")
    if errs:
        signed = statistics.median(errs)
        med = statistics.median(abs(e) for e in errs)
        mx = max(abs(e) for e in errs)
        share = sum(ins) / len(ins)
        lines.append(f"{len(judged)} scripts: {answered} answered; signed median {signed:+.1%}, "
                     f"median |error| {med:.1%}, max {mx:.1%}; inside {sum(ins)}/{len(ins)} "
                     f"({share:.0%}); over the truth {sum(e > 0 for e in errs)}, under "
                     f"{sum(e < 0 for e in errs)}")
        checks = [("every case answered", answered == len(judged)),
                  ("|signed median| <= 5 %", abs(signed) <= 0.05),
                  ("median |error| <= 10 %", med <= 0.10), ("max <= 35 %", mx <= 0.35),
                  (">= 14 of 16 inside (87.5 %)", share >= 14 / 16)]
        lines.append("targets: " + "; ".join(f"{what}: {'met' if ok else 'MISSED'}"
                                             for what, ok in checks))
        lines += _apart(judged)
    return lines


def early_stopped(j: Judged) -> bool:
    """An EarlyStopping ends the job where its metric stops improving: the point is the run the
    probe saw end (one draw of the epoch it stops at), else the planned epochs' (an upper bound,
    said); its check the bounds (the soonest stop to the planned)."""
    return j.row is not None and any(n.startswith((UPPER_BOUND, ENDED)) for n in j.row.notes)


def _apart(judged: list[Judged]) -> list[str]:
    """The same figures without the jobs whose length no program states: early stops (their
    length is the run's metric's) and a loop until solved (answered per steps)."""
    early = [j for j in judged if early_stopped(j)]
    known = [j for j in judged if not early_stopped(j) and j.err is not None]
    if not early or not known:
        return []
    errs = [j.err for j in known if j.err is not None]
    ins = [j.inside for j in known]
    return [f"with a length the program states ({len(known)} of {len(judged)}): signed median "
            f"{statistics.median(errs):+.1%}, median |error| "
            f"{statistics.median(abs(e) for e in errs):.1%}, max "
            f"{max(abs(e) for e in errs):.1%}, inside {sum(bool(i) for i in ins)}/{len(ins)}; "
            f"early stops: {sum(bool(j.inside) for j in early)}/{len(early)} inside, median "
            f"|error| {statistics.median(abs(j.err) for j in early if j.err is not None):.1%} "
            "(the point: the probe's run seen to its stop, one draw of its stop epoch; else the "
            "planned epochs', an upper bound)"]


def _what_if_stall_prior(prior: tuple[float, float]) -> None:
    """TensorFlow's constants with another prior for its stall odds (not the shipped ones)."""
    shipped = bounds._load_all()
    changed = {**shipped, "tf": replace(shipped["tf"], stall_prior_many=prior)}
    bounds._load_all = lambda: changed  # type: ignore[assignment]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("spec")
    rec.add_argument("out")
    rec.add_argument("--only", nargs="*", default=None)
    rec.add_argument("--root", default=None,
                     help="the folder the spec's paths are relative to (default: the spec's)")
    cst = sub.add_parser("cost", help="the agent's cost: each setting plainly and with --full")
    cst.add_argument("spec")
    cst.add_argument("out")
    cst.add_argument("--only", nargs="*", default=None)
    cst.add_argument("--reps", type=int, default=3)
    cst.add_argument("--root", default=None)
    cst.add_argument("--report", action="store_true", help="only the report of OUT's cost.jsonl")
    jud = sub.add_parser("judge")
    jud.add_argument("out")
    jud.add_argument("--markdown", action="store_true")
    jud.add_argument("--prefix", nargs="*", default=None, help="only the settings so named")
    jud.add_argument("--stall-prior", nargs=2, type=float, metavar=("A", "B"), help="a what-if: "
                     "TensorFlow's prior odds of a stall (two or more cores) as Beta(A, B)")
    ns = ap.parse_args()
    if ns.what == "cost":
        if ns.report:
            print("\n".join(cost_report(Path(ns.out))))
            return 0
        return cost(Path(ns.spec), Path(ns.out).resolve(), ns.only, ns.reps,
                    Path(ns.root) if ns.root else None)
    if ns.what == "record":
        return record(Path(ns.spec), Path(ns.out).resolve(), ns.only,
                      Path(ns.root) if ns.root else None)
    if ns.stall_prior:
        _what_if_stall_prior(tuple(ns.stall_prior))
    judged = [j for j in judge(Path(ns.out))
              if not ns.prefix or j.name.startswith(tuple(ns.prefix))]
    if not judged:
        print("no probe/plain-run pairs found", file=sys.stderr)
        return 1
    print(f"public scripts: {ns.out} - {dt.date.today()} on {platform.node()} "
          f"({platform.machine()}, {os.cpu_count()} CPUs)")
    print("\n".join(report(judged, ns.markdown)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
