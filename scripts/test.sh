#!/usr/bin/env bash
# Set up, lint (ruff, from the dev extra), then run the whole test suite (slow tests included).
# Extra arguments go to pytest. A lint finding fails the command before any test runs.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
.venv/bin/ruff check .
export OMP_NUM_THREADS=1 LITELLM_LOCAL_MODEL_COST_MAP=True
exec .venv/bin/python -m pytest -q "$@"
