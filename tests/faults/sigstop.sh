#!/bin/bash
# The daemon stopped (SIGSTOP) for 10 s while a burst of real uevents
# comes: the kernel keeps them in the netlink receive buffer (--rcvbuf,
# 128 MiB by default), so when the daemon continues it reads them all.
# Nothing lost: every event ran its agent once, no overflow, no gap.
. "$(dirname "$0")/lib.sh"
t_require_root
N=${FAULTS_EVENTS:-2000}
t_make_agent 0
f_devices
t_start_daemon --agent "$T_AGENT" "${F_FILTER[@]}"
pid=$T_DAEMON_PID
t_on_exit "kill -CONT $pid"
kill -STOP "$pid" || t_fail "cannot stop the daemon"
prefix=$(t_uuid_prefix)
"$UEVENT_BURST" "$N" "$prefix" "${F_DEVS[@]}" || { kill -CONT "$pid"; t_fail "burst failed"; }
# The fault is the stop itself: 10 s, whatever the machine's speed.
sleep 10
kill -CONT "$pid"
f_check_nothing_lost "$N" "$prefix"
[ "$(f_status overflows)" = 0 ] || t_fail "the receive buffer overflowed $(f_status overflows) time(s)"
grep -iE "overflow|ENOBUFS|lost" "$T_LOG" && t_fail "the daemon reported a loss"
t_stop_daemon
echo "ok: $N events sent while the daemon was stopped for 10 s; all ran once, no overflow, no gap"
