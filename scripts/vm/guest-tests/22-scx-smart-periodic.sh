#!/bin/sh
# A periodic task using libsmart (10 ms of work every 40 ms, deadline 15 ms after each release) beside two CPU
# hogs on a one-CPU guest, equal shares: within its share (25 % < 33 %) but too urgent for fair sharing.
# A user-space scheduler cannot preempt a running task by itself: scx_smart's tracing program kicks the CPU
# with SCX_KICK_PREEMPT when a thread holding a time constraint wakes up, so the policy decides at once.
# Slices of tasks without a constraint are kept at 3 ms (--max-slice-ms) as a second line of defence.
# Deadlines met are measured under the default fair scheduler and under scx_smart; scx_smart must meet >= 99 %.
# needs: scx_smart smart-hog smart-periodic
# timeout: 170
# cpus: 1
. /tests/lib.sh

run_case() {  # $1 = extra args for smart-periodic
  smart-hog --seconds 14 --name h1 >/dev/null &
  smart-hog --seconds 14 --name h2 >/dev/null &
  usleep 300000
  smart-periodic --work 10 --period 40 --deadline 15 --count 250 $1
  wait_hogs
}
wait_hogs() { for j in $(jobs -p); do [ "$j" = "${sched_pid:-x}" ] || wait "$j"; done; }

log "default fair scheduler:"
fair=$(run_case --no-smart)
log "  $fair"

scx_smart --stats 0 --max-slice-ms 3 >/tmp/scx_smart.out 2>&1 &
sched_pid=$!
wait_scx_state enabled 20
usleep 500000
log "scx_smart:"
smart=$(run_case "")
log "  $smart"
errs=$(kernel_scx_errors)
kill -INT "$sched_pid"; wait "$sched_pid"
grep unloaded /tmp/scx_smart.out
[ -z "$errs" ] || fail "kernel reported sched_ext errors: $errs"
echo "RESULT fair: $fair"
echo "RESULT scx_smart: $smart"
pct=$(echo "$smart" | sed 's/.*"met_pct":\([0-9]*\).*/\1/')
[ -n "$pct" ] || fail "no result from smart-periodic under scx_smart"
[ "$pct" -ge 99 ] || fail "scx_smart met $pct % of deadlines, need >= 99 %"
log "ok"
