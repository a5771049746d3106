#!/bin/bash
# SPDX-License-Identifier: MIT
# hotplugctl wait with a real daemon and real uevents (a veth pair of our own):
#  - wait for a device that is not there yet returns once it was added and the
#    agent of its add finished, not before;
#  - wait for one device does not wait for another device's slow agent;
#    --settle does;
#  - wait --removed returns once the remove was processed;
#  - a device that never comes: exit 2 after --timeout, naming it;
#  - a device node (/dev/null) that is there with nothing held: at once;
#  - what can never be a device, or no device: exit 64.
. "$SRCDIR/tests/kernel/lib.sh"

t_require_root

CTL="$HOTPLUGCTL"
d=hpw$$
slow_uuid=$(t_uuid)
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# The agent: 1.5 s for our device's add and remove, 4 s for the lo change
# marked $slow_uuid, at once for anything else; a file per finished run.
mkdir -p "$T_DIR/runs"
cat >"$T_DIR/agent" <<A
#!/bin/sh
case "\$ACTION:\$INTERFACE:\${SYNTH_UUID:-}" in
add:$d: | remove:$d: ) sleep 1.5 ;;
*:lo:$slow_uuid ) sleep 4 ;;
esac
[ -n "\$INTERFACE" ] && : >"$T_DIR/runs/\$ACTION.\$INTERFACE.\${SYNTH_UUID:-none}"
exit 0
A
chmod 755 "$T_DIR/agent"
t_start_daemon --agent "$T_DIR/agent" --all
t_wait_for 5 test -S "$HOTPLUGCTL_SOCKET" || t_fail "no control socket at $HOTPLUGCTL_SOCKET"
t_on_exit "ip link del $d"

# --- a device that is not there yet ---------------------------------------------
[ -e "/sys/class/net/$d" ] && t_fail "$d exists before the test"
"$CTL" wait --timeout 60 "/sys/class/net/$d" 2>"$T_DIR/wait1.err" &
w=$!
# wait has subscribed once it holds its second connection (fds 0-2, monitor, control).
_t_connected() { [ "$(ls "/proc/$w/fd" 2>/dev/null | wc -l)" -ge 5 ]; }
t_wait_for 10 _t_connected || t_fail "wait did not connect"
ip link add "$d" type veth peer name "${d}p" || t_fail "cannot create veth $d"
added=$(now_ms)
t_wait_pid_exit "$w" rc 60 || t_fail "wait for $d did not return"
took=$(($(now_ms) - added))
[ "$rc" = 0 ] || t_fail "wait for $d: exit $rc, expected 0: $(cat "$T_DIR/wait1.err")"
[ -e "$T_DIR/runs/add.$d.none" ] || t_fail "wait for $d returned before the agent of its add finished (${took} ms)"
[ "$took" -ge 1000 ] || t_fail "wait returned ${took} ms after the add; its agent sleeps 1.5 s"
echo "ok: wait for $d returned ${took} ms after ip link add (agent of the add: 1.5 s)"

# --- only the device's own events count; --settle counts all ----------------------
echo "change $slow_uuid" >/sys/class/net/lo/uevent
t_wait_for 5 sh -c "'$CTL' status | grep -q '1 running'" || t_fail "the slow lo agent did not start"
start=$(now_ms)
"$CTL" wait --timeout 30 "/sys/class/net/$d" "/devices/virtual/net/${d}p" || t_fail "wait for $d, ${d}p failed: $?"
took=$(($(now_ms) - start))
[ -e "$T_DIR/runs/change.lo.$slow_uuid" ] && t_fail "wait for $d waited for the lo agent"
[ "$took" -lt 3000 ] || t_fail "wait for $d took ${took} ms while only lo's agent ran"
echo "ok: wait for $d, ${d}p took ${took} ms while lo's 4 s agent ran"
start=$(now_ms)
"$CTL" wait --settle --timeout 30 "/sys/class/net/$d" || t_fail "wait --settle failed: $?"
took=$(($(now_ms) - start))
[ -e "$T_DIR/runs/change.lo.$slow_uuid" ] || t_fail "wait --settle returned before lo's agent finished (${took} ms)"
echo "ok: wait --settle took ${took} ms, until lo's agent finished"

# --- a timeout names the device ---------------------------------------------------
rc=0
"$CTL" wait --timeout 0.5 "/sys/class/net/${d}x" 2>"$T_DIR/wait2.err" || rc=$?
[ "$rc" = 2 ] || t_fail "wait for a missing device: exit $rc, expected 2"
grep -q "timed out: /sys/class/net/${d}x is not there" "$T_DIR/wait2.err" ||
        t_fail "timeout message: $(cat "$T_DIR/wait2.err")"
rc=0
"$CTL" wait --removed --timeout 0.5 /sys/class/net/lo 2>"$T_DIR/wait3.err" || rc=$?
[ "$rc" = 2 ] || t_fail "wait --removed for lo: exit $rc, expected 2"
grep -q "is still there" "$T_DIR/wait3.err" || t_fail "timeout message: $(cat "$T_DIR/wait3.err")"
echo "ok: timeouts exit 2 and name the device"

# --- --removed: until the remove was processed ---------------------------------------
devpath=$(readlink -f "/sys/class/net/$d")
"$CTL" wait --removed --timeout 60 "$devpath" 2>"$T_DIR/wait4.err" &
w=$!
t_wait_for 10 _t_connected || t_fail "wait --removed did not connect"
ip link del "$d" || t_fail "cannot delete $d"
deleted=$(now_ms)
t_wait_pid_exit "$w" rc 60 || t_fail "wait --removed did not return"
took=$(($(now_ms) - deleted))
[ "$rc" = 0 ] || t_fail "wait --removed: exit $rc: $(cat "$T_DIR/wait4.err")"
[ -e "$T_DIR/runs/remove.$d.none" ] || t_fail "wait --removed returned before the agent of the remove finished"
echo "ok: wait --removed returned ${took} ms after ip link del (agent of the remove: 1.5 s)"
# Gone already: at once.
"$CTL" wait --removed --timeout 5 "$devpath" || t_fail "wait --removed for a gone device failed"

# --- a device node; bad arguments -----------------------------------------------------
"$CTL" wait --timeout 5 /dev/null || t_fail "wait /dev/null failed"
rc=0
"$CTL" wait eth0 2>"$T_DIR/usage.err" || rc=$?
[ "$rc" = 64 ] || t_fail "wait eth0: exit $rc, expected 64"
grep -q "'eth0' is not a device" "$T_DIR/usage.err" || t_fail "usage message: $(cat "$T_DIR/usage.err")"
rc=0
"$CTL" wait 2>/dev/null || rc=$?
[ "$rc" = 64 ] || t_fail "wait without a device: exit $rc, expected 64"
echo "ok: device node and usage errors"
