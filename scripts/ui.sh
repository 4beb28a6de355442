#!/usr/bin/env bash
# Start the Dagster UI on http://127.0.0.1:3000 over the same instance and DuckDB file as `compoworld run`.
# --data-dir DIR: the data folder `compoworld run --data-dir DIR` wrote (default: $COMPOWORLD_DATA_DIR, else data).
set -euo pipefail
while [ $# -gt 0 ]; do
  case "$1" in
    --data-dir) [ $# -ge 2 ] || { echo "usage: $0 [--data-dir DIR]" >&2; exit 2; }
                export COMPOWORLD_DATA_DIR="$(realpath -m -- "$2")"; shift 2 ;;
    --data-dir=*) export COMPOWORLD_DATA_DIR="$(realpath -m -- "${1#--data-dir=}")"; shift ;;
    *) echo "usage: $0 [--data-dir DIR]" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
export DAGSTER_HOME="${DAGSTER_HOME:-$PWD/.dagster_home}" LITELLM_LOCAL_MODEL_COST_MAP=True
mkdir -p "$DAGSTER_HOME"
[ -f "$DAGSTER_HOME/dagster.yaml" ] || cp dagster.yaml "$DAGSTER_HOME/dagster.yaml"
exec .venv/bin/dagster dev -w workspace.yaml -h 127.0.0.1 -p "${PORT:-3000}"
