#!/bin/sh
# Linux's fair class as a policy of scx_smart: the simulator's `eevdf` schedules real tasks by their nice
# levels. Two CPU hogs at nice 0 and nice -5 on a one-CPU guest get CPU in the ratio of the kernel's
# weights, 3121 : 1024 = 3.048, within 5 %, measured over the same 10 s by both.
# needs: scx_smart smart-hog
# timeout: 150
# cpus: 1
. /tests/lib.sh

scx_smart --policy eevdf --stats 0 >/tmp/scx_smart.out 2>&1 &
sched_pid=$!
wait_scx_state enabled 20
rm -f /tmp/go /tmp/go.*
smart-hog --seconds 14 --warmup 4 --go /tmp/go --name n0 >/tmp/n0.json 2>&1 &
smart-hog --nice -5 --seconds 14 --warmup 4 --go /tmp/go --name n5 >/tmp/n5.json 2>&1 &
n=0
until [ -e /tmp/go.n0.ready ] && [ -e /tmp/go.n5.ready ]; do
  n=$((n + 1))
  [ "$n" -le 300 ] || {
    cat /tmp/n0.json /tmp/n5.json; show_scheduler_output /tmp/scx_smart.out; fail "the hogs did not start within 30 s"
  }
  usleep 100000
done
touch /tmp/go
for j in $(jobs -p); do [ "$j" = "$sched_pid" ] || wait "$j"; done
errs=$(kernel_scx_errors)
state=$(scx_state)
kill -INT "$sched_pid"; wait "$sched_pid"
cat /tmp/n0.json /tmp/n5.json
[ -z "$errs" ] || { show_scheduler_output /tmp/scx_smart.out; fail "kernel reported sched_ext errors: $errs"; }
[ "$state" = enabled ] || { show_scheduler_output /tmp/scx_smart.out; fail "scx_smart was ejected"; }
c0=$(sed 's/.*"steady_cpu_ns":\([0-9]*\).*/\1/' /tmp/n0.json)
c5=$(sed 's/.*"steady_cpu_ns":\([0-9]*\).*/\1/' /tmp/n5.json)
[ -n "$c0" ] && [ "$c0" -gt 0 ] || fail "no CPU time from the nice-0 hog"
# in thousandths: 3048 within 5 % is 2896..3200
r=$(( c5 * 1000 / c0 ))
log "cpu ms: nice -5 $((c5/1000000)) nice 0 $((c0/1000000)); ratio $r/1000 (weights: 3048/1000)"
[ "$r" -ge 2896 ] && [ "$r" -le 3200 ] || fail "nice -5 : nice 0 = $r/1000, not within 5 % of 3.048"
log "ok"
