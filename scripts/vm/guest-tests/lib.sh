# Helpers for guest tests (busybox sh). Sourced by every test as `. /tests/lib.sh`.
#
# A guest test is a shell script in scripts/vm/guest-tests/ named NN-name.sh. It runs as root inside the guest,
# with the binaries it names on a `# needs:` line in /usr/local/bin, and passes by exiting 0. Header lines the
# runner (scripts/vm/run-guest-tests) reads:
#   # needs: scx_simple other_binary     binaries to put into the guest (see run-guest-tests --help)
#   # timeout: 120                        wall-time limit in seconds for boot + test (default 180)
# Print what you measured: the output is shown when the test fails, and with run-guest-tests --verbose.

SCX=/sys/kernel/sched_ext

log() { echo "[$(cut -d' ' -f1 /proc/uptime)] $*"; }
fail() { echo "FAIL: $*"; exit 1; }

scx_state() { cat "$SCX/state" 2>/dev/null || echo "missing"; }
scx_ops() { cat "$SCX/root/ops" 2>/dev/null || echo ""; }
# scx_ops_is NAME: true if the loaded scheduler is NAME; schedulers built on scx_rustland_core register as
# NAME_<version>_<target> (e.g. smart_0.1.0_x86_64_unknown_linux_gnu), so NAME_* matches too.
scx_ops_is() {
  case "$(scx_ops)" in "$1"|"$1"_*) return 0 ;; *) return 1 ;; esac
}

# wait_scx_state STATE SECONDS: poll until /sys/kernel/sched_ext/state is STATE; fails on timeout.
wait_scx_state() {
  _want=$1 _n=$(( $2 * 10 ))
  while [ "$_n" -gt 0 ]; do
    [ "$(scx_state)" = "$_want" ] && return 0
    usleep 100000
    _n=$((_n - 1))
  done
  fail "sched_ext state is '$(scx_state)', waited $2 s for '$_want'"
}

# on_scx PID: prints 1 if the task runs in the sched_ext class, 0 if not, nothing if it is gone
# (/proc/PID/sched's ext.enabled, present with CONFIG_SCHED_DEBUG).
on_scx() { awk '/^ext.enabled/ {print $3}' "/proc/$1/sched" 2>/dev/null; }

# count_on_scx: "N M": N tasks (threads of all processes) in the sched_ext class out of M.
count_on_scx() {
  _on=0 _all=0
  for _f in /proc/[0-9]*/task/[0-9]*/sched; do
    _v=$(awk '/^ext.enabled/ {print $3}' "$_f" 2>/dev/null)
    [ -n "$_v" ] || continue
    _all=$((_all + 1))
    [ "$_v" = 1 ] && _on=$((_on + 1))
  done
  echo "$_on $_all"
}

# not_on_scx: "comm(policy)" of the tasks outside the sched_ext class (stopper and RT kernel threads in full
# mode; everything after unloading).
not_on_scx() {
  for _d in /proc/[0-9]*/task/[0-9]*; do
    [ "$(awk '/^ext.enabled/ {print $3}' "$_d/sched" 2>/dev/null)" = 0 ] || continue
    printf '%s(%s) ' "$(cat "$_d/comm" 2>/dev/null)" "$(awk '/^policy/ {print $3}' "$_d/sched" 2>/dev/null)"
  done
  echo
}

# start_mixed_load SECONDS: CPU hogs, a fast sleeper, a forker and a pipe, each bounded by SECONDS (busybox
# timeout kills it even if the test dies). Sets LOAD_PIDS.
start_mixed_load() {
  _s=$1
  LOAD_PIDS=
  timeout -s KILL "$_s" sh -c 'while :; do :; done' & LOAD_PIDS="$LOAD_PIDS $!"
  timeout -s KILL "$_s" sh -c 'while :; do :; done' & LOAD_PIDS="$LOAD_PIDS $!"
  timeout -s KILL "$_s" sh -c 'while :; do usleep 1000; done' & LOAD_PIDS="$LOAD_PIDS $!"
  timeout -s KILL "$_s" sh -c 'while :; do /bin/true; done' & LOAD_PIDS="$LOAD_PIDS $!"
  timeout -s KILL "$_s" sh -c 'while :; do dd if=/dev/zero bs=4k count=256 2>/dev/null | cat >/dev/null; done' &
  LOAD_PIDS="$LOAD_PIDS $!"
}

# stop_load: kill what start_mixed_load started (and their children) and wait for them.
stop_load() {
  for _p in $LOAD_PIDS; do kill -KILL "$_p" 2>/dev/null; done
  wait 2>/dev/null
  LOAD_PIDS=
}

# kernel_scx_errors: sched_ext lines from the kernel log that tell of trouble: a scheduler disabled for any
# reason but its own user-space unregistration (watchdog ejection: "runnable task stall", BPF errors), errors.
kernel_scx_errors() {
  dmesg | grep 'sched_ext: ' | grep -v 'unregistered from user space' | grep -E 'disabled|error|stall|Failed' || true
}

