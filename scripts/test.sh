#!/usr/bin/env bash
# Install probecast with its test and agent extras into .venv, then run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test,agent]'
exec .venv/bin/pytest -q "$@"
