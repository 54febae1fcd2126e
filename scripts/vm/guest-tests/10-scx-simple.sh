#!/bin/sh
# The kernel's own tools/sched_ext scx_simple loads, schedules a mixed load for 10 s without being ejected by
# the sched_ext watchdog, and unloads on SIGINT leaving every task in the fair class.
# needs: scx_simple
# timeout: 150
. /tests/lib.sh

load_run_unload simple scx_simple
