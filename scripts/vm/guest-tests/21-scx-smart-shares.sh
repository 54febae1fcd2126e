#!/bin/sh
# Three CPU hogs asking SMART shares 3, 2 and 1 through libsmart, on a one-CPU guest (the uniprocessor of the
# dissertation), get CPU within 5 % of 3:2:1 (SMART §6.2.1 on a real kernel), measured over the same 10 s by all
# three. Fifteen runs gave 3:1 = 2.983-3.011 and 2:1 = 1.992-2.018.
# needs: scx_smart smart-hog
# timeout: 150
# cpus: 1
. /tests/lib.sh

scx_smart --stats 0 >/tmp/scx_smart.out 2>&1 &
sched_pid=$!
wait_scx_state enabled 20
usleep 500000
# The hogs register one after the other, then start together when /tmp/go appears, so that they
# measure the same 14 s (a hog started later would otherwise run its last moments with fewer rivals).
rm -f /tmp/go /tmp/go.*
for s in 3 2 1; do
  smart-hog --share $s --seconds 14 --warmup 4 --go /tmp/go --name "hog$s" >"/tmp/hog$s.json" 2>&1 &
done
n=0
until [ -e /tmp/go.hog3.ready ] && [ -e /tmp/go.hog2.ready ] && [ -e /tmp/go.hog1.ready ]; do
  n=$((n + 1)); [ "$n" -le 300 ] || fail "the hogs did not register within 30 s"
  usleep 100000
done
log "hogs registered after $((n / 10)).$((n % 10)) s"
touch /tmp/go
wait_hogs() { for j in $(jobs -p); do [ "$j" = "$sched_pid" ] || wait "$j"; done; }
wait_hogs
errs=$(kernel_scx_errors)
kill -INT "$sched_pid"; wait "$sched_pid"
cat /tmp/hog3.json /tmp/hog2.json /tmp/hog1.json
[ -z "$errs" ] || { show_scheduler_output /tmp/scx_smart.out; fail "kernel reported sched_ext errors: $errs"; }
# Steady state: CPU after the first 4 s (SMART's bias, at most 250 ms of CPU per task, shifts only the start).
c3=$(sed 's/.*"steady_cpu_ns":\([0-9]*\).*/\1/' /tmp/hog3.json)
c2=$(sed 's/.*"steady_cpu_ns":\([0-9]*\).*/\1/' /tmp/hog2.json)
c1=$(sed 's/.*"steady_cpu_ns":\([0-9]*\).*/\1/' /tmp/hog1.json)
[ -n "$c1" ] && [ "$c1" -gt 0 ] || fail "no CPU time from the share-1 hog"
# ratios in thousandths: 3:1 = 3000, 2:1 = 2000; within 5 % means 2850..3150 and 1900..2100
r31=$(( c3 * 1000 / c1 )); r21=$(( c2 * 1000 / c1 ))
log "cpu ms: share3 $((c3/1000000)) share2 $((c2/1000000)) share1 $((c1/1000000)); ratios 3:1 = $r31/1000, 2:1 = $r21/1000"
[ "$r31" -ge 2850 ] && [ "$r31" -le 3150 ] || fail "share 3 : share 1 = $r31/1000, not within 5 % of 3"
[ "$r21" -ge 1900 ] && [ "$r21" -le 2100 ] || fail "share 2 : share 1 = $r21/1000, not within 5 % of 2"
log "ok"
