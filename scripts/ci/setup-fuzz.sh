#!/usr/bin/env bash
# The fuzz targets (fuzz/, run by scripts/fuzz from scripts/test) build with a nightly compiler and
# cargo-fuzz: this adds rustup's nightly toolchain where it is missing and installs cargo-fuzz from
# crates.io. Idempotent: does nothing when both are there.
set -euo pipefail
if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  rustup toolchain install nightly --profile minimal
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked --version 0.13.2
fi
