"""The event log schema (v4), written down once: what the agent writes and what readers accept.

Stdlib only (this file is shipped to probe hosts with the rest of the agent). The emitter checks
its lines against it (``Emitter(strict=True)`` or ``PROBECAST_STRICT_EVENTS=1``: the tests do);
``core/model/events.py`` takes its version, kinds and statuses from here, and a unit test holds
its msgspec records to every kind and field below, so the writer and the readers cannot drift.
docs/ARCHITECTURE.md ("Event log: schema v4") describes each field.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

# v2: `done`, `end.exit_code`, `log.code`; v3: `plan` (the job's length as the program says it),
# `memory` (peak memory of the probe), the `does-not-fit` status; v4: `block` (training timed
# only in blocks between evaluations: logs imported from MLPerf Training). Older logs read as
# before. Still v4, with optional additions only (readers ignore unknown kinds and fields): the
# `phase` kind and the `phase` field of `step` and `val` - a program that trains in several
# phases, one loop after another (pretrain then fine-tune, fit() then fit() again); the `outside`
# field of `step` - the program's own work between two fit() calls of a loop.
SCHEMA_VERSION = 4

# How a run ended (`end.status`), and how training ended (`done.status`). `does-not-fit`: the
# program ran out of memory (the framework's own out-of-memory error, or the kernel's OOM killer)
# - an answer about the batch size, not a failure of the probe.
END_STATUSES = ("complete", "probe-done", "stopped", "failed", "does-not-fit")

LOG_LEVELS = ("info", "warning", "error")

# `log.code`: machine-readable facts the estimate and the views act on.
LOG_CODES: dict[str, str] = {
    "fit-loop": "fit() was called more than once: epochs counted across calls, N_ep unknown",
    "skipped-fit": "fit() called after the probe stopped training returned at once",
    "tuner-trials": "a KerasTuner search: its trials' fit()s are one phase (or not counted)",
    "tuner-stopped": "the probe ended a KerasTuner search after the trial it stopped",
    "optuna-trials": "an Optuna study: n_trials times the objective's training (or not counted)",
    "optuna-stopped": "the probe ended an Optuna study after the trial it timed (study.stop())",
    "optuna-timeout": "no trial of an Optuna study starts after its timeout (plan.time_limit_s)",
    "optuna-unpruned": "an Optuna study's trial reported nothing: its pruner can end no trial",
    "early-stop": "EarlyStopping / TerminateOnNaN: the planned epochs are an upper bound",
    "custom-loop": "a Keras custom training loop: each optimizer step is a step",
    "torch-loop": "PyTorch: each optimizer step is a step",
    "multi-process": "other processes of the command trained too (one was timed)",
    "no-post": "the probe unwound a loop: the program's post-training code did not run",
    "boundary-stall": "an epoch boundary cost far more than a step (tf.data teardown)",
    "hook-failed": "a framework could not be hooked: that process is not timed",
    "backward-step": "PyTorch without an optimizer: each backward pass is a step",
    "gradient-step": "TensorFlow without a Keras optimizer: each tape's gradient is a step",
    "alternating-optimizers": "two optimizers step in turn, each in a loop of its own: "
                              "the length read counts the first loop only",
    "no-tf-data": "a TensorFlow custom loop that iterated no tf.data dataset: nothing to stall",
    "endless-loader": "a DataLoader's length is not an epoch (a sampler far past its data)",
    "out-of-memory": "the program ran out of memory (the batch size does not fit)",
    "phase": "the probe ended a phase's loop early; the program goes on (maybe to another)",
    "more-phases": "the probe unwound a loop the program trains on after: later phases unseen",
    "phase-budget": "the probe's phases were spent: the program was stopped in a later phase",
    "left-files": "files the program wrote in its folder, kept as the stopped run left them",
    "no-step": "no training step found: the program ran to its exit; its run is the answer",
}

# Field types, as JSON carries them ("number" is an int or a float; bool is neither).
STR = "str"
INT = "int"
COUNT = "count"  # an int >= 0
NUMBER = "number"
TIME = "time"  # seconds, -1e9..1e9
DURATION = "duration"  # seconds, 0..1e9
BOOL = "bool"
METRICS = "metrics"  # {name: number or null}
NUMBERS = "numbers"  # [number, ...], one per GPU
DEVICES = "devices"  # [{kind, name, memory_mb}, ...]
STATUS = "status"  # one of END_STATUSES
LEVEL = "level"  # one of LOG_LEVELS
CODE = "code"  # one of LOG_CODES


@dataclass(frozen=True)
class Field:
    name: str
    type: str
    required: bool = False  # the agent always writes it
    nullable: bool = False  # readers accept null
    read: bool = True  # False: information for people; readers ignore it


@dataclass(frozen=True)
class Kind:
    name: str
    timed: bool  # carries `dt`
    fields: tuple[Field, ...] = ()
    open: bool = False  # may carry further fields (start: the user's ProbeMeta.extra)

    def field(self, name: str) -> Field | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None


# Every line: `ev` (the kind) and `t`; timed kinds also `dt`.
COMMON = (Field("t", TIME, required=True),)
TIMED = (Field("dt", DURATION, required=True),)

DEVICE_FIELDS = (Field("kind", STR, required=True), Field("name", STR, required=True),
                 Field("memory_mb", NUMBER, nullable=True))

KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("start", timed=False, open=True, fields=(
        Field("v", INT, required=True),
        Field("probe", STR, required=True),
        Field("time", STR, required=True),
        Field("host", STR, required=True),
        Field("instance", STR),
        Field("batch_size", COUNT),
        Field("workload", STR),
        Field("steps_per_epoch", COUNT),
        Field("val_steps", COUNT),
        Field("epochs", COUNT, nullable=True),
        Field("framework", STR),
        Field("devices", DEVICES),
        Field("price_per_hour", NUMBER, nullable=True),
        Field("note", STR),
        # the built-in workloads' settings and a distributed job's rank: for people
        Field("train_size", INT, read=False),
        Field("val_size", INT, read=False),
        Field("threads", INT, read=False),
        Field("pipeline", STR, read=False),
        Field("explicit_steps", BOOL, read=False),
        Field("autotune", BOOL, read=False),
        Field("rank", INT, read=False),
    )),
    # `agent_s`: the agent's own seconds inside this dt - its launcher's before the command
    # started, the hook's set-up in the process - which the plain program does not spend
    Kind("init", timed=True, fields=(Field("agent_s", DURATION),)),
    Kind("step", timed=True, fields=(
        Field("epoch", COUNT, required=True), Field("step", COUNT, required=True),
        Field("phase", COUNT),  # from the second phase on (see `phase`): its number
        # seconds of this dt the program spent between a fit() call's return and the next
        # call (fit() in a loop: predictions, printing) - its own work, not the boundary's
        Field("outside", DURATION))),
    Kind("val", timed=True, fields=(
        Field("epoch", COUNT, required=True), Field("steps", COUNT, required=True),
        Field("metrics", METRICS, required=True), Field("phase", COUNT))),
    Kind("epoch", timed=False, fields=(
        Field("epoch", COUNT, required=True), Field("metrics", METRICS, required=True))),
    Kind("sample", timed=False, fields=(
        Field("gpu_util", NUMBERS, nullable=True),
        Field("gpu_mem_mb", NUMBERS, nullable=True),
        Field("gpu_mem_total_mb", NUMBERS, nullable=True),
        Field("cpu_util", NUMBER, nullable=True),
        Field("rss_mb", NUMBER, nullable=True),
        Field("swap_mb", NUMBER, nullable=True),
    )),
    Kind("log", timed=False, fields=(
        Field("level", LEVEL, required=True), Field("msg", STR, required=True),
        Field("code", CODE))),
    # The job's length as the program (or the user) says it, whenever it becomes known: planned
    # epochs, total training steps, and periodic work (an evaluation or checkpoint every K steps).
    # `source` / `every_source` say where each was read ("argparse --max_iters 5000", "Lightning
    # max_steps", "module global eval_interval"). A later `plan` replaces an earlier one's fields;
    # its `steps_per_epoch` corrects start's N_it (learned at the second step). `until`, with no
    # length: the condition an endless loop around the step stops at (a loop until solved).
    # `repeats`: a library's loop runs the training that many times (an Optuna study's trials;
    # epochs and steps count them all); `time_limit_s`: no run starts after that many seconds
    # of the loop (Optuna's timeout) - with no `repeats`, runs start until then.
    Kind("plan", timed=False, fields=(
        Field("epochs", COUNT, nullable=True), Field("steps", COUNT, nullable=True),
        Field("every", COUNT, nullable=True), Field("source", STR), Field("every_source", STR),
        Field("steps_per_epoch", COUNT, nullable=True),
        Field("earliest_epochs", COUNT, nullable=True),
        Field("earliest_steps", COUNT, nullable=True),
        Field("earliest_pass_steps", COUNT, nullable=True), Field("until", STR),
        Field("repeats", COUNT, nullable=True), Field("time_limit_s", DURATION, nullable=True),
        Field("every_epochs", COUNT, nullable=True), Field("every_epochs_at", COUNT, nullable=True),
        Field("every_epochs_source", STR), Field("every_epochs_first", BOOL),
        Field("every_epochs_last", BOOL), Field("every_epochs_from", COUNT, nullable=True))),
    # Peak memory of the probe (written when training ends, and with `does-not-fit`): the device
    # the framework allocated on (PyTorch max_memory_allocated/reserved, TF get_memory_info's
    # peak, else NVML's used) and the host (peak RSS of the training processes), with the limits
    # that applied where they are known. An address-space limit (RLIMIT_AS, `ulimit -v`) counts
    # virtual memory, not RSS: `host_vm_peak_mb` is the largest training process's peak virtual
    # size, and `host_limit_kind` says which the limit counts ("address-space" or "memory").
    Kind("memory", timed=False, fields=(
        Field("device", STR),
        Field("device_peak_mb", NUMBER, nullable=True),
        Field("device_reserved_mb", NUMBER, nullable=True),
        Field("device_total_mb", NUMBER, nullable=True),
        Field("host_peak_mb", NUMBER, nullable=True),
        Field("host_vm_peak_mb", NUMBER, nullable=True),
        Field("host_limit_mb", NUMBER, nullable=True),
        Field("host_limit_kind", STR),
        Field("source", STR))),
    # Training timed only in blocks (schema v4): a log at the granularity its source had - an
    # MLPerf Training result's block_start/block_stop, epoch_stop or evaluation points, with no
    # per-step events. `index` counts blocks from 1; `progress` is how far training had got at
    # the block's end, in `unit` (the source's own: samples, epochs, ...). The agent never
    # writes it; `probecast import mlperf` does.
    Kind("block", timed=True, fields=(
        Field("index", COUNT, required=True), Field("progress", NUMBER, nullable=True),
        Field("unit", STR))),
    # Training went on in another loop (a program that trains in phases: pretrain then fine-tune,
    # fit() then fit() again, several GradientTape loops): written before the new phase's first
    # step. `index` counts phases from 2 (the log's first phase has no event); `loop` says where
    # the new loop is; `previous` how the last phase ended: `probe-done` (the probe ended its
    # loop early) or `complete` (it ran to its end). Later `plan` events, `step` and `val` (which
    # carry `phase`) belong to this phase; its first step's dt is its start-up (the last loop's
    # teardown and this phase's setup). `epochs` are counted from 0 again in each phase.
    Kind("phase", timed=False, fields=(
        Field("index", COUNT, required=True), Field("loop", STR),
        Field("steps_per_epoch", COUNT), Field("previous", STATUS))),
    # `hook_ms`: the agent's own time inside each steady step, on the host's clock (mean, ms):
    # what the plain program does not spend. Absent where nothing was spent or the device's
    # clock timed the steps.
    Kind("done", timed=True, fields=(
        Field("status", STATUS, required=True), Field("reason", STR),
        Field("hook_ms", NUMBER, nullable=True))),
    Kind("end", timed=True, fields=(
        Field("status", STATUS, required=True), Field("reason", STR),
        Field("exit_code", INT, nullable=True),
        # `agent_s`: as init's, in a run that has no `init` (no step found: its run is the answer)
        Field("agent_s", DURATION))),
)}

EVENT_KINDS = tuple(KINDS)


class SchemaError(ValueError):
    """An event the schema does not allow (raised by a strict Emitter: a bug in the agent)."""


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _type_problem(type_: str, value: Any) -> str | None:
    if type_ == STR:
        ok = isinstance(value, str)
    elif type_ == BOOL:
        ok = isinstance(value, bool)
    elif type_ == INT:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif type_ == COUNT:
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    elif type_ == NUMBER:
        ok = _is_number(value)
    elif type_ == TIME:
        ok = _is_number(value) and -1e9 <= value <= 1e9
    elif type_ == DURATION:
        ok = _is_number(value) and 0 <= value <= 1e9
    elif type_ == STATUS:
        ok = value in END_STATUSES
    elif type_ == LEVEL:
        ok = value in LOG_LEVELS
    elif type_ == CODE:
        ok = value in LOG_CODES
    elif type_ == METRICS:
        ok = isinstance(value, dict) and all(
            isinstance(k, str) and (v is None or _is_number(v)) for k, v in value.items())
    elif type_ == NUMBERS:
        ok = isinstance(value, (list, tuple)) and all(_is_number(v) for v in value)
    elif type_ == DEVICES:
        if not isinstance(value, (list, tuple)):
            return "not a list"
        for device in value:
            problems = _check_fields(device, DEVICE_FIELDS, open_=False)
            if problems:
                return "device: " + "; ".join(problems)
        return None
    else:
        return f"unknown type {type_}"
    return None if ok else f"not {type_}: {value!r}"


def _check_fields(obj: Any, fields: tuple[Field, ...], open_: bool) -> list[str]:
    if not isinstance(obj, dict):
        return ["not an object"]
    problems: list[str] = []
    known = {f.name: f for f in fields}
    for f in fields:
        if f.required and f.name not in obj:
            problems.append(f"{f.name}: missing")
    for name, value in obj.items():
        field = known.get(name)
        if field is None:
            if not open_:
                problems.append(f"{name}: not a field of this kind")
            continue
        if value is None and field.nullable:
            continue
        problem = _type_problem(field.type, value)
        if problem:
            problems.append(f"{name}: {problem}")
    return problems


def problems(event: Any) -> list[str]:
    """What is wrong with an event object (as written: after JSON's NaN -> null); [] if nothing."""
    if not isinstance(event, dict):
        return ["not an object"]
    kind = KINDS.get(event.get("ev"))  # type: ignore[arg-type]
    if kind is None:
        return [f"ev: unknown kind {event.get('ev')!r}"]
    fields = COMMON + (TIMED if kind.timed else ()) + kind.fields
    body = {k: v for k, v in event.items() if k != "ev"}
    return [f"{kind.name}.{p}" for p in _check_fields(body, fields, kind.open)]


def check(event: Any) -> None:
    """Raise SchemaError naming every problem of an event object."""
    found = problems(event)
    if found:
        raise SchemaError("; ".join(found))
