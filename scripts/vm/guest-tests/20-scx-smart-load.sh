#!/bin/sh
# scx_smart (crates/sched SMART, via scx_rustland_core) loads, schedules a mixed load for 10 s without being
# ejected by the sched_ext watchdog, and unloads on SIGINT leaving every task in the fair class.
# needs: scx_smart
# timeout: 150
. /tests/lib.sh

load_run_unload smart scx_smart --stats 2
