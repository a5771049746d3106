#!/bin/bash
# SPDX-License-Identifier: MIT
# hotplugctl info with a real daemon and real uevents: a veth pair and a
# loop device of our own, an agent that exits 0 for their add and 3 for
# their other events.
#  - info by /sys path, by DEVPATH and by /dev node names the SEQNUMs the
#    agent received, with action, exit status and a duration;
#  - --json parses and says the same (status, failed, duration_usec);
#  - -a shows the device's attributes, and its parents' (of a device with
#    parents present at the start: a NIC, a serial port);
#  - a device gone (its remove run) is still known by its DEVPATH;
#  - --export lists every device, in text and as JSON lines;
#  - a device never heard of: exit 4; a path that is no device: exit 1;
#    what can never be a device: exit 64.
. "$SRCDIR/tests/kernel/lib.sh"

t_require_root
command -v losetup >/dev/null || t_skip "no losetup"

CTL="$HOTPLUGCTL"
d=hpi$$
mkdir -p "$T_DIR/runs"
# The agent: for our devices a line "SEQNUM ACTION" per run; exit 0 for add, 3 else.
cat >"$T_DIR/agent" <<A
#!/bin/sh
case "\$DEVPATH" in
*/net/$d | */block/loop[0-9]* ) ;;
* ) exit 0 ;;
esac
echo "\$SEQNUM \$ACTION" >>"$T_DIR/runs/\${DEVPATH##*/}"
[ "\$ACTION" = add ] && exit 0
exit 3
A
chmod 755 "$T_DIR/agent"
t_start_daemon --agent "$T_DIR/agent" --all
t_on_exit "ip link del $d"

# --- a veth: add (exit 0), change (exit 3) --------------------------------------
ip link add "$d" type veth peer name "${d}p" || t_fail "cannot create veth $d"
t_wait_for 10 test -s "$T_DIR/runs/$d" || t_fail "the agent did not run for the add of $d"
uuid=$(t_uuid)
echo "change $uuid" >"/sys/class/net/$d/uevent"
_t_two() { [ "$(wc -l <"$T_DIR/runs/$d")" -ge 2 ]; }
t_wait_for 10 _t_two || t_fail "the agent did not run for the change of $d"
t_settle
read -r add_seq add_act < <(sed -n 1p "$T_DIR/runs/$d")
read -r chg_seq chg_act < <(sed -n 2p "$T_DIR/runs/$d")
[ "$add_act:$chg_act" = add:change ] || t_fail "agent runs: $(cat "$T_DIR/runs/$d")"

"$CTL" info "/sys/class/net/$d" >"$T_DIR/info1" 2>&1 || t_fail "info /sys/class/net/$d: exit $?: $(cat "$T_DIR/info1")"
cat "$T_DIR/info1"
grep -q "^Device: *//*devices/virtual/net/$d\$" "$T_DIR/info1" || t_fail "info names no device"
grep -q "SEQNUM $add_seq add at .*: done" "$T_DIR/info1" || t_fail "info lacks the add SEQNUM $add_seq"
grep -q "SEQNUM $chg_seq change at .*: done" "$T_DIR/info1" || t_fail "info lacks the change SEQNUM $chg_seq"
grep -A4 "SEQNUM $add_seq add" "$T_DIR/info1" | grep -q "ran $T_DIR/agent (pid [0-9]*): exit 0 after " ||
        t_fail "the add's run is not 'exit 0'"
grep -A4 "SEQNUM $chg_seq change" "$T_DIR/info1" | grep -q "ran $T_DIR/agent (pid [0-9]*): exit 3 after " ||
        t_fail "the change's run is not 'exit 3'"
grep -q "^Resync set: " "$T_DIR/info1" || t_fail "info does not say whether it is in the resync set"
echo "ok: info by /sys path: SEQNUM $add_seq add exit 0, SEQNUM $chg_seq change exit 3"

