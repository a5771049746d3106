#!/bin/bash
# The log never holds up the agents: hotplugd logging at debug level with
# --log-target=stderr into a pipe that nobody reads, and a burst of real
# uevents.  Every event's agent runs, once, while the pipe stays full, and
# hotplugctl status answers meanwhile with the count of log lines dropped;
# once the pipe is read, what waited in the daemon's buffer comes out in
# order, followed by one line "N log lines dropped while stderr did not
# take them" whose N adds up to that count.  (A daemon that writes its log
# blocking waits in write() on the full pipe: the agents stop after the
# first few dozen events.)
. "$(dirname "$0")/lib.sh"
t_require_root
t_make_agent 0
N=${LOG_BLOCKED_EVENTS:-2000}

v=hpl$$
t_veth "$v"
fifo=$T_DIR/stderr.fifo
mkfifo "$fifo" || t_fail "mkfifo failed"
# The pipe's one reader: this shell, which does not read (read-write, so
# that opening it does not wait and the daemon's end never sees EPIPE).
exec 7<>"$fifo"
t_on_exit "exec 7>&-"
t_start_daemon_stderr "$fifo" --agent "$T_AGENT" --all

prefix=$(t_uuid_prefix)
"$UEVENT_BURST" "$N" "$prefix" /sys/class/net/lo/uevent /sys/class/net/$v/uevent /sys/class/net/${v}p/uevent ||
        t_fail "burst failed"
ran() { [ "$(t_count_runs_prefix "$prefix")" -ge "$N" ]; }
# A daemon stuck in write() on the pipe never reads its SIGTERM: kill it before failing.
stuck() {
        kill -KILL "$T_DAEMON_PID" 2>/dev/null
        wait "$T_DAEMON_PID" 2>/dev/null
        T_DAEMON_PID=
        t_fail "$@"
}
t_wait_for "$T_IDLE" ran || stuck "$(t_count_runs_prefix "$prefix") of $N agents ran while the log's pipe was full"
distinct=$(grep -rh "^env:SYNTH_UUID=$prefix" "$T_DIR/runs" | sort -u | wc -l)
[ "$distinct" = "$N" ] || t_fail "$distinct distinct events of $N ran"
echo "ok: all $N agents ran while nobody read the log's pipe"

# status answers while the pipe is full, and counts what did not fit.
dropped=$(t_status_field log_dropped)
[ -n "$dropped" ] || stuck "hotplugctl status --json has no log_dropped: $("$HOTPLUGCTL" status --json 2>&1)"
[ "$dropped" -gt 0 ] || t_fail "no log line dropped: the pipe was never full?"
"$HOTPLUGCTL" status | grep "^Log:" || t_fail "hotplugctl status has no Log: line"
echo "ok: hotplugctl status answers with the pipe full: $dropped log lines dropped"

# Read the pipe: the waiting lines come out, then the drop report.
cat <&7 >"$T_DIR/drained" &
cat_pid=$!
t_on_exit "kill $cat_pid"
reported() { grep -q "log lines\? dropped while stderr did not take" "$T_DIR/drained"; }
t_wait_for "$T_IDLE" reported || stuck "no drop report after the pipe was read"
grep "dropped while stderr did not take" "$T_DIR/drained" | sed 's/^/  /'
t_stop_daemon
stopped() { grep -q "stopped:" "$T_DIR/drained"; }
t_wait_for "$T_IDLE" stopped || t_fail "the exit's 'stopped:' line did not come out of the pipe"
kill "$cat_pid"
wait "$cat_pid" 2>/dev/null

reported_sum=$(sed -n 's/.*: \([0-9]*\) log lines\? dropped while stderr did not take.*/\1/p' "$T_DIR/drained" |
        awk '{ s += $1 } END { print s + 0 }')
[ "$reported_sum" -ge "$dropped" ] || t_fail "drop reports add up to $reported_sum, status said $dropped"
torn=$(grep -vc "^hotplugd: " "$T_DIR/drained")
[ "$torn" = 0 ] || t_fail "$torn lines of the log are not whole lines: $(grep -v "^hotplugd: " "$T_DIR/drained" | head -n 3)"
grep "stopped:" "$T_DIR/drained"
# Each of ours ran once (the ledger's gaps may be other processes' events
# in other network namespaces on a shared machine: not asserted here).
runs=$(t_count_runs_prefix "$prefix")
[ "$runs" = "$N" ] || t_fail "$runs agent runs for $N events"
grep -q ", 0 duplicates" "$T_DIR/drained" || t_fail "ledger: $(grep stopped: "$T_DIR/drained")"
echo "ok: $(wc -l <"$T_DIR/drained") log lines came out whole once the pipe was read, $reported_sum reported dropped"
