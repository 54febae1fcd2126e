#!/usr/bin/env bash
# Cross-check hourglass's dispatch-latency test against cyclictest (rt-tests), side by side:
#   hourglass -n 1 -t 0 -p RTHIGH -w LAT 1ms -i HR   vs   cyclictest -m -p 80 -i 1000
# on one CPU, first idle, then with a CPU hog (a SCHED_OTHER busy loop) pinned to the same CPU.
# Both wake a SCHED_FIFO 80 thread every 1 ms with clock_nanosleep; cyclictest keeps an absolute
# period, hourglass's LAT resynchronises to each wake-up (Regehr 2002 §3.2), which changes nothing
# about the lateness of a single wake-up. cyclictest holds /dev/cpu_dma_latency at 0 by default (no
# deep C-states); hourglass is given --pm-qos 0 to run under the same condition.
#
# usage: scripts/compare-cyclictest.sh [-d SECONDS] [-c CPU] [-b HOURGLASS_BINARY]
# Needs root (SCHED_FIFO, mlockall). Installs rt-tests with apt-get if cyclictest is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

DUR=10
CPU=$(( $(nproc) - 1 ))
BIN=""
while getopts "d:c:b:h" o; do
  case "$o" in
    d) DUR="$OPTARG" ;;
    c) CPU="$OPTARG" ;;
    b) BIN="$OPTARG" ;;
    *) sed -n '2,12p' "$0"; exit 2 ;;
  esac
done

if ! command -v cyclictest >/dev/null 2>&1; then
  echo "== installing rt-tests (cyclictest)" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rt-tests >&2
fi
if [ -z "$BIN" ]; then
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
  cargo build --release -q -p hourglass >&2
  BIN="$CARGO_TARGET_DIR/release/hourglass"
fi
command -v python3 >/dev/null || { echo "python3 is needed to read the JSON" >&2; exit 1; }
RT=$(cat /proc/sys/kernel/sched_rt_runtime_us)
if [ "$RT" = "-1" ]; then
  echo "RT throttling is disabled (sched_rt_runtime_us=-1): refusing to run FIFO loops" >&2
  exit 1
fi

TMP=$(mktemp -d)
HOG=""
cleanup() { [ -n "$HOG" ] && kill "$HOG" 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT

run_cyclictest() { # -> "min avg max p99 count" in us
  cyclictest -m -p 80 -i 1000 -a "$CPU" -t 1 -D "${DUR}s" -q -h 20000 >"$TMP/ct.txt" 2>&1 || true
  python3 - "$TMP/ct.txt" <<'PY'
import re, sys
txt = open(sys.argv[1]).read()
hist, total = {}, 0
for line in txt.splitlines():
    m = re.match(r"^(\d{6})\s+(\d+)", line)
    if m:
        hist[int(m.group(1))] = int(m.group(2)); total += int(m.group(2))
g = lambda k: re.search(r"# %s Latencies:\s*(\d+)" % k, txt)
s = [g("Min"), g("Avg"), g("Max")]
if not all(s):
    s = re.search(r"Min:\s*(\d+).*Avg:\s*(\d+).*Max:\s*(\d+)", txt)
    s = [s, s, s] if s else None
    if not s:
        print("error: no cyclictest summary in:", txt[-500:], file=sys.stderr); sys.exit(1)
    mn, av, mx = s[0].group(1), s[0].group(2), s[0].group(3)
else:
    mn, av, mx = (int(x.group(1)) for x in s)
acc, p99 = 0, None
for us in sorted(hist):
    acc += hist[us]
    if p99 is None and acc >= 0.99 * total:
        p99 = us
print(mn, av, mx, p99 if p99 is not None else "-", total)
PY
}

run_hourglass() { # -> "min avg max p99 count" in us
  "$BIN" -n 1 -d "${DUR}s" -t 0 -p RTHIGH -w LAT 1ms -i HR --cpu "$CPU" --pm-qos 0 --format json --intervals >"$TMP/hg.json" 2>"$TMP/hg.err" || { cat "$TMP/hg.err" >&2; exit 1; }
  python3 - "$TMP/hg.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["tasks"][0]
s = sorted(t["latency_samples_ns"]); l = t["latency_ns"]
print(f"{s[0]/1e3:.0f} {l['mean']/1e3:.0f} {l['max']/1e3:.0f} {l['p99']/1e3:.0f} {len(s)}")
PY
}

row() { printf "%-28s %8s %8s %8s %8s %9s\n" "$@"; }
echo "Dispatch latency, SCHED_FIFO 80, 1 ms period, CPU $CPU, ${DUR} s per run, kernel $(uname -r)"
row "tool / condition" "min us" "avg us" "max us" "p99 us" "samples"
for cond in idle hog; do
  if [ "$cond" = hog ]; then
    taskset -c "$CPU" sh -c 'while :; do :; done' &
    HOG=$!
    sleep 0.5
  fi
  read -r a b c d e < <(run_cyclictest);  row "cyclictest ($cond)" "$a" "$b" "$c" "$d" "$e"
  read -r a b c d e < <(run_hourglass);   row "hourglass LAT ($cond)" "$a" "$b" "$c" "$d" "$e"
  if [ -n "$HOG" ]; then kill "$HOG"; wait "$HOG" 2>/dev/null || true; HOG=""; fi
done
echo "cyclictest: -m -p 80 -i 1000 -a $CPU -t 1 -D ${DUR}s -q -h 20000 (p99 from its 1 us histogram; PM QoS 0)"
echo "hourglass:  -n 1 -d ${DUR}s -t 0 -p RTHIGH -w LAT 1ms -i HR --cpu $CPU --pm-qos 0 --format json --intervals"
