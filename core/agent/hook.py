"""The hook inside every Python process the probed command starts (installed by the agent zip's
sitecustomize when PROBECAST_EVENTS is set). It never changes what the program prints and never
breaks it: anything that goes wrong here is a `log` event, and the program runs on.

It connects to the agent's event socket, builds the ProbeSession from PROBECAST_CONFIG and
installs the framework adapters (adapters/: Keras fit, Keras and TensorFlow custom loops, PyTorch
loops, Lightning, the Hugging Face Trainer) as the program imports each framework.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any

from . import probe_session as session_module
from .channel import ENV_SOCKET, ENV_SPAWN, EventClient
from .emit import Emitter, ProbeCancelled
from .policy import StopPolicy
from .probe_meta import ProbeMeta
from .probe_session import ProbeSession, ProbeStop
from .sampler import ENV_SAMPLER, prefetch_devices, switched_off

if TYPE_CHECKING:
    from .adapters import Adapter

ENV_CONFIG = "PROBECAST_CONFIG"
ENV_T0 = "PROBECAST_T0"
RANK_VARIABLES = ("RANK", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID")

_SESSION: ProbeSession | None = None
_CLIENT: EventClient | None = None  # this process's end of the event channel


def process_rank() -> int:
    for name in RANK_VARIABLES:
        value = os.environ.get(name)
        if value and value.isdigit():
            return int(value)
    return 0


def session_from_config(cfg: dict[str, Any], out: Any, t0: float | None) -> ProbeSession:
    p = cfg.get("policy", {})
    policy = StopPolicy(max_steps=p.get("max_steps"), max_seconds=p.get("max_seconds"),
                        target_ci=p.get("target_ci"), min_steps=int(p.get("min_steps", 10)),
                        min_steady_s=float(p.get("min_steady_s", 0.0)),
                        full=bool(p.get("full", False)),
                        boundary_budget=float(p.get("boundary_budget", 0.0)))
    m = cfg.get("meta", {})
    meta = ProbeMeta(probe=m.get("probe", ""), instance=m.get("instance", ""),
                     host=m.get("host", ""), workload=m.get("workload", ""),
                     batch_size=m.get("batch_size"),
                     epochs=m.get("epochs"),
                     price_per_hour=m.get("price_per_hour"), extra=m.get("extra", {}))
    meta.extra = {**meta.extra, "rank": process_rank()} if process_rank() else meta.extra
    emitter = Emitter(out=out, t0=t0, steps=out.step if isinstance(out, EventClient) else None)
    interval = None if switched_off(ENV_SAMPLER) else cfg.get("sample_interval", 1.0)
    return ProbeSession(emitter, policy, meta, sample_interval=interval, under_agent=True)


def install(began: float | None = None) -> None:
    """Connect to the agent and patch frameworks on import. Safe to call more than once.
    ``began``: the monotonic time the zip's sitecustomize began (the hook's own imports)."""
    global _SESSION
    path = os.environ.get(ENV_SOCKET)
    if not path or _SESSION is not None:
        return
    cfg = json.loads(os.environ.get(ENV_CONFIG) or "{}")
    t0 = float(os.environ[ENV_T0]) if os.environ.get(ENV_T0) else None

    def on_command(cmd: str) -> None:
        if _SESSION is not None and cmd in ("stop", "cancel"):
            _SESSION.external = cmd
            if cmd == "cancel" and not _SESSION.started:
                # not training yet (loading data, say): stop now, like a signal would
                import signal

                os.kill(os.getpid(), signal.SIGTERM)

    client = EventClient(path, on_command)
    global _CLIENT
    _CLIENT = client
    import atexit

    atexit.register(client.drain)  # registered first, so it runs after the adapters' own
    _SESSION = session = session_from_config(cfg, client, t0)
    session_module.CURRENT = session  # StepTimer / ProbeCallback in the program join it

    def hook_failed(module: str, exc: Exception, adapter: Adapter | None = None) -> None:
        what = f"what its {adapter.name} adapter times" if adapter else "its training"
        session.log("warning", f"probecast could not hook {module}"
                    + (f" for {adapter.name}" if adapter else "")
                    + f" ({type(exc).__name__}: {exc}); the program runs on, but {what} is not "
                    "timed by the hook in this process (a framework version probecast does not "
                    "know? StepTimer still works)", code="hook-failed")

    from . import adapters
    from .imports import when_imported

    adapters.install(adapters.for_session(session, cfg),
                     lambda adapter, module, exc: hook_failed(module, exc, adapter))
    for framework in ("torch", "keras", "tensorflow"):  # the launcher names what it looked for
        when_imported(framework, _hello(client, framework, session), on_error=hook_failed)
    from .length import watch_arguments

    watch_arguments()  # the program's parsed arguments: its settings, by name (length.py)
    _quiet_probe_exits()
    session.agent_init_s = _own_start_up(began, t0)
    # (not an event: where no step is found, the launcher takes it off the run it reports)
    client.write(json.dumps({"ev": "own", "own_s": round(session.agent_init_s, 6)}) + "\n")


def _own_start_up(began: float | None, t0: float | None) -> float:
    """The agent's own seconds in this process's start-up, which the plain program does not
    spend: the launcher's, from its start (T0) to starting the command, and the hook's set-up
    here (its imports and install). `init.agent_s` adds the hook's import callbacks to it."""
    import time

    from .imports import SPENT

    # (callbacks that ran inside install are counted with the rest of them, at `init`)
    own = max(0.0, time.monotonic() - began - SPENT[0]) if began is not None else 0.0
    spawned = os.environ.get(ENV_SPAWN)
    if t0 is not None and spawned:
        try:
            own += min(max(0.0, float(spawned) - t0), 60.0)
        except ValueError:
            pass
    return own


