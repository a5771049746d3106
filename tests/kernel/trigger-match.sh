#!/bin/bash
# SPDX-License-Identifier: MIT
# hotplugctl trigger's udevadm matches and device nodes, on this machine's
# real sysfs, each checked against a walk of /sys this test makes itself
# (tests/kernel/sysfs-select.py):
#  - device nodes name their device through /sys/dev/{block,char}: test and
#    trigger take /dev/null and a loop device of this test's own (for
#    DEVICE, --parent-match and --name-match), and a file that exists but is
#    no device is said to be that, never "no such device";
#  - --dry-run lists exactly the devices that --property-match,
#    --attr-match, --attr-nomatch, --parent-match and --name-match select,
#    alone and together, and --type=subsystems the modules, buses and
#    drivers the matches select;
#  - --prioritized-subsystem lists the same devices, those of the
#    subsystem (after their ancestors) first;
#  - --quiet: a write refused (run as a user) is not named, exit 1 all the same;
#  - a real trigger --settle through a node: the daemon's agent gets the
#    loop device's change event.
. "$SRCDIR/tests/kernel/lib.sh"

t_require_root
command -v losetup >/dev/null || t_skip "needs losetup (util-linux)"
command -v python3 >/dev/null || t_skip "needs python3"
SELECT=$SRCDIR/tests/kernel/sysfs-select.py

