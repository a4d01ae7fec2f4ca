#!/usr/bin/env bash
# Install probecast into .venv and start the app on its embedded default.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[agent]'
exec .venv/bin/probecast "$@"