def _hello(client: EventClient, framework: str, session: ProbeSession) -> Any:
    """Tell the launcher this process imported a framework (not an event: never logged), with
    the agent's own start-up in it so far (`own_s`: where no step is found, the launcher takes
    it off the run it reports), and read the devices while the program goes on to build its
    model and data: `start` needs them at the first step (only a process that imports a
    framework may train)."""

    def say() -> None:
        from .imports import SPENT

        prefetch_devices()
        own = round(session.agent_init_s + SPENT[0], 6)
        client.write(json.dumps({"ev": "hello", "framework": framework, "own_s": own}) + "\n")

    return say


def _quiet_probe_exits() -> None:
    """A probe stop that unwinds a custom loop ends the program quietly, with status 0; a cancel
    with 130. Everything else keeps Python's usual report."""
    previous = sys.excepthook

    def hook(kind: type[BaseException], exc: BaseException, tb: Any) -> None:
        # by name: the program may use the installed package's copy of these classes
        name = type(exc).__name__
        if isinstance(exc, ProbeStop) or name == "ProbeStop":
            _finish_quietly(0)
        if name == "KeyboardInterrupt" and _SESSION is not None and (
                _SESSION.trained or _SESSION.any_stopped):
            _finish_quietly(0)  # the custom-loop watchdog interrupted a loop it could not stop
        if isinstance(exc, ProbeCancelled) or name == "ProbeCancelled":
            _finish_quietly(130)
        _out_of_memory(exc)
        previous(kind, exc, tb)

    sys.excepthook = hook


def _out_of_memory(exc: BaseException) -> None:
    """The program's own out-of-memory error ends the probe as `does-not-fit`, not `failed`: a
    `memory` event (the device, its peaks, the limit), a log line, then `done`; the launcher
    ends the log. Before the first step there is no `start` yet: this process writes one."""
    session = _SESSION
    if session is None:
        return
    try:
        from . import memory

        cause = memory.out_of_memory(exc)
        if cause is None:
            return
        if session.trained:  # after training (an evaluation, say): said, training did fit
            session.log("warning", f"out of memory after training: {cause}", code="out-of-memory")
            return
        if not session.started:
            _start_without_steps(session)
        fields = memory.measure()
        session.emitter.emit("memory", **fields)
        reason = memory.does_not_fit_reason(session.meta.batch(), fields, cause)
        session.log("error", reason, code="out-of-memory")
        session.memory_said = True
        session.mark_done("does-not-fit", reason)
    except Exception:  # noqa: BLE001 - the program's own error report comes first
        pass


def _start_without_steps(session: ProbeSession) -> None:
    """`start` for a process that ran out of memory before its first step ended: what it was
    meant to train, its framework and devices (the launcher relays it as the probe's)."""
    import uuid

    from .sampler import describe_devices

    m = session.meta
    frameworks = [f"{name} {getattr(sys.modules[name], '__version__', '')}".strip()
                  for name in ("torch", "keras", "tensorflow") if name in sys.modules]
    fields: dict[str, Any] = {"instance": m.instance, "workload": m.workload,
                              "batch_size": m.batch(), "steps_per_epoch": 0,
                              "val_steps": 0, "devices": describe_devices(),
                              "framework": m.framework or (frameworks[0] if frameworks else ""),
                              **m.extra}
    if m.epochs:
        fields["epochs"] = int(m.epochs)
    if m.host:
        fields["host"] = m.host
    if m.price_per_hour is not None:
        fields["price_per_hour"] = m.price_per_hour
    session.started = True
    session.emitter.start(m.probe or uuid.uuid4().hex[:12], **fields)


def _finish_quietly(code: int) -> None:
    session = _SESSION
    if session is not None:
        try:
            if code == 0:
                session.log("info", "the probe stopped a training loop by unwinding it (no "
                                    "fit()): the program's post-training code did not run",
                            code="no-post")
                session.unwound()  # later phases the unwinding skipped, if the source has them
                if session.any_stopped:
                    session.at_exit()  # training was over when the probe ended the loop
                elif not session.trained:
                    session.mark_done("probe-done", session.policy.reason)
            elif not session.trained:
                session.mark_done("stopped", "cancelled")
        except Exception:  # noqa: BLE001 - never let the hook turn an exit into a crash
            pass
    if _CLIENT is not None:
        try:
            _CLIENT.drain()  # os._exit runs no atexit: the waiting steps go now
        except OSError:
            pass
    _end_daemonic_children()
    sys.stderr.flush()
    os._exit(code)


def _end_daemonic_children() -> None:
    """What multiprocessing's own atexit does at a plain exit, which os._exit skips: the
    process's daemonic children (DataLoader workers) terminated - not left to find their parent
    gone (PyTorch's workers look every 5 s: a probe of minGPT's trainer, its 4 workers, ended
    5.0 s after its loop, counted as the program's post-training work: +22 %)."""
    mp = sys.modules.get("multiprocessing")
    try:
        children = [p for p in mp.active_children() if p.daemon] if mp is not None else []
        for child in children:
            child.terminate()
        for child in children:
            child.join(1.0)
    except Exception:  # noqa: BLE001 - never let the hook turn an exit into a crash
        pass
