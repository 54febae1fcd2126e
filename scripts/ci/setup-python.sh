#!/usr/bin/env bash
# The Python package (crates/py, built with maturin) and its tests (pytest, pandas, a local Dask cluster):
# installs crates/py/requirements-test.txt with pip into the python3 on PATH, and python3 with pip and
# venv from Debian if there is none. Idempotent: pip does nothing when every requirement is met.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! python3 -m pip --version >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq python3 python3-pip python3-venv python3-dev >/dev/null
fi
# A Debian python3 refuses system-wide pip installs (PEP 668) unless told; a pyenv one ignores this.
export PIP_BREAK_SYSTEM_PACKAGES=1
python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore -r crates/py/requirements-test.txt
