#!/usr/bin/env bash
# Install probecast with its test, agent, PyTorch-test, SkyPilot and gpuhunt extras into .venv,
# then run the whole test suite - every layer; arguments go to pytest: `-m unit` is the fast
# layer alone, `-m checks` mypy and the import contracts, `-m "not e2e"` all but the real
# components (tests/conftest.py says what each layer holds).
#
# The install runs only when it is not up to date: .venv/.probecast-installed holds a hash of
# pyproject.toml (less the test tools' own sections: a marker or an import contract installs
# nothing), the install steps below, the Python that made the venv and this folder's path
# (an editable install points at it). Anything else - no venv, a venv whose Python no longer
# starts, a changed pin or extra, an install that stopped half-way - installs again;
# PROBECAST_REINSTALL=1 forces it. On an installed tree the tests start in a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

install() {
    python3 -m venv .venv
    # uv installs the same set as pip in about a third of the time (pip: 140-176 s here, a fifth
    # of a fresh CI run); pip does it where uv cannot be had or fails. Compiled to bytecode as pip
    # does: where Python writes none (PYTHONDONTWRITEBYTECODE, as on this project's machines)
    # every process that imports TensorFlow would compile it from source again - 10 s an import,
    # not 5.
    if .venv/bin/python -m pip install -q uv \
            && install_with .venv/bin/uv pip install -q --compile-bytecode --python .venv/bin/python; then
        return
    fi
    .venv/bin/python -m pip install -q --upgrade pip
    install_with .venv/bin/python -m pip install -q
}

install_with() {  # the install steps, each run as "$@" ARGS...
    # uv reads no pip configuration: the folders of wheels pip is set to look in are passed on
    local links=() dir
    for dir in ${PIP_FIND_LINKS:-} $(.venv/bin/python -m pip config get global.find-links 2>/dev/null || true); do
        [ -d "$dir" ] && links+=(--find-links "$dir")
    done
    # PyTorch first, pinned: 2.13.0 is the CPU build this kind of machine keeps on disk; asked for
    # loosely, an installer would take the newest build with several GB of CUDA libraries.
    "$@" "${links[@]}" 'torch==2.13.0'
    "$@" -e '.[test,agent,torch-test]'
    # fastai without its dependencies: torch-test lists what the tests need of them (pyproject.toml
    # says why torchvision and spaCy are not among them)
    "$@" --no-deps 'fastai>=2.8,<2.9'
    # The SkyPilot and gpuhunt extras in a step of their own: SkyPilot 0.14 pins click<8.2, and
    # huggingface-hub 2.x (from transformers) asks for click>=8.4.2. Resolved in one step, the
    # installer moves transformers and huggingface-hub back (to 5.17 / 1.16); installed after them,
    # only click goes back (8.1.8) - pip prints that conflict, and exits 0 - and the hub's library
    # code the torch tests use works with it.
    "$@" -e '.[skypilot,gpuhunt]'
}

stamp=.venv/.probecast-installed
# `declare -f` prints the function without its comments: rewording a comment does not reinstall.
installs() {  # pyproject.toml without [tool.pytest...], [tool.mypy...], [tool.importlinter...]
    awk '/^\[/ { skip = /^\[\[?tool\.(pytest|mypy|importlinter)/ } !skip' pyproject.toml
}
want=$( { installs; declare -f install install_with; python3 -VV; pwd; } | sha256sum | cut -d' ' -f1)
if [ "${PROBECAST_REINSTALL:-}" = 1 ] || ! .venv/bin/python -c '' 2>/dev/null \
        || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    rm -f "$stamp"
    install
    echo "$want" > "$stamp"
fi
# The tests run in up to 4 worker processes (pytest-xdist), one per core: most of an end-to-end
# test is waiting on a real subprocess, sshd or a framework's start-up, so one process left half
# of a 2-core machine idle (11 min serially, 6.5 min in two workers here). Every test is written
# to pass beside another suite (its own ports, folders and processes) and in any order, so an
# idle worker takes tests from a busy one's queue (--dist worksteal: one module's 110 s test
# does not hold its module's others behind it; a module's fixtures are made once per worker).
# A PyTorch job a test starts then takes one OpenMP thread (tests/conftest.py: two jobs of two
# threads on two cores waited for each other's descheduled threads, a 5 s probe taking 42 s).
# PROBECAST_TEST_WORKERS=1 runs them all in one process.
workers=${PROBECAST_TEST_WORKERS:-$(nproc 2>/dev/null || echo 1)}
[ "$workers" -gt 4 ] && workers=4
parallel=()
[ "$workers" -gt 1 ] && parallel=(-n "$workers" --dist worksteal)
exec .venv/bin/pytest -q --durations=30 "${parallel[@]}" "$@"
