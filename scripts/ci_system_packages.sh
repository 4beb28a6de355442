#!/usr/bin/env bash
# Debian packages the test suite needs beyond Python: Chromium for the UI browser test, bubblewrap and
# libseccomp2 for the service sandbox (scripts/setup.sh installs those too).
# (Slurm and munge are installed by scripts/slurm/start_slurm.sh.)
set -euo pipefail
if ! command -v chromium >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
if ! command -v bwrap >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends bubblewrap libseccomp2 >/dev/null
fi
