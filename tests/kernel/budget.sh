#!/bin/bash
# The byte budget (max-queue-bytes) and the overloaded state.  hotplugd runs
# with the smallest budget, a small receive buffer and a service manager's
# notification socket (so the handover journal is on and counts against the
# budget too), and is paused (hotplugctl pause: no agent starts, events
# queue).  A burst of real uevents fills the budget: the daemon reports
# "overloaded" in the log, in hotplugctl status (text and --json) and in
# STATUS=, and stops reading (more events sent meanwhile are not received),
# never holding more bytes than the budget.  While it is overloaded a veth
# pair is created and another deleted, so their events wait in the socket
# buffer or are lost with the burst.  After hotplugctl resume the daemon
# reads on, leaves the overloaded state (logged), the kernel's drops are
# recovered by resync, and every device's last state reached the agent:
# the last run for a device still there is an add or change, for a device
# gone a remove; the new pair had an add.  The receive buffer (256 KiB)
# holds more than the room the daemon has when it reads on (a quarter of
# the budget), so the resync pass starts while the socket still holds
# events from before the loss: the deleted pair's removes, lost after
# them, are not yet a gap and cannot be placed by that pass; a removes-only
# pass must follow once the socket was read to the end (without it, the
# pair's removes never reached the agent).  The counters agree: nothing
# queued or running, every agent started finished, an overflow gap, the
# bytes held back to what an idle daemon keeps.
# In a network and mount namespace of its own, with its own sysfs: the
# kernel sends the events of the test's net devices (lo included) to this
# namespace only, and other processes' net devices' events stay out.
if [ "$(id -u)" = 0 ] && [ -z "${BUDGET_NETNS:-}" ]; then
        BUDGET_NETNS=1 exec unshare -n -m bash "$0" "$@"
fi
. "$SRCDIR/tests/kernel/lib.sh"
t_require_root
mount --make-rprivate / && mount -t sysfs sysfs /sys && ip link set lo up || t_fail "cannot set up the namespace"
t_make_agent
N=${BUDGET_BURST:-2000}
RCVBUF=${BUDGET_RCVBUF:-262144}
BUDGET=$((512 * 1024))

v=hpk$$v
old=hpk$$o
new=hpk$$n
t_veth "$v"
t_veth "$old"

# The service manager's side of sd_notify: every datagram's STATUS= line, one a line.
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print("ready", file=sys.stderr, flush=True)
with open(sys.argv[2], "a") as out:
    while True:
        for line in s.recv(65536).decode(errors="replace").splitlines():
            if line.startswith("STATUS="):
                print(line, file=out, flush=True)
' "$T_DIR/notify" "$T_DIR/status-lines" 2>"$T_DIR/notify.err" &
NOTIFY_PID=$!
t_on_exit "kill $NOTIFY_PID"
t_wait_for 10 grep -q ready "$T_DIR/notify.err" || t_fail "the notification listener did not start"

NOTIFY_SOCKET=$T_DIR/notify t_start_daemon --agent "$T_AGENT" --filter-policy "net=keep,*=drop" --after-udev=no \
        --max-queue-bytes=512K --rcvbuf "$RCVBUF" \
        --resync-subsystems net
"$HOTPLUGCTL" pause >/dev/null || t_fail "hotplugctl pause failed"
field() { sed -n "s/.*\"$1\": *\([0-9a-z]*\).*/\1/p" "$2"; }
"$HOTPLUGCTL" status --json >"$T_DIR/idle.json" || t_fail "status failed"
idle_bytes=$(field bytes_held "$T_DIR/idle.json")
[ "$(field max_queue_bytes "$T_DIR/idle.json")" = "$BUDGET" ] ||
        t_fail "status --json does not give the budget: $(cat "$T_DIR/idle.json")"

burst_start=$(date +%s)
prefix=$(t_uuid_prefix)
"$UEVENT_BURST" "$N" "$prefix" /sys/class/net/lo/uevent "/sys/class/net/$v/uevent" "/sys/class/net/${v}p/uevent" ||
        t_fail "burst failed"
t_wait_for "$T_IDLE" grep -q "overloaded: .* at the max-queue-bytes budget" "$T_LOG" ||
        t_fail "no overload with $N events against a budget of $BUDGET bytes"
grep -m1 "overloaded:" "$T_LOG"

# Overloaded: said in status and --json; reading stopped: what comes now is not received.
"$HOTPLUGCTL" status >"$T_DIR/status" || t_fail "status failed"
grep "^Memory:" "$T_DIR/status"
grep -q "^Memory: .*OVERLOADED now" "$T_DIR/status" || t_fail "status does not say overloaded: $(grep Memory: "$T_DIR/status")"
"$HOTPLUGCTL" status --json >"$T_DIR/over.json" || t_fail "status --json failed"
[ "$(field overloaded "$T_DIR/over.json")" = true ] || t_fail "status --json: overloaded is not true"
received=$(field received "$T_DIR/over.json")
"$UEVENT_BURST" 100 "$(t_uuid_prefix)" /sys/class/net/lo/uevent >/dev/null || t_fail "second burst failed"
ip link add "$new" type veth peer name "${new}p" || t_fail "cannot create veth $new"
t_on_exit "ip link del $new"
ip link del "$old" || t_fail "cannot delete $old"
"$HOTPLUGCTL" status --json >"$T_DIR/over2.json" || t_fail "status --json failed"
[ "$(field received "$T_DIR/over2.json")" = "$received" ] ||
        t_fail "overloaded, yet the daemon read on: received $received, then $(field received "$T_DIR/over2.json")"
