#!/usr/bin/env bash
# Start the Dagster UI on http://127.0.0.1:3000 over the same instance and DuckDB file as `compoworld run`.
set -euo pipefail
cd "$(dirname "$0")/.."
export DAGSTER_HOME="${DAGSTER_HOME:-$PWD/.dagster_home}" LITELLM_LOCAL_MODEL_COST_MAP=True
mkdir -p "$DAGSTER_HOME"
[ -f "$DAGSTER_HOME/dagster.yaml" ] || cp dagster.yaml "$DAGSTER_HOME/dagster.yaml"
exec .venv/bin/dagster dev -w workspace.yaml -h 127.0.0.1 -p "${PORT:-3000}"