# load_run_unload OPS COMMAND...: the common test of a scheduler: COMMAND loads it (its ops name is OPS, or
# OPS_*), it schedules a mixed load for 10 s without being ejected by the sched_ext watchdog, and it unloads on
# SIGINT leaving every task in the fair class.
load_run_unload() {
  _ops=$1; shift
  _name=$(basename "$1")
  _out=/tmp/$_name.out
  [ "$(scx_state)" = disabled ] || fail "sched_ext state before loading is '$(scx_state)', expected 'disabled'"
  log "loading $_name"
  "$@" >"$_out" 2>&1 &
  sched_pid=$!
  wait_scx_state enabled 20
  ops=$(scx_ops)
  log "state=$(scx_state) ops=$ops switch_all=$(cat $SCX/switch_all)"
  scx_ops_is "$_ops" || fail "root/ops is '$ops', expected '$_ops'"

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
  kill -0 "$sched_pid" 2>/dev/null || { show_scheduler_output "$_out"; fail "$_name exited during the load"; }
  [ "$state" = enabled ] || { show_scheduler_output "$_out"; fail "state is '$state' after 10 s of load (ejected?)"; }
  errs=$(kernel_scx_errors)
  [ -z "$errs" ] || fail "kernel reported sched_ext errors: $errs"
  log "$_name says: $(grep -v "^$" "$_out" | tail -n1)"

  log "stopping $_name (SIGINT) with the load still running"
  kill -INT "$sched_pid"
  wait "$sched_pid"
  rc=$?
  wait_scx_state disabled 10
  log "$_name exited with $rc; its exit report: $(grep EXIT: "$_out")"
  # scx_smart times its loop (the longest pass and pause: what to look at after an ejection).
  grep -q 'the loop: ' "$_out" && log "$_name's loop: $(sed -n 's/.*the loop: //p' "$_out")"
  [ "$rc" = 0 ] || fail "$_name exit status $rc"
  grep -q 'EXIT: unregistered from user space' "$_out" || fail "unexpected exit reason: $(grep EXIT: "$_out")"
  set -- $(count_on_scx)
  log "tasks in sched_ext class after unloading: $1 of $2"
  [ "$1" = 0 ] || fail "$1 tasks still in the sched_ext class after unloading"
  for p in $LOAD_PIDS; do
    v=$(on_scx "$p")
    [ -z "$v" ] || [ "$v" = 0 ] || fail "load task $p still in the sched_ext class"
  done
  stop_load
  log "ok"
}

# show_scheduler_output FILE: a scheduler's output with the kernel's debug dump (tasks and queues, up to
# 32 KiB) last and cut to 120 lines, so that what the scheduler itself said at an ejection comes first.
show_scheduler_output() {
  awk '/^DEBUG DUMP/ {d = 1} d {dump[n++] = $0; if (/^=====/ && ++bars == 2) d = 0; next} {print} END {for (i = 0; i < n && i < 120; i++) print dump[i]; if (n > 120) print "... (" n - 120 " more lines of the dump)"}' "$1"
}

# json_num KEY JSON: the whole number after "KEY": in a one-line JSON object (empty if none).
json_num() { echo "$2" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }

# periodic_beside_hogs ARGS...: smart-periodic ARGS (10 ms of work every 40 ms, deadline 15 ms, 250 jobs)
# beside $HOGS CPU hogs (default 2; 14 s each); prints its JSON line.
periodic_beside_hogs() {
  _hogs= _k=0
  while [ "$_k" -lt "${HOGS:-2}" ]; do
    _k=$((_k + 1))
    smart-hog --seconds 14 --name "h$_k" >/dev/null &
    _hogs="$_hogs $!"
  done
  usleep 300000
  smart-periodic --work 10 --period 40 --deadline 15 --count 250 "$@"
  for _p in $_hogs; do wait "$_p"; done
}

# periodic_under_scx NAME ARGS...: periodic_beside_hogs under `scx_smart ARGS`; fails on a sched_ext error.
# Sets MET (deadlines met), KICKS (preempting kicks sent), UNEXPLAINED (misses not put down to the machine's
# stalls by smart-periodic --explain), STALLED_MS and WAKE_TO_DISPATCH (p50, us); logs what it measured.
periodic_under_scx() {
  _name=$1; shift
  scx_smart --stats 0 --stall-log /tmp/stalls "$@" >/tmp/scx_smart.out 2>&1 &
  _pid=$!
  wait_scx_state enabled 20
  usleep 500000
  _r=$(periodic_beside_hogs --jobs /tmp/jobs)
  _errs=$(kernel_scx_errors)
  kill -INT "$_pid"; wait "$_pid"
  [ -z "$_errs" ] || { show_scheduler_output /tmp/scx_smart.out; fail "kernel reported sched_ext errors: $_errs"; }
  _why=$(smart-periodic --explain /tmp/jobs /tmp/stalls) || fail "smart-periodic --explain failed"
  log "$_name (scx_smart $*): $_r"
  log "  misses explained: $_why"
  log "  $(grep -o '[0-9]* wake-ups of time-constrained.*' /tmp/scx_smart.out)"
  log "  $(grep -o 'machine stalls.*' /tmp/scx_smart.out)"
  MET=$(json_num met "$_r")
  [ -n "$MET" ] || fail "no result from smart-periodic under scx_smart $*"
  KICKS=$(sed -n 's/.* \([0-9]*\) preempting kicks.*/\1/p' /tmp/scx_smart.out)
  UNEXPLAINED=$(( $(json_num missed "$_why") - $(json_num machine_stopped "$_why") ))
  STALLED_MS=$(echo "$_why" | sed -n 's/.*"stalled_ms":\([0-9.]*\).*/\1/p')
  WAKE_TO_DISPATCH=$(sed -n 's/.*wake-up to dispatch p50 \([0-9]*\) us.*/\1/p' /tmp/scx_smart.out)
}
