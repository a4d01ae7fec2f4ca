"""A probe that unwinds a custom loop ends the program with os._exit, which runs no atexit - not
multiprocessing's, which at a plain exit terminates the process's daemonic children. A PyTorch
DataLoader's workers are such children: left alive, they find their parent gone only at their
watchdog's next look (every 5 s), and the probe's end waited for them - minGPT's trainer, 4
workers: 5.0 s counted as the program's post-training work, +22 % (2026-12-01). The hook now
ends them as multiprocessing would; other children are the program's own, left as they are."""

from __future__ import annotations

import multiprocessing
import signal
import time

import pytest

from probecast.core.agent.hook import _end_daemonic_children

pytestmark = pytest.mark.unit


def test_daemonic_children_are_ended_as_a_plain_exit_ends_them_and_others_left() -> None:
    context = multiprocessing.get_context("fork")
    worker = context.Process(target=time.sleep, args=(60,), daemon=True)
    own = context.Process(target=time.sleep, args=(60,), daemon=False)
    worker.start()
    own.start()
    try:
        _end_daemonic_children()
        assert own.is_alive()  # not a daemon: a plain exit waits for it, it is not ended
        worker.join(30)  # (ended already, unless this host is very loaded)
        assert worker.exitcode == -signal.SIGTERM  # terminated, not its 60 s sleep over
    finally:
        for p in (worker, own):
            p.kill()
            p.join()
