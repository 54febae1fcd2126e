#!/usr/bin/env bash
# klogger on a real media workload: Etsion et al. 2003 table 3 (billing) and table 5 / fig. 6
# (CPU shares, effective quanta) for today's kernel.
#
# What it does:
#   1. makes a test clip with ffmpeg itself (lavfi testsrc2 720p30 H.264 + 440 Hz AAC audio), so
#      nothing is downloaded;
#   2. plays it at real-time pace (`ffmpeg -re`) decoding video and audio to a null sink, beside
#      CPU hogs (`yes > /dev/null`, one per CPU, plain SCHED_OTHER, each bounded by `timeout`);
#   3. records the whole system with `klogger record` for the same time;
#   4. prints `klogger report` and `klogger billing --hz 100,250,1000` (per process and per
#      thread) and writes an HTML report with the quantum CDFs and billing scatter plots.
#
# Usage (root: BPF):  scripts/klogger-media.sh            # 20 s, output in /tmp/klogger-media
#   DURATION=30 HOGS=2 OUT=/some/dir scripts/klogger-media.sh
#   HOGS=0 scripts/klogger-media.sh                       # the media workload alone
# Needs: ffmpeg (installed from Debian by this script if missing), a built klogger
# (KLOGGER=path, default: cargo build --release -p klogger).
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-20}
HOGS=${HOGS:-$(nproc)}
OUT=${OUT:-/tmp/klogger-media}
mkdir -p "$OUT"

if [ "$(id -u)" -ne 0 ]; then
  echo "klogger-media: needs root (BPF recording)" >&2
  exit 1
fi
if ! command -v ffmpeg >/dev/null; then
  echo "klogger-media: installing ffmpeg from Debian"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ffmpeg
fi
if [ -z "${KLOGGER:-}" ]; then
  cargo build --release -q -p klogger
  KLOGGER="${CARGO_TARGET_DIR:-target}/release/klogger"
fi

CLIP="$OUT/clip.mp4"
CLIP_S=$((DURATION + 10))
if [ ! -s "$CLIP" ]; then
  echo "klogger-media: making a ${CLIP_S}s 720p30 test clip"
  ffmpeg -loglevel error -y -f lavfi -i "testsrc2=size=1280x720:rate=30" \
    -f lavfi -i "sine=frequency=440:sample_rate=48000" -t "$CLIP_S" \
    -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a aac -b:a 128k "$CLIP"
fi

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

echo "klogger-media: ${HOGS} CPU hog(s), ffmpeg -re decode to null, recording ${DURATION}s"
for _ in $(seq 1 "$HOGS"); do
  timeout $((DURATION + 5)) yes > /dev/null &
  pids+=($!)
done
timeout $((DURATION + 5)) ffmpeg -loglevel error -nostdin -re -i "$CLIP" -f null - &
pids+=($!)
sleep 1
"$KLOGGER" record -q -o "$OUT/media.klog" --duration "${DURATION}s"
cleanup
wait 2>/dev/null || true

# The machine may run other work too: the share table shows everything, the task tables only
# the media player and the hogs.
ONLY=${ONLY:-ffmpeg,yes}
"$KLOGGER" report "$OUT/media.klog" --group process --rows 12 | tee "$OUT/report-all.txt"
"$KLOGGER" report "$OUT/media.klog" --group thread --only "$ONLY" | tee "$OUT/report.txt"
"$KLOGGER" billing "$OUT/media.klog" --group process --hz 100,250,1000 --only "$ONLY" \
  | tee "$OUT/billing-process.txt"
"$KLOGGER" billing "$OUT/media.klog" --group thread --hz 100,250,1000 --only "$ONLY" \
  | tee "$OUT/billing-thread.txt"
"$KLOGGER" billing "$OUT/media.klog" --group thread --hz 100,250,1000 --format json > "$OUT/billing.json"
"$KLOGGER" html "$OUT/media.klog" -o "$OUT/report.html" --hz 100,250,1000 --group thread --only "$ONLY"
echo "klogger-media: outputs in $OUT"
