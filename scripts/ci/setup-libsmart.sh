#!/usr/bin/env bash
# libsmart's tests compile a C program against liblibsmart.a with `cc` (tests/c_api.rs).
# Idempotent: does nothing when a C compiler is already installed.
set -euo pipefail
if command -v cc >/dev/null 2>&1; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq gcc libc6-dev >/dev/null