"$CTL" info "/devices/virtual/net/$d" >"$T_DIR/info2" || t_fail "info by DEVPATH: exit $?"
cmp -s "$T_DIR/info1" "$T_DIR/info2" || t_fail "info by DEVPATH differs from info by /sys path"
"$CTL" info --json "/devices/virtual/net/$d" >"$T_DIR/info.json" || t_fail "info --json: exit $?"
python3 - "$T_DIR/info.json" "$d" "$add_seq" "$chg_seq" <<'P' || t_fail "info --json: $(cat "$T_DIR/info.json")"
import json, sys
path, dev, add, chg = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
lines = open(path).read().splitlines()
assert len(lines) == 1, lines
o = json.loads(lines[0])
assert o["devpath"] == "/devices/virtual/net/" + dev, o["devpath"]
assert o["in_resync_set"] in (True, False, None)
ev = {e["seqnum"]: e for e in o["events"]}
for seq, action, status, failed in ((add, "add", "exit 0", False), (chg, "change", "exit 3", True)):
    e = ev[seq]
    assert e["action"] == action and e["outcome"] == "done", e
    assert isinstance(e["time"], (int, float)) and e["time"] > 0, e
    runs = [r for r in e["runs"] if r["program"].endswith("/agent")]
    assert len(runs) == 1, e
    r = runs[0]
    assert r["status"] == status and r["failed"] is failed and r["pid"] > 0, r
    assert isinstance(r["duration_usec"], int) and r["duration_usec"] > 0, r
print("json ok")
P
echo "ok: info by DEVPATH is the same; --json has both events, their exit statuses and durations"

# --- -a: the veth itself, and a device with parents (present at the start) ---------
"$CTL" info -a "/sys/class/net/$d" >"$T_DIR/info3" 2>&1 || t_fail "info -a: exit $?: $(cat "$T_DIR/info3")"
grep -q "looking at device '/devices/virtual/net/$d':" "$T_DIR/info3" || t_fail "-a: not the device"
grep -q '    ATTR{mtu}=="1500"' "$T_DIR/info3" || t_fail "-a: no ATTR{mtu}: $(cat "$T_DIR/info3")"
grep -q '    SUBSYSTEM=="net"' "$T_DIR/info3" || t_fail "-a: no SUBSYSTEM"
pdev=
for f in /sys/class/net/* /sys/class/tty/* /sys/class/block/*; do
        case $(readlink -f "$f") in /sys/devices/virtual/*) ;; /sys/devices/*/*) pdev=$f && break ;; esac
done
if [ -n "$pdev" ]; then
        real=$(readlink -f "$pdev")
        "$CTL" info -a "$pdev" >"$T_DIR/info3p" 2>&1 || t_fail "info -a $pdev: exit $?: $(cat "$T_DIR/info3p")"
        grep -q "looking at device '${real#/sys}':" "$T_DIR/info3p" || t_fail "-a $pdev: not the device"
        grep -q "looking at parent device '/devices/" "$T_DIR/info3p" || t_fail "-a $pdev: no parent: $(cat "$T_DIR/info3p")"
        grep -q '    ATTRS{[a-z_]*}=="' "$T_DIR/info3p" || t_fail "-a $pdev: no parent ATTRS"
        echo "ok: info -a shows the veth's attributes, and $pdev's and its parents'"
else
        echo "ok: info -a shows the veth's attributes (no device with parents here to walk)"
fi

# The veth goes: its remove (exit 3) is known by DEVPATH.
ip link del "$d" || t_fail "ip link del $d failed"
_t_removed() { grep -q " remove\$" "$T_DIR/runs/$d"; }
t_wait_for 10 _t_removed || t_fail "the agent did not run for the remove of $d"
t_settle
read -r rm_seq _ < <(grep " remove\$" "$T_DIR/runs/$d" | tail -n 1)
"$CTL" info "/devices/virtual/net/$d" >"$T_DIR/info4" 2>&1 || t_fail "info of the gone veth: exit $?"
grep -A4 "SEQNUM $rm_seq remove at .*: done" "$T_DIR/info4" | grep -q ": exit 3 after " ||
        t_fail "the remove SEQNUM $rm_seq is not shown with exit 3: $(cat "$T_DIR/info4")"
