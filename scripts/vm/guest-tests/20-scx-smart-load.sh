#!/bin/sh
# scx_smart (crates/sched SMART, via scx_rustland_core) loads, schedules a mixed load for 10 s without being
# ejected by the sched_ext watchdog, and unloads on SIGINT leaving every task in the fair class.
# needs: scx_smart
# timeout: 150
. /tests/lib.sh

[ "$(scx_state)" = disabled ] || fail "sched_ext state before loading is '$(scx_state)', expected 'disabled'"
log "loading scx_smart"
scx_smart --stats 2 >/tmp/scx_smart.out 2>&1 &
sched_pid=$!
wait_scx_state enabled 20
ops=$(scx_ops)
log "state=$(scx_state) ops=$ops switch_all=$(cat $SCX/switch_all)"
scx_ops_is smart || fail "root/ops is '$ops', expected smart_*"

start_mixed_load 30
log "mixed load started:$LOAD_PIDS"
usleep 500000
for p in $LOAD_PIDS; do
  [ "$(on_scx "$p")" = 1 ] || fail "load task $p is not in the sched_ext class (ext.enabled=$(on_scx "$p"))"
done
set -- $(count_on_scx)
log "tasks in sched_ext class: $1 of $2; the others: $(not_on_scx)"
[ "$1" -gt 0 ] || fail "no task is in the sched_ext class"

sleep 10
state=$(scx_state)
log "after 10 s of load: state=$state ops=$(scx_ops)"
kill -0 "$sched_pid" 2>/dev/null || { cat /tmp/scx_smart.out; fail "scx_smart exited during the load"; }
[ "$state" = enabled ] || { cat /tmp/scx_smart.out; fail "state is '$state' after 10 s of load (ejected?)"; }
errs=$(kernel_scx_errors)
[ -z "$errs" ] || fail "kernel reported sched_ext errors: $errs"
log "scx_smart stats: $(grep decisions /tmp/scx_smart.out | tail -n1)"

log "stopping scx_smart (SIGINT) with the load still running"
kill -INT "$sched_pid"
wait "$sched_pid"
rc=$?
wait_scx_state disabled 10
log "scx_smart exited with $rc; its exit report: $(grep EXIT: /tmp/scx_smart.out)"
[ "$rc" = 0 ] || fail "scx_smart exit status $rc"
grep -q 'EXIT: unregistered from user space' /tmp/scx_smart.out || fail "unexpected exit reason: $(grep EXIT: /tmp/scx_smart.out)"
set -- $(count_on_scx)
log "tasks in sched_ext class after unloading: $1 of $2"
[ "$1" = 0 ] || fail "$1 tasks still in the sched_ext class after unloading"
for p in $LOAD_PIDS; do
  v=$(on_scx "$p")
  [ -z "$v" ] || [ "$v" = 0 ] || fail "load task $p still in the sched_ext class"
done
stop_load
log "ok"
