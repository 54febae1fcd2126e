#!/bin/sh
# A flood of hostile libsmart clients cannot take a CPU or stall the scheduler. The thread that answers
# registrations runs in SCHED_FIFO, ahead of every task scx_smart schedules (full mode), so what it does
# must be bounded by scx_smart itself: a poll accepts at most MAX_PENDING connections, and after a poll
# that had work the thread rests three times the CPU it used, at least 1 ms, so that it takes at most a
# quarter of one CPU (crates/scx_smart/src/main.rs, start_registry). For 15 s two smart-flood processes connect as fast as they can on a 2-CPU guest
# (garbage registrations, silent connections held open) beside two hogs. Asserted: no sched_ext error and
# no ejection, the libsmart thread used at most a third of one CPU over the flood (a quarter by design,
# with room for the first and last rests falling outside the window), and a well-behaved
# registration is answered once the flood is over.
# needs: scx_smart smart-hog smart-flood smart-periodic
# timeout: 200
# cpus: 2
. /tests/lib.sh

scx_smart --stats 0 >/tmp/scx_smart.out 2>&1 &
sched_pid=$!
wait_scx_state enabled 20
lib_tid=$(for t in /proc/$sched_pid/task/*; do [ "$(cat "$t/comm")" = libsmart ] && basename "$t"; done)
[ -n "$lib_tid" ] || fail "scx_smart has no libsmart thread"
smart-hog --seconds 40 --name h1 >/dev/null &
h1=$!
smart-hog --seconds 40 --name h2 >/dev/null &
h2=$!
cs() { sed 's/^\([0-9]*\)\.\([0-9]*\).*/\1\2/' /proc/uptime; } # centiseconds since boot
c0=$(cut -d' ' -f1 "/proc/$sched_pid/task/$lib_tid/schedstat")
t0=$(cs)
smart-flood --seconds 15 >/tmp/f1.json 2>&1 &
f1=$!
smart-flood --seconds 15 >/tmp/f2.json 2>&1 &
f2=$!
wait "$f1"; wait "$f2"
c1=$(cut -d' ' -f1 "/proc/$sched_pid/task/$lib_tid/schedstat")
t1=$(cs)
log "floods: $(cat /tmp/f1.json) $(cat /tmp/f2.json)"
# Silent connections time out after HELLO_TIMEOUT (1 s); then a registration must be answered.
sleep 2
out=$(smart-periodic --work 1 --period 4 --deadline 3 --count 3 2>&1)
# The watchdog (5 s) would eject a loop that stalled at the end of the flood.
sleep 6
state=$(scx_state)
errs=$(kernel_scx_errors)
kill -INT "$sched_pid"; wait "$sched_pid"
kill "$h1" "$h2" 2>/dev/null; wait
busy_cs=$(( (c1 - c0) / 10000000 ))
window_cs=$(( t1 - t0 ))
log "libsmart thread: $((busy_cs * 10)) ms of CPU in $((window_cs * 10)) ms of flood; state at the end: $state"
[ -z "$errs" ] || { show_scheduler_output /tmp/scx_smart.out; fail "kernel reported sched_ext errors: $errs"; }
[ "$state" = enabled ] || { show_scheduler_output /tmp/scx_smart.out; fail "scx_smart was ejected"; }
case "$(cat /tmp/f1.json)" in *'"connected":'*) ;; *) fail "smart-flood did not run: $(cat /tmp/f1.json)" ;; esac
[ "$window_cs" -gt 0 ] && [ $(( busy_cs * 3 )) -le "$window_cs" ] ||
  fail "the libsmart thread used $busy_cs of $window_cs centiseconds: more than a third of a CPU"
case "$out" in
  *'"met":'*) ;;
  *) show_scheduler_output /tmp/scx_smart.out; fail "a registration after the flood failed: $out" ;;
esac
log "ok"
