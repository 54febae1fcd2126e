#!/bin/sh
# In overload a notification reaches the task: a periodic task asking 30 ms of work within 15 ms of each
# release cannot make it; SMART notifies it through libsmart (counter and SIGRTMIN+4).
# needs: scx_smart smart-periodic
# timeout: 120
. /tests/lib.sh

scx_smart --stats 0 >/tmp/scx_smart.out 2>&1 &
sched_pid=$!
wait_scx_state enabled 20
usleep 500000
out=$(smart-periodic --work 30 --period 40 --deadline 15 --count 50)
log "$out"
kill -INT "$sched_pid"; wait "$sched_pid"
n=$(echo "$out" | sed 's/.*"notifications":\([0-9]*\).*/\1/')
[ -n "$n" ] && [ "$n" -gt 0 ] || fail "no notification reached the task"
log "ok: $n notifications"