rc=0
"$CTL" info "/sys/class/net/$d" 2>/dev/null || rc=$?
[ "$rc" = 1 ] || t_fail "info of a /sys path that is gone: exit $rc, expected 1"
echo "ok: the gone veth is known by DEVPATH: SEQNUM $rm_seq remove exit 3"

# --- a loop device by its /dev node: attaching it sends a change (exit 3) ------------
img="$T_DIR/disk.img"
truncate -s 1M "$img"
loop=$(losetup -f --show "$img") || t_fail "losetup failed"
t_on_exit "losetup -d $loop"
lname=${loop##*/}
t_wait_for 10 test -s "$T_DIR/runs/$lname" || t_fail "the agent did not run for the change of $lname"
t_settle
read -r lchg_seq lchg_act < <(tail -n 1 "$T_DIR/runs/$lname")
"$CTL" info "$loop" >"$T_DIR/info5" 2>&1 || t_fail "info $loop: exit $?: $(cat "$T_DIR/info5")"
cat "$T_DIR/info5"
grep -q "^Device: *//*devices/virtual/block/$lname\$" "$T_DIR/info5" || t_fail "info by /dev node: wrong device"
grep -A4 "SEQNUM $lchg_seq $lchg_act at .*: done" "$T_DIR/info5" | grep -q ": exit 3 after " ||
        t_fail "info by /dev node lacks SEQNUM $lchg_seq with exit 3"
echo "ok: info by /dev node $loop: SEQNUM $lchg_seq $lchg_act exit 3"

# --- --export ---------------------------------------------------------------------
"$CTL" info --export >"$T_DIR/export" || t_fail "info --export: exit $?"
grep -q "^Device: *//*devices/virtual/net/$d\$" "$T_DIR/export" || t_fail "--export lacks $d"
grep -q "^Device: *//*devices/virtual/block/$lname\$" "$T_DIR/export" || t_fail "--export lacks $lname"
"$CTL" info --export --json >"$T_DIR/export.json" || t_fail "info --export --json: exit $?"
python3 - "$T_DIR/export.json" "$d" <<'P' || t_fail "info --export --json does not parse or lacks $d"
import json, sys
devs = [json.loads(l)["devpath"] for l in open(sys.argv[1])]
assert "/devices/virtual/net/" + sys.argv[2] in devs
assert devs == sorted(devs) and len(devs) == len(set(devs))
print(len(devs), "devices exported")
P
echo "ok: --export lists both, --export --json parses ($(wc -l <"$T_DIR/export.json") devices)"

# --- errors -------------------------------------------------------------------------
rc=0
"$CTL" info "/devices/virtual/net/${d}never" 2>"$T_DIR/err1" || rc=$?
[ "$rc" = 4 ] || t_fail "info of a device never seen: exit $rc, expected 4"
grep -q "knows nothing of /devices/virtual/net/${d}never" "$T_DIR/err1" || t_fail "message: $(cat "$T_DIR/err1")"
rc=0
"$CTL" info /sys/class/net 2>"$T_DIR/err2" || rc=$?
[ "$rc" = 1 ] || t_fail "info of a directory that is no device: exit $rc, expected 1"
grep -q "is not a device" "$T_DIR/err2" || t_fail "message: $(cat "$T_DIR/err2")"
rc=0
"$CTL" info /tmp 2>"$T_DIR/err3" || rc=$?
[ "$rc" = 64 ] || t_fail "info /tmp: exit $rc, expected 64"
rc=0
"$CTL" info --export "/sys/class/net/$d" 2>/dev/null || rc=$?
[ "$rc" = 64 ] || t_fail "info --export DEVICE: exit $rc, expected 64"
echo "ok: never seen exit 4, no device exit 1, not a device path exit 64"

t_stop_daemon
echo "ok: the daemon stopped cleanly"
