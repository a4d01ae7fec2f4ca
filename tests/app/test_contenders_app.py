"""`c` on the setup screen: probe only the contenders in the app. Four configured hosts labelled
as `[[catalog]]` instances of different GPUs; the probes are the stand-in at the Session's
factory seam (their step times follow the GPU label, so the plan's predictions hold); the
e2e test (tests/e2e/test_contenders.py) runs real probes headless."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from fakes import SteppingProbe
from pilot_steps import finished_view
from probecast.core.run.config import Host
from probecast.core.run.runners import ProbeSpec

# instance: (GPU as nvidia-smi writes it, GPUs, step seconds)
LABELS = {
    "lab-h100x8": ("NVIDIA H100 80GB HBM3", 8, 0.002),
    "lab-a100": ("NVIDIA A100-SXM4-40GB", 1, 0.012),
    "lab-v100": ("Tesla V100-SXM2-16GB", 1, 0.03),
    "lab-t4": ("Tesla T4", 1, 0.06),
    "lab-k80": ("Tesla K80", 1, 0.3),
}


def config_text() -> str:
    lines = ['[probe]', 'command = "python3 train.py"', 'batch_sizes = [64]',
             'adaptive_budget = 0', '']
    for name, (gpu, count, _) in LABELS.items():
        lines += ['[[hosts]]', f'name = "{name}"', 'kind = "local"', f'instance = "{name}"', '',
                  '[[catalog]]', f'name = "{name}"', f'gpu = "{gpu}"', f'gpus = {count}', '']
    return "\n".join(lines)


def test_c_probes_only_the_contenders_and_ranks_the_rest_predicted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from probecast.core.run import session as session_mod
    from probecast.tui.main import make_live_app

    ran: list[str] = []

    def factory(hosts: list[Host]):  # type: ignore[no-untyped-def]
        def make(host: Host, spec: ProbeSpec, path: Path) -> SteppingProbe:
            ran.append(spec.key)
            # the step time follows the GPU label, so the plan's predictions hold
            return SteppingProbe(spec, LABELS[spec.instance][2], noise=0.01,
                                 steps_per_epoch=2000, epochs=2)

        return make

    monkeypatch.setattr(session_mod, "runner_factory", factory)
    monkeypatch.chdir(tmp_path)
    cfg = tmp_path / "probecast.toml"
    cfg.write_text(config_text())
    app = make_live_app(str(cfg))

    async def in_the_app() -> tuple[list[Any], list[str], str]:
        async with app.run_test(size=(120, 40)) as pilot:
            for _ in LABELS:  # every configured host, one per row
                await pilot.press("space", "down")
            await pilot.press("c")
            await pilot.pause()
            summary = str(app.screen.query_one("#summary").render())
            await pilot.press("s")
            await pilot.pause()
            await finished_view(app, pilot)
            assert app.job is not None
            shown = list(app.screen._rows.values())  # type: ignore[attr-defined]
            return shown, app.job.summary(), summary

    shown, said, summary = asyncio.run(in_the_app())
    assert "only the contenders" in summary
    assert 0 < len(ran) < len(LABELS)  # fewer probes than candidates
    assert {r.instance for r in shown} == set(LABELS)  # every candidate in the ranking
    predicted = [r for r in shown if r.predicted]
    assert {r.instance for r in predicted} == set(LABELS) - {k.removesuffix("-b64") for k in ran}
    assert all(r.mark == "~" for r in predicted)
    assert shown[0].instance == "lab-h100x8"
    assert any(f"{len(LABELS) - len(ran)} probe(s) saved" in line for line in said), said
