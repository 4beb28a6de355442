#!/usr/bin/env bash
# Set up, then run the whole test suite (slow tests included). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export OMP_NUM_THREADS=1 LITELLM_LOCAL_MODEL_COST_MAP=True
exec .venv/bin/python -m pytest -q "$@"
