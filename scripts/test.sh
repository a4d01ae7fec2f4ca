#!/usr/bin/env bash
# Install probecast with its test, agent and PyTorch-test extras into .venv, then run the whole
# test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# PyTorch first, pinned: 2.13.0 is the CPU build this kind of machine keeps on disk; asked for
# loosely, pip would take the newest build with several GB of CUDA libraries.
.venv/bin/python -m pip install -q 'torch==2.13.0'
.venv/bin/python -m pip install -q -e '.[test,agent,torch-test]'
exec .venv/bin/pytest -q "$@"
