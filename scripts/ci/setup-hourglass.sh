#!/usr/bin/env bash
# hourglass needs nothing beyond the Rust toolchain to build and test (libc only, no C libraries).
# rt-tests (cyclictest) is needed only by scripts/compare-cyclictest.sh, which installs it itself,
# so CI does not spend time on it.
set -euo pipefail
exit 0
