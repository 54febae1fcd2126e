#!/usr/bin/env bash
# The report crate's PNG and PDF export (smartsim reproduce --png/--pdf, run --svg x.png) draws text
# with the system's fonts: Debian's fonts-dejavu-core (DejaVu Sans is what `sans-serif` becomes).
# scripts/check-report-browser opens the HTML report in headless Chromium: Debian's chromium
# package, never a browser downloaded at test time. Idempotent: does nothing when both are there.
set -euo pipefail
need=()
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
[ ${#need[@]} -eq 0 ] && exit 0
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
