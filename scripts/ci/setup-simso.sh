#!/usr/bin/env bash
# The SimSo cross-check (scripts/simso-check) makes a Python virtual environment and installs simso==0.8.5
# into it from PyPI: it needs python3 with venv and ensurepip. Idempotent: does nothing when they are there.
set -euo pipefail
if command -v python3 >/dev/null 2>&1 && python3 -c 'import ensurepip, venv' 2>/dev/null; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq python3 python3-venv >/dev/null
