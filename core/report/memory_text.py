"""Memory in words: a row's peak and its program's forecast (the app's detail view, `rank`),
and the batch sizes that do not fit (headless output)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from ..model.memory.forecast import WHAT, InstanceFit, ProgramMemory
from ..model.rows import RowMemory
from ..model.rows import RankedRow

MAX_NAMED = 6  # instances named in one line; the rest counted


def fmt_mb(mb: float | None) -> str:
    if mb is None:
        return "?"
    return f"{mb / 1024:.1f} GB" if mb >= 1024 else f"{mb:.0f} MB"


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:MAX_NAMED])
    return shown + (f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else "")


def peak_line(m: RowMemory) -> str:
    """ "peak host RSS 1.2 GB on cpu (limit 2.0 GB)" """
    limit = f" of {fmt_mb(m.limit_mb)}" if m.limit_mb else ""
    host = f"; host RSS {fmt_mb(m.host_peak_mb)}" if m.basis != "host" and m.host_peak_mb else ""
    return f"peak {WHAT.get(m.basis, m.basis)} {fmt_mb(m.peak_mb)} on {m.device}{limit}{host}"


def row_memory_lines(row: RankedRow) -> list[str]:
    """What the detail view says of a row's memory, one line each."""
    m = row.memory
    if m is None:  # a log with no memory event and no samples: nothing to say
        return []
    lines = [f"memory: {peak_line(m)}" + (" - does not fit" if m.ran_out else "")]
    if m.ran_out and m.reason:
        lines.append(f"  {m.reason}")
    if not m.forecast:
        lines.append("  forecast: needs probes of this program at two batch sizes or more")
        return lines
    lines.append(f"  forecast ({m.headroom:.0%} headroom): {m.forecast}")
    here = row.instance
    if here in m.largest_on:
        largest = m.largest_on[here]
        fits = m.fits_on.get(here)
        verdict = "" if fits is None else ("fits" if fits else "does not fit")
        most = "no bound measured" if largest is None else f"at most b{largest}"
        lines.append(f"  on {here}: b{row.batch_size} {verdict}, {most} ({m.reach})".replace(" ,", ","))
    misses = sorted(i for i, ok in m.fits_on.items() if not ok)
    if misses:
        lines.append(f"  b{row.batch_size} does not fit on {len(misses)} of {len(m.fits_on)} "
                     f"instances: {_names(misses)}")
    elif m.fits_on:
        lines.append(f"  b{row.batch_size} fits on every instance of the catalog with memory figures")
    if m.proxy:
        lines.append("  GPU memory forecast from host RSS (no GPU was probed): a rough proxy")
    return lines


def print_memory(group: Sequence[RankedRow], no_fit: Sequence[RankedRow],
                 program: ProgramMemory | None, out: TextIO) -> None:
    """Below a workload's ranking: the batch sizes that did not fit, and what the memory
    forecast says about the instances in it."""
    if no_fit:
        out.write("does not fit (the probe ran out of memory: no estimate):\n")
        for r in no_fit:
            out.write(f"  ✗ {r.instance or '?'} b{r.batch_size}: "
                      f"{r.notes[0] if r.notes else 'does not fit'}\n")
    main = program.main if program is not None else None
    if program is None or main is None:
        return
    out.write(f"memory forecast: {main.rests_on()}\n")
    instances = list(dict.fromkeys(r.instance for r in [*group, *no_fit] if r.instance))
    known = [(i, f) for i in instances if (f := program.on(i)) is not None]
    if known:
        said = ", ".join(f"{i} b{f.largest}" if f.largest is not None else f"{i} unbounded"
                         for i, f in known)
        out.write(f"  largest batch size that fits ({program.headroom:.0%} headroom): {said}\n")


def fit_cell(fit: InstanceFit | None, batch_sizes: Sequence[int]) -> str:
    """The setup table's cell: do the chosen batch sizes fit on this instance? "" (no
    forecast), "all", "≤256" (the largest chosen that fits), "none"."""
    if fit is None or not batch_sizes:
        return ""
    ok = [b for b in batch_sizes if fit.fits.get(b, True)]
    if len(ok) == len(batch_sizes):
        return "all"
    return f"≤{max(ok)}" if ok else "none"


def setup_note(workload: str, program: ProgramMemory | None, batch_sizes: Sequence[int],
               picked: Sequence[str]) -> str:
    """One short line under the setup summary (80 columns): what the memory forecast says of
    the picks, or plainly that there is nothing to forecast from."""
    main = program.main if program is not None else None
    if program is None or main is None:
        return f"memory: nothing to forecast from (no {workload} probes at 2+ batch sizes)"
    short = {"device": "GPU", "host": "RSS", "address-space": "VM"}[main.basis]
    said = (f"memory ({short} b{min(main.batch_sizes)}-b{max(main.batch_sizes)}, "
            f"{program.headroom:.0%} room): ")
    misses = [f"b{b} on {i}" for i in picked if (f := program.on(i)) is not None
              for b in batch_sizes if not f.fits.get(b, True)]
    if misses:
        return said + "✗ " + _names(misses)
    far = max(batch_sizes, default=0)
    reach = f" · b{far} {main.reach(far):.0f}x past probes" if far and main.reach(far) > 2 else ""
    return said + ("picks hold all" if picked else "see column fit") + reach
