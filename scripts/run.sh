#!/usr/bin/env bash
# Set up, then run the main job on the embedded default (DuckDB file under data/, offline backends).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" LITELLM_LOCAL_MODEL_COST_MAP=True
exec .venv/bin/compoworld run "$@"