held=$(field bytes_held "$T_DIR/over2.json")
[ "$held" -le "$BUDGET" ] || t_fail "$held bytes held, over the budget of $BUDGET"
t_wait_for 10 grep -q "^STATUS=.*overloaded" "$T_DIR/status-lines" || t_fail "STATUS= does not say overloaded"
grep -m1 "^STATUS=.*overloaded" "$T_DIR/status-lines"

"$HOTPLUGCTL" resume >/dev/null || t_fail "hotplugctl resume failed"
t_wait_for "$T_IDLE" grep -q "overload over after" "$T_LOG" || t_fail "the overload never ended"
t_wait_for "$T_IDLE" grep -q "resync after overflow:" "$T_LOG" || t_fail "no resync after what the kernel dropped"
t_settle || t_fail "settle failed (no progress for $T_IDLE s)"
t_wait_for "$T_IDLE" grep -q "^STATUS=Processing uevents: .* 0 queued, 0 running" "$T_DIR/status-lines" ||
        t_fail "STATUS= never came back to idle: $(tail -1 "$T_DIR/status-lines")"
grep -m1 "overload over after" "$T_LOG"
grep "resync" "$T_LOG"

# Every device's last state reached the agent, in the order the runs started.
for f in "$T_DIR"/runs/*.agent; do
        echo "$(t_field "$f" start) $(t_env_of "$f" ACTION) $(t_env_of "$f" DEVPATH)"
done | sort -n >"$T_DIR/runs-in-order"
last_action() { awk -v d="$1" '$3 == d { a = $2 } END { print a }' "$T_DIR/runs-in-order"; }
for d in lo "$v" "${v}p" "$new" "${new}p"; do
        a=$(last_action "/devices/virtual/net/$d")
        case "$a" in
        add | change) ;;
        *) t_fail "$d is there, but the last agent run for it was '${a:-none}'" ;;
        esac
done
for d in "$new" "${new}p"; do
        awk -v d="/devices/virtual/net/$d" '$2 == "add" && $3 == d' "$T_DIR/runs-in-order" | grep -q . ||
                t_fail "$d was created while overloaded, and no add reached the agent"
done
for d in "$old" "${old}p"; do
        a=$(last_action "/devices/virtual/net/$d")
        [ "$a" = remove ] || t_fail "$d is gone, but the last agent run for it was '${a:-none}'"
done
ran=$(t_count_runs_prefix "$prefix")
echo "$ran of the $N events of the burst ran; the rest were dropped by the kernel and recovered by resync"
[ "$ran" -lt "$N" ] || t_fail "all $N events ran: the budget held nothing back"

# The counters agree.
"$HOTPLUGCTL" status --json >"$T_DIR/end.json" || t_fail "status --json failed"
"$HOTPLUGCTL" status
for k in queued running; do
        [ "$(field $k "$T_DIR/end.json")" = 0 ] || t_fail "$k is $(field $k "$T_DIR/end.json") after settle"
done
[ "$(field started "$T_DIR/end.json")" = "$(field finished "$T_DIR/end.json")" ] || t_fail "started != finished"
[ "$(field overloaded "$T_DIR/end.json")" = false ] || t_fail "still overloaded after settle"
[ "$(field overloads "$T_DIR/end.json")" -ge 1 ] || t_fail "no overload counted"
[ "$(field gaps_overflow "$T_DIR/end.json")" -ge 1 ] || t_fail "no overflow gap in the ledger"
# Overloads that come one after another are logged once a minute (HP_OVERLOAD_LOG_USEC), not each.
overloads=$(field overloads "$T_DIR/end.json")
warned=$(grep -c "overloaded: " "$T_LOG")
minutes=$((($(date +%s) - burst_start) / 60))
echo "overloaded $overloads times in $minutes+ min; $warned overload warnings"
[ "$warned" -ge 1 ] && [ "$warned" -le $((minutes + 1)) ] ||
        t_fail "$warned overload warnings for $overloads overloads in $minutes+ min: not one a minute"
peak=$(field peak_bytes "$T_DIR/end.json")
[ "$peak" -le "$BUDGET" ] || t_fail "at most $peak bytes were held, over the budget of $BUDGET"
end_bytes=$(field bytes_held "$T_DIR/end.json")
[ "$end_bytes" -le $((idle_bytes + 128 * 1024)) ] ||
        t_fail "$end_bytes bytes held after settle, $idle_bytes before the burst"
echo "ok: overloaded at $peak of $BUDGET bytes, reading stopped and went on; $ran runs of the burst;" \
        "every device's last state reached the agent; $end_bytes bytes held at the end ($idle_bytes at start)"
t_stop_daemon