a=hpm$$
t_veth "$a"
ip link set "$a" address 02:00:00:00:5e:01 || t_fail "cannot set $a's address"
truncate -s 1M "$T_DIR/loop.img"
loop=$(losetup --find --show "$T_DIR/loop.img") || t_fail "cannot make a loop device"
t_on_exit "losetup -d $loop"
lname=${loop#/dev/}
ldev=/sys/devices/virtual/block/$lname
[ -e "$ldev/uevent" ] || t_fail "no $ldev for $loop"

# ---- device nodes -----------------------------------------------------------------------
"$HOTPLUGCTL" test /dev/null >"$T_DIR/null" 2>&1 || t_fail "test /dev/null: $(cat "$T_DIR/null")"
grep -qx "event: add /devices/virtual/mem/null.*" "$T_DIR/null" || t_fail "test /dev/null: $(cat "$T_DIR/null")"
"$HOTPLUGCTL" test --action change "$loop" >"$T_DIR/ltest" 2>&1 || t_fail "test $loop: $(cat "$T_DIR/ltest")"
grep -qx "event: change /devices/virtual/block/$lname.*" "$T_DIR/ltest" || t_fail "test $loop: $(cat "$T_DIR/ltest")"
for v in test trigger; do
        rc=0
        "$HOTPLUGCTL" $v /etc/hostname >"$T_DIR/nodev" 2>&1 || rc=$?
        [ "$rc" = 1 ] && grep -q "/etc/hostname: not a device: neither a device node nor a path below /sys" "$T_DIR/nodev" ||
                t_fail "$v /etc/hostname: exit $rc: $(cat "$T_DIR/nodev")"
        ! grep -q "does not exist" "$T_DIR/nodev" || t_fail "$v /etc/hostname: $(cat "$T_DIR/nodev")"
done
"$HOTPLUGCTL" trigger --dry-run /dev/null "$loop" >"$T_DIR/nodes" 2>&1 || t_fail "trigger -n /dev/null $loop: $(cat "$T_DIR/nodes")"
printf '%s\n' /sys/devices/virtual/mem/null "$ldev" | cmp -s - "$T_DIR/nodes" ||
        t_fail "trigger -n /dev/null $loop: $(cat "$T_DIR/nodes")"
echo "ok: test and trigger take /dev/null and $loop; /etc/hostname is said to be no device"

# ---- matches, against the test's own walk of /sys ---------------------------------------
# same NAME ARGS...: trigger --dry-run ARGS lists what sysfs-select.py ARGS selects.
n_checked=0
same() {
        local name=$1
        shift
        "$HOTPLUGCTL" trigger --dry-run "$@" >"$T_DIR/$name.got" 2>"$T_DIR/$name.err" ||
                t_fail "trigger -n $*: $(cat "$T_DIR/$name.err")"
        python3 "$SELECT" "$@" >"$T_DIR/$name.want" || t_fail "sysfs-select.py $* failed"
        sort "$T_DIR/$name.got" | cmp -s - <(sort "$T_DIR/$name.want") ||
                t_fail "trigger -n $*: lists $(wc -l <"$T_DIR/$name.got") devices, sysfs has $(wc -l <"$T_DIR/$name.want"): $(diff <(sort "$T_DIR/$name.got") <(sort "$T_DIR/$name.want") | head -20)"
        [ "${want_some:-1}" = 0 ] || [ -s "$T_DIR/$name.want" ] || t_fail "sysfs-select.py $* selects nothing: a weak check"
        n_checked=$((n_checked + 1))
}
same prop -p "INTERFACE=$a*"
grep -qx "/sys/devices/virtual/net/$a" "$T_DIR/prop.got" || t_fail "-p INTERFACE=$a*: $(cat "$T_DIR/prop.got")"
same propdisk -s block -p "DEVTYPE=disk"
same attr -s net -a "address=02:00:00:00:5e:01"
[ "$(cat "$T_DIR/attr.got")" = "/sys/devices/virtual/net/$a" ] || t_fail "-a address=...: $(cat "$T_DIR/attr.got")"
same attrany -a "ifindex"
same nomatch -s net -A "type=1"
grep -qx /sys/devices/virtual/net/lo "$T_DIR/nomatch.got" || t_fail "-s net -A type=1 leaves out lo (type 772)"
same nomatch2 -s mem -A "dev=1:[35]"
same parent -b "/sys/class/net/$a"
[ "$(head -1 "$T_DIR/parent.got")" = "/sys/devices/virtual/net/$a" ] || t_fail "-b /sys/class/net/$a: $(cat "$T_DIR/parent.got")"
if [ -e /sys/devices/pci0000:00/uevent ]; then
        same parentpci -b /sys/devices/pci0000:00
        same parentpcinet -b /sys/devices/pci0000:00 -s net
fi
same parentnode -b "$loop"
[ "$(head -1 "$T_DIR/parentnode.got")" = "$ldev" ] || t_fail "-b $loop: $(cat "$T_DIR/parentnode.got")"
same name --name-match="$lname"
same together -s 'n*' -a ifindex -A "type=772" -p "INTERFACE=*" -y "$a*"
same subsys -t subsystems -s drivers -y 'e*'
same subsysbus -t subsystems -s subsystem -a drivers_autoprobe=1
same all -t all -y 'p*'
echo "ok: $n_checked match sets equal the test's own walk of /sys"

# ---- --prioritized-subsystem ------------------------------------------------------------
"$HOTPLUGCTL" trigger --dry-run --prioritized-subsystem=net,mem >"$T_DIR/prio" || t_fail "--prioritized-subsystem failed"
"$HOTPLUGCTL" trigger --dry-run >"$T_DIR/plain" || t_fail "trigger -n failed"
sort "$T_DIR/prio" | cmp -s - <(sort "$T_DIR/plain") || t_fail "--prioritized-subsystem lists other devices"
python3 "$SELECT" --check-prioritized net,mem <"$T_DIR/prio" || t_fail "--prioritized-subsystem=net,mem: wrong order"
echo "ok: --prioritized-subsystem=net,mem lists every device, net's then mem's first, each after its ancestors"

# ---- --quiet: a write refused (no permission, as a user) is not named, and still fails ---
if command -v setpriv >/dev/null; then
        for q in "" -q; do
                rc=0
                setpriv --reuid=65534 --regid=65534 --clear-groups "$HOTPLUGCTL" trigger $q -c change /dev/null \
                        >"$T_DIR/user$q" 2>&1 || rc=$?
                [ "$rc" = 1 ] || t_fail "trigger $q as a user: exit $rc: $(cat "$T_DIR/user$q")"
        done
        grep -qx "hotplugctl: trigger: /sys/devices/virtual/mem/null/uevent: Permission denied" "$T_DIR/user" ||
                t_fail "trigger as a user: $(cat "$T_DIR/user")"
        [ ! -s "$T_DIR/user-q" ] || t_fail "trigger -q as a user: $(cat "$T_DIR/user-q")"
        echo "ok: -q leaves out the refused write's message, exit 1 all the same"
fi

# ---- a real trigger through a node ------------------------------------------------------
t_make_agent
t_start_daemon --agent="$T_AGENT" --all
"$HOTPLUGCTL" trigger --settle --verbose -c change --name-match="$lname" >"$T_DIR/real" 2>&1 ||
        t_fail "trigger --settle -c change --name-match=$lname: $(cat "$T_DIR/real")"
uuid=$(awk -v p="$ldev" '$1 == p { print $2 }' "$T_DIR/real")
[ -n "$uuid" ] && [ "$(wc -l <"$T_DIR/real")" = 1 ] || t_fail "trigger --name-match=$lname: $(cat "$T_DIR/real")"
run=$(t_run_with "SYNTH_UUID=$uuid")
[ -n "$run" ] && [ "$(t_env_of "$run" DEVPATH)" = "/devices/virtual/block/$lname" ] &&
        [ "$(t_env_of "$run" ACTION)" = change ] || t_fail "no agent run for $lname's change event (SYNTH_UUID=$uuid)"
echo "ok: trigger --settle -c change --name-match=$lname: the agent ran for $lname's change event"
