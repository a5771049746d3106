#!/bin/bash
# hotplugd outlives its log: --log-target=stderr into a FIFO whose only
# reader exits.  The next line's write fails with EPIPE (the daemon ignores
# SIGPIPE: before, that write killed it) and stderr is given up for good.
# Real uevents (a burst of changes, a veth pair added and deleted) go on
# reaching their agents, every one; a monitor client killed mid-burst is
# nothing either; hotplugctl status answers, says the log is gone and counts
# the lines dropped; SIGTERM stops the daemon in order.  Agents still start
# with SIGPIPE at its default disposition and nothing blocked: each records
# the SigIgn and SigBlk masks of its own /proc entry.
. "$(dirname "$0")/lib.sh"
t_require_root
N=${LOG_GONE_EVENTS:-300}

# One line per run, one write (O_APPEND): ACTION DEVPATH SYNTH_UUID SigIgn SigBlk.
cat >"$T_DIR/agent" <<A
#!/bin/sh
ign=- blk=-
while read -r key val; do
        case "\$key" in
        SigIgn:) ign=\$val ;;
        SigBlk:) blk=\$val ;;
        esac
done </proc/\$\$/status
echo "\$ACTION \$DEVPATH \${SYNTH_UUID:--} \$ign \$blk" >>"$T_DIR/runs.log"
A
chmod 755 "$T_DIR/agent"

v=hpg$$
t_veth "$v"
fifo=$T_DIR/stderr.fifo
mkfifo "$fifo" || t_fail "mkfifo failed"
# The FIFO's only reader (the daemon's open waits for it).
cat "$fifo" >"$T_DIR/log" &
cat_pid=$!
t_on_exit "kill $cat_pid"
T_LOG=$T_DIR/log
t_start_daemon_stderr "$fifo" --agent "$T_DIR/agent" --all
t_wait_for "$T_IDLE" grep -q "listening" "$T_LOG" || t_fail "no 'listening' line came out of the FIFO"
kill "$cat_pid"
wait "$cat_pid" 2>/dev/null
echo "ok: the log's reader is gone ($(wc -l <"$T_LOG") lines read before)"

# The daemon still runs; else its exit status (141: killed by SIGPIPE) fails the test.
alive() {
        local rc
        kill -0 "$T_DAEMON_PID" 2>/dev/null && return 0
        wait "$T_DAEMON_PID"
        rc=$?
        T_DAEMON_PID=
        t_fail "hotplugd died (status $rc) with its log's reader gone${1:+: $1}"
}
runs_of() { touch "$T_DIR/runs.log" && grep -c "$1" "$T_DIR/runs.log"; }

# A monitor client that vanishes while events are sent to it.
"$HOTPLUGCTL" monitor >/dev/null 2>&1 &
mon_pid=$!
t_on_exit "kill -KILL $mon_pid"
prefix=$(t_uuid_prefix)
"$UEVENT_BURST" "$N" "$prefix" /sys/class/net/lo/uevent /sys/class/net/$v/uevent /sys/class/net/${v}p/uevent ||
        t_fail "burst failed"
kill -KILL "$mon_pid" 2>/dev/null
wait "$mon_pid" 2>/dev/null
w=hpw$$
ip link add "$w" type veth peer name "${w}p" || t_fail "cannot create veth $w"
t_on_exit "ip link del $w"
ip link del "$w" || t_fail "cannot delete veth $w"

ran() {
        alive "$(runs_of " $prefix") of $N burst events had run"
        [ "$(runs_of " $prefix")" -ge "$N" ] && [ "$(runs_of "^remove /devices/virtual/net/$w ")" -ge 1 ] &&
                [ "$(runs_of "^remove /devices/virtual/net/${w}p ")" -ge 1 ]
}
t_wait_for "$T_IDLE" ran || t_fail "$(runs_of " $prefix") of $N burst agents ran, and $(runs_of "^remove /devices/virtual/net/$w") removes of $w/${w}p"
distinct=$(grep " $prefix" "$T_DIR/runs.log" | cut -d' ' -f3 | sort -u | wc -l)
[ "$distinct" = "$N" ] || t_fail "$distinct distinct events of $N ran"
for d in "$w" "${w}p"; do
        for a in add remove; do
                [ "$(runs_of "^$a /devices/virtual/net/$d ")" = 1 ] || t_fail "the $a of $d ran $(runs_of "^$a /devices/virtual/net/$d ") times"
        done
done
echo "ok: all $N burst agents and the add and remove of $w/${w}p ran with nobody reading the log"

gone=$(t_status_field log_gone)
dropped=$(t_status_field log_dropped)
[ "$gone" = true ] || t_fail "hotplugctl status --json: log_gone is '$gone'"
[ "${dropped:-0}" -gt "$N" ] || t_fail "hotplugctl status --json: $dropped log lines dropped for $N events at debug level"
"$HOTPLUGCTL" status | grep "^Log:.*stderr is gone" || t_fail "hotplugctl status does not say stderr is gone"
echo "ok: hotplugctl status answers: stderr gone, $dropped log lines dropped"

# SIGPIPE is bit 13 of SigIgn; nothing is blocked.
while read -r action devpath uuid ign blk; do
        [[ $ign =~ ^[0-9a-f]{16}$ && $blk =~ ^[0-9a-f]{16}$ ]] ||
                t_fail "the agent of $action $devpath $uuid did not find its masks: SigIgn '$ign', SigBlk '$blk'"
        (((0x$ign >> 12) & 1)) && t_fail "the agent of $action $devpath $uuid started with SIGPIPE ignored (SigIgn $ign)"
        [ "$((0x$blk))" = 0 ] || t_fail "the agent of $action $devpath $uuid started with signals blocked (SigBlk $blk)"
done <"$T_DIR/runs.log"
echo "ok: $(wc -l <"$T_DIR/runs.log") agents started with SIGPIPE at its default disposition, no signal blocked"

alive
t_stop_daemon
echo "ok: hotplugd stopped in order"
