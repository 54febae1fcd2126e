#!/bin/sh
# Registrations under load cannot stall the scheduler. scx_smart schedules every task (full mode), two CPU
# hogs keep the one CPU busy, and for 25 s short-lived periodic threads (3 jobs of 1 ms each) register
# with libsmart one after another, so the thread that answers registrations is at work most of the time.
# That thread shares the process's memory allocator (a mutex) with the scheduler's loop: scheduled by
# scx_smart itself it was once preempted holding the lock, the loop blocked on it, and sched_ext's
# watchdog ejected the scheduler for a "runnable task stall" (CI, guest test 22, at a registration). It
# now runs in the real-time class, outside sched_ext (crates/scx_smart/src/main.rs, outside_sched_ext).
# Asserted: no sched_ext error and no ejection, every registration answered, and the thread's class.
# needs: scx_smart smart-hog smart-periodic
# timeout: 240
# cpus: 1
. /tests/lib.sh

scx_smart --stats 0 --max-slice-ms 1 >/tmp/scx_smart.out 2>&1 &
sched_pid=$!
wait_scx_state enabled 20
lib_tid=$(for t in /proc/$sched_pid/task/*; do [ "$(cat "$t/comm")" = libsmart ] && basename "$t"; done)
[ -n "$lib_tid" ] || fail "scx_smart has no libsmart thread"
lib_policy=$(awk '/^policy/ {print $3}' "/proc/$sched_pid/task/$lib_tid/sched")
log "libsmart thread $lib_tid: policy $lib_policy (1 = SCHED_FIFO), in sched_ext: $(on_scx "$lib_tid")"

smart-hog --seconds 60 --name h1 >/dev/null &
h1=$!
smart-hog --seconds 60 --name h2 >/dev/null &
h2=$!
end=$(( $(cut -d. -f1 /proc/uptime) + 25 ))
ok=0 bad=0
while [ "$(cut -d. -f1 /proc/uptime)" -lt "$end" ] && [ "$(scx_state)" = enabled ]; do
  out=$(smart-periodic --work 1 --period 4 --deadline 3 --count 3 2>&1)
  case "$out" in
    *'"met":'*) ok=$((ok + 1)) ;;
    *) bad=$((bad + 1)); [ "$bad" -le 5 ] && log "registration $((ok + bad)) failed: $out" ;;
  esac
done
# A loop that stopped just after the last registration is ejected within the watchdog's 5 s
# (main.bpf.c, timeout_ms): keep the hogs running past it before reading the state.
sleep 6
state=$(scx_state)
errs=$(kernel_scx_errors)
kill -INT "$sched_pid"; wait "$sched_pid"
kill "$h1" "$h2" 2>/dev/null; wait
log "registrations answered: $ok, failed: $bad; state at the end: $state"
[ -z "$errs" ] || { show_scheduler_output /tmp/scx_smart.out; fail "kernel reported sched_ext errors: $errs"; }
[ "$state" = enabled ] || { show_scheduler_output /tmp/scx_smart.out; fail "scx_smart was ejected"; }
[ "$bad" -eq 0 ] || fail "$bad of $((ok + bad)) registrations failed"
# Liveness is asserted by the kernel, not by a rate: a loop that stops deciding is ejected by sched_ext's
# watchdog, and a registration it does not answer fails above. One answered registration proves the path
# works at all, however slow the emulator (163-253 in 25 s were measured under TCG).
[ "$ok" -ge 1 ] || fail "no registration was answered in 25 s"
[ "$lib_policy" = 1 ] || fail "the libsmart thread's policy is $lib_policy, not SCHED_FIFO (1)"
log "ok"
