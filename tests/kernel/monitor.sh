#!/bin/bash
# SPDX-License-Identifier: MIT
# hotplugctl monitor's udevadm habits with a real daemon and real uevents:
#  - --subsystem-match and --property-match are applied by the daemon: a raw
#    client asking "monitor subsystem=net" gets none of the records of a mem
#    event, nor does the property match let another event's records through;
#  - SUBSYSTEM/DEVTYPE matches on DEVTYPE (a veth's queues have none);
#  - the STARTED and FINISHED lines show the agent's argv ("AGENT net"),
#    then the device;
#  - SIGINT (Ctrl-C) and SIGTERM end it with exit 0.
. "$SRCDIR/tests/kernel/lib.sh"

t_require_root

CTL="$HOTPLUGCTL"
d=hpm$$
t_make_agent
t_start_daemon --agent="$T_AGENT" --all
t_wait_for 5 test -S "$HOTPLUGCTL_SOCKET" || t_fail "no control socket at $HOTPLUGCTL_SOCKET"

# A raw client: send one request, print every record until killed.
cat >"$T_DIR/raw.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.send(sys.argv[2].encode())
while True:
    r = s.recv(8192)
    if not r:
        break
    print(r.decode(errors="replace"), flush=True)
PY
python3 "$T_DIR/raw.py" "$HOTPLUGCTL_SOCKET" "monitor processed subsystem=net" >"$T_DIR/raw" 2>&1 &
raw=$!
t_on_exit "kill $raw"
"$CTL" monitor --processed -s net --property-match "SYNTH_UUID=$(t_uuid | cut -c1-8)*" >"$T_DIR/mon-prop" 2>&1 &
prop=$!
t_on_exit "kill $prop"
"$CTL" monitor --processed --subsystem-match net >"$T_DIR/mon" 2>&1 &
mon=$!
t_on_exit "kill $mon"
# Subscribed once a net event of ours shows in all three.
_t_subscribed() {
        local m
        m=$(t_uuid)
        echo "change $m" >/sys/class/net/lo/uevent
        t_wait_for 1 grep -q "$m" "$T_DIR/raw" && t_wait_for 1 grep -q "$m" "$T_DIR/mon"
}
t_wait_for 10 _t_subscribed || t_fail "the monitors showed none of our events"

net=$(t_uuid)
mem=$(t_uuid)
echo "change $mem" >/sys/devices/virtual/mem/null/uevent
echo "change $net" >/sys/class/net/lo/uevent
t_settle
t_wait_for 5 grep -q "^FINISHED.*/devices/virtual/net/lo" "$T_DIR/mon" || t_fail "monitor -s net: no FINISHED line"
t_wait_for 5 grep -q "uuid=$net" "$T_DIR/raw" || t_fail "raw monitor subsystem=net: no record of $net"
grep -q "uuid=$mem" "$T_DIR/raw" && t_fail "the daemon sent the mem event to a subsystem=net monitor"
grep -q "/devices/virtual/mem/null" "$T_DIR/raw" && t_fail "the daemon sent a record of mem/null to a subsystem=net monitor"
grep -q "/devices/virtual/mem/null" "$T_DIR/mon" && t_fail "monitor -s net printed mem/null"
grep -q "^received .*subsystem=net" "$T_DIR/raw" || t_fail "raw monitor: $(head -3 "$T_DIR/raw")"
grep -q "$net" "$T_DIR/mon-prop" && t_fail "--property-match SYNTH_UUID=<other prefix> let $net through"
echo "ok: the daemon sent only net records to a subsystem=net monitor ($(wc -l <"$T_DIR/raw") records)"

# STARTED/FINISHED show the argv: the agent, then NAME (net), then the device.
seq=$(grep "uuid=$net" "$T_DIR/mon" | awk '{ print $3 }')
started=$(grep "^STARTED .* $seq " "$T_DIR/mon" | head -n 1)
[[ "$started" == *": $T_AGENT net for /devices/virtual/net/lo" ]] || t_fail "STARTED line: '$started'"
finished=$(grep "^FINISHED .* $seq " "$T_DIR/mon" | head -n 1)
[[ "$finished" == *"$T_AGENT net for /devices/virtual/net/lo" ]] || t_fail "FINISHED line: '$finished'"
echo "ok: $started"

# SUBSYSTEM/DEVTYPE: a veth is net without DEVTYPE; its queues are "queues" (none either).
# (-s mem lets the first monitor show that it is subscribed.)
"$CTL" monitor -s net/wlan -s mem >"$T_DIR/mon-wlan" 2>&1 &
wlan=$!
t_on_exit "kill $wlan"
"$CTL" monitor --json -s queues -s net >"$T_DIR/mon-veth" 2>&1 &
veth=$!
t_on_exit "kill $veth"
_t_subscribed2() {
        local m
        m=$(t_uuid)
        echo "change $m" >/sys/devices/virtual/mem/null/uevent
        echo "change $m" >/sys/class/net/lo/uevent
        t_wait_for 1 grep -q "$m" "$T_DIR/mon-wlan" && t_wait_for 1 grep -q "$m" "$T_DIR/mon-veth"
}
t_wait_for 10 _t_subscribed2 || t_fail "the -s net/wlan and -s queues monitors are not subscribed"
t_veth "$d"
t_wait_for 10 grep -q "\"devpath\":\"/devices/virtual/net/$d/queues/rx-0\"" "$T_DIR/mon-veth" ||
        t_fail "monitor -s queues -s net: no queue of $d: $(tail -3 "$T_DIR/mon-veth")"
grep -q "\"devpath\":\"/devices/virtual/net/$d\"" "$T_DIR/mon-veth" || t_fail "monitor -s queues -s net: no $d"
t_settle
grep -q "$d" "$T_DIR/mon-wlan" && t_fail "monitor -s net/wlan showed $d, which has no DEVTYPE"
echo "ok: -s queues -s net showed $d and its queues; -s net/wlan did not"

# Ctrl-C and SIGTERM: exit 0.
for pair in "INT:$mon" "TERM:$prop"; do
        kill -"${pair%%:*}" "${pair#*:}"
        t_wait_pid_exit "${pair#*:}" rc 10 || t_fail "monitor did not exit on SIG${pair%%:*}"
        [ "$rc" = 0 ] || t_fail "monitor exited $rc on SIG${pair%%:*}, expected 0"
done
echo "ok: monitor exits 0 on SIGINT and SIGTERM"

# Usage errors are refused before connecting.
for bad in "-s" "-s a/b/c" "--property-match=lower=1" "--property-match=NOEQUALS" "-s /disk"; do
        rc=0
        # shellcheck disable=SC2086
        "$CTL" monitor $bad 2>/dev/null || rc=$?
        [ "$rc" = 64 ] || t_fail "monitor $bad: exit $rc, expected 64"
done
echo "ok: bad matches exit 64"
